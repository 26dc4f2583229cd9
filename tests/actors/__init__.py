"""Actors in-process: trio loops, stores and streams driven directly (memory streams, real MCP clients)."""
