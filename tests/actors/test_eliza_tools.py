"""Eliza's MCP test commands, against a real stdio MCP server (the SDK's low-level Server)."""

from __future__ import annotations

import sys
from pathlib import Path

import trio


async def test_eliza_lists_and_calls_tools_of_an_mcp_server_from_session_new() -> None:
    """Eliza's test commands are real MCP client calls (here to a stdio echo server)."""
    from symposium.eliza.tools import list_tools, use_tool

    echo = {"name": "test", "command": sys.executable, "args": [str(Path(__file__).parents[1] / "support" / "mcp_echo_server.py")], "env": []}
    with trio.fail_after(30):
        listed = await list_tools([echo], "test")
        used = await use_tool([echo], "test", "echo", '{"message": "Hello from test!"}')
        missing = await list_tools([echo], "nope")
        bad = await use_tool([echo], "test", "echo", "{not json")
    assert listed == "Available tools:\n  - echo: Echo a message back"
    assert used == "OK: Echo: Hello from test!"
    assert missing == "ERROR: MCP server 'nope' not found"
    assert bad.startswith("ERROR: Invalid JSON params")
