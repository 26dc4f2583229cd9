"""Eliza's MCP test commands: real MCP client calls to servers given in `session/new`.

The `mcp` SDK costs most of a second to import, so it is imported here, on first use,
never on the backend's start-up path.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import trio

from protocol.shared.jsonrpc import LineSplitter, Overlong

CALL_TIMEOUT = 600.0  # a bridged VS Code tool waits for the user; do not give up early
MAX_LINE = 256 * 1024 * 1024  # a server's line longer than this is refused, not read
STOP_GRACE = 2.0  # a server that does not end at stdin EOF is killed after this


def _find(servers: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((s for s in servers if isinstance(s, dict) and s.get("name") == name), None)


@asynccontextmanager
async def _connect(server: dict[str, Any]) -> AsyncIterator[Any]:
    from mcp import Client

    if server.get("type") in ("http", "sse"):
        raise ValueError(f"MCP server '{server.get('name')}' uses {server['type']}, which Eliza does not speak")
    env = dict(os.environ)
    env.update({var["name"]: var["value"] for var in server.get("env") or []})
    # "auto": the newest protocol the server speaks (2026-07-28 discovery, else the handshake),
    # as a current agent would.
    transport = _stdio([server["command"], *(server.get("args") or [])], env)
    async with Client(transport, mode="auto", read_timeout_seconds=CALL_TIMEOUT) as client:
        yield client


@asynccontextmanager
async def _stdio(argv: list[str], env: dict[str, str]) -> AsyncIterator[tuple[Any, Any]]:
    """A stdio MCP server as the SDK's transport streams, framed by our own LineSplitter.

    The SDK's stdio client joins a line's pieces as `buffer + chunk` at every read: a 50 MiB tool
    result (one line) then cost time quadratic in its size, on the backend's event loop, since
    Eliza runs in-process. LineSplitter joins a line's pieces once.
    """
    import anyio
    import mcp.types as types
    from mcp.shared.message import SessionMessage

    process = await trio.lowlevel.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert process.stdin is not None and process.stdout is not None
    read_send, read_receive = anyio.create_memory_object_stream[Any](0)
    write_send, write_receive = anyio.create_memory_object_stream[Any](0)

    async def reader(stdout: trio.abc.ReceiveStream) -> None:
        splitter = LineSplitter(MAX_LINE)
        async with read_send:
            async for chunk in stdout:
                for line in splitter.feed(chunk):
                    if isinstance(line, Overlong):
                        await read_send.send(ValueError(f"MCP server line over {MAX_LINE} bytes"))
                    elif line.strip():
                        try:
                            message: Any = SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
                        except ValueError as exc:
                            message = exc
                        await read_send.send(message)

    async def writer(stdin: trio.abc.SendStream) -> None:
        async with write_receive:
            async for message in write_receive:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    await stdin.send_all(data.encode())
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader, process.stdout)
        nursery.start_soon(writer, process.stdin)
        try:
            yield read_receive, write_send
        finally:
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(process.stdin)  # a stdio server ends at stdin EOF
                with trio.move_on_after(STOP_GRACE):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()
            nursery.cancel_scope.cancel()


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
    except Exception as exc:
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
    except Exception as exc:
        return f"ERROR: {_errors(exc)}"
    return render_result(result)


CALL = re.compile(r"\s*([\w-]+)::([\w-]+) with ")


def parse_calls(text: str) -> tuple[list[tuple[str, str, Any]], bool] | str:
    """`a::x with {json} and b::y with {json}` (together) or `... then ...` (one after the
    other) → ([(server, tool, arguments)], together), or an error."""
    calls = []
    separators: set[str] = set()
    position = 0
    decoder = json.JSONDecoder()
    while True:
        match = CALL.match(text, position)
        if match is None:
            return f"ERROR: expected <server>::<tool> with <json> at {text[position:]!r}"
        try:
            arguments, position = decoder.raw_decode(text, match.end())
        except ValueError as exc:
            return f"ERROR: Invalid JSON params: {exc}"
        calls.append((match[1], match[2], arguments))
        rest = text[position:]
        if not rest.strip():
            if len(separators) > 1:
                return "ERROR: use either 'and' or 'then' between the calls, not both"
            return calls, separators != {"then"}
        separator = next((s for s in (" and ", " then ") if rest.startswith(s)), None)
        if separator is None:
            return f"ERROR: expected 'and' or 'then' before {rest!r}"
        separators.add(separator.strip())
        position += len(separator)


async def use_tools(servers: list[dict[str, Any]], text: str) -> str:
    """Several tool calls, over one connection per server: at once (`and`) or in turn (`then`)."""
    import trio

    parsed = parse_calls(text)
    if isinstance(parsed, str):
        return parsed
    calls, together = parsed
    names = {server for server, _, _ in calls}
    missing = [n for n in names if _find(servers, n) is None]
    if missing:
        return f"ERROR: MCP server '{missing[0]}' not found"
    results: list[str] = [""] * len(calls)
    try:
        async with AsyncExitStack() as stack:
            clients = {n: await stack.enter_async_context(_connect(_find(servers, n))) for n in names}  # type: ignore[arg-type]

            async def call(index: int, server: str, tool: str, arguments: Any) -> None:
                result = await clients[server].call_tool(tool, arguments if isinstance(arguments, dict) else None)
                results[index] = f"{tool}: {render_result(result)}"

            if together:
                async with trio.open_nursery() as nursery:
                    for index, spec in enumerate(calls):
                        nursery.start_soon(call, index, *spec)
            else:
                for index, spec in enumerate(calls):
                    await call(index, *spec)
    except Exception as exc:
        return f"ERROR: {_errors(exc)}"
    return "\n".join(results)
