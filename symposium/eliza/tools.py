"""Eliza's MCP test commands: real MCP client calls to servers given in `session/new`.

The `mcp` SDK costs most of a second to import, so it is imported here, on first use,
never on the backend's start-up path.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

CALL_TIMEOUT = 600.0  # a bridged VS Code tool waits for the user; do not give up early


def _find(servers: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((s for s in servers if isinstance(s, dict) and s.get("name") == name), None)


@asynccontextmanager
async def _connect(server: dict[str, Any]) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    if server.get("type") in ("http", "sse"):
        raise ValueError(f"MCP server '{server.get('name')}' uses {server['type']}, which Eliza does not speak")
    env = dict(os.environ)  # the SDK would otherwise start from a minimal environment
    env.update({var["name"]: var["value"] for var in server.get("env") or []})
    params = StdioServerParameters(command=server["command"], args=list(server.get("args") or []), env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as client:
        yield client


def _errors(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_errors(sub) for sub in exc.exceptions)
    return str(exc) or type(exc).__name__


def render_result(result: Any) -> str:
    chunks = []
    for item in result.content:
        match getattr(item, "type", None):
            case "text":
                chunks.append(item.text)
            case "image":
                chunks.append(f"[image: {item.mime_type}]")
            case other:
                chunks.append(f"[{other} content]")
    text = "\n".join(chunks)
    return f"ERROR: {text}" if result.is_error else f"OK: {text}"


async def list_tools(servers: list[dict[str, Any]], name: str) -> str:
    server = _find(servers, name)
    if server is None:
        return f"ERROR: MCP server '{name}' not found"
    try:
        async with _connect(server) as client:
            tools = (await client.list_tools()).tools
    except Exception as exc:  # noqa: BLE001 - any failure is reported to the user as text
        return f"ERROR: {_errors(exc)}"
    lines = [f"  - {tool.name}: {tool.description or 'No description'}" for tool in tools]
    return "Available tools:\n" + "\n".join(lines)


async def use_tool(servers: list[dict[str, Any]], name: str, tool: str, raw_arguments: str) -> str:
    server = _find(servers, name)
    if server is None:
        return f"ERROR: MCP server '{name}' not found"
    try:
        arguments = json.loads(raw_arguments)
    except ValueError as exc:
        return f"ERROR: Invalid JSON params: {exc}"
    try:
        async with _connect(server) as client:
            result = await client.call_tool(tool, arguments if isinstance(arguments, dict) else None)
    except Exception as exc:  # noqa: BLE001
        return f"ERROR: {_errors(exc)}"
    return render_result(result)
