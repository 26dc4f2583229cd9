"""Minimal MCP stdio echo server (mcp 2.3, low-level Server). For tests.

Tool `echo` {message: string} -> text "Echo: <message>".
Run: python mcp_echo_server.py   (speaks newline-delimited JSON-RPC on stdin/stdout)

Env knobs (only for the client demo's error-path tests; harmless otherwise):
  ECHO_EXTRA_TOOLS=1  -> also serve `fail_rpc` (JSON-RPC error), `crash` (process exits),
                         `whoami_env` (returns $ECHO_GREETING).
"""

import os

import mcp.types as types
import trio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

EXTRA = os.environ.get("ECHO_EXTRA_TOOLS") == "1"

ECHO_TOOL = types.Tool(
    name="echo",
    description="Echo a message back",
    input_schema={
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
)
EXTRA_TOOLS = [
    types.Tool(name=n, input_schema={"type": "object"}) for n in ("fail_rpc", "crash", "whoami_env")
]


async def list_tools(ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO_TOOL, *(EXTRA_TOOLS if EXTRA else [])])


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "echo":
        msg = args.get("message")
        if not isinstance(msg, str):
            return types.CallToolResult(
                content=[types.TextContent(type="text", text="'message' must be a string")], is_error=True
            )
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"Echo: {msg}")])
    if EXTRA and params.name == "fail_rpc":
        raise MCPError(code=types.INTERNAL_ERROR, message="deliberate JSON-RPC error", data={"why": "test"})
    if EXTRA and params.name == "crash":
        os._exit(3)
    if EXTRA and params.name == "whoami_env":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=os.environ.get("ECHO_GREETING", "<unset>"))]
        )
    # Unknown tool: MCPServer's convention is a tool-level error result (isError), not a JSON-RPC error.
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"Unknown tool: {params.name}")], is_error=True
    )


server = Server("echo", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    trio.run(main)
