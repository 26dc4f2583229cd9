"""The ToolBridge actor and how agents reach it: the listener, its endpoint, MCP over streams and HTTP."""
