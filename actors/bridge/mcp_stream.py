"""One MCP connection over a byte stream, as the SDK's stdio transport frames it: newline-delimited
JSON-RPC, each line at most MAX_LINE, at most MAX_IN_FLIGHT requests worked on at once. The SDK
itself is imported on first use, off the event loop (`import_mcp`).
"""

from __future__ import annotations

import collections
import json
import logging
from typing import TYPE_CHECKING, Any

import trio

from actors.shared.peer import Tracer
from protocol.shared.jsonrpc import LineSplitter, Overlong

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

log = logging.getLogger(__name__)

MAX_LINE = 64 * 1024 * 1024
# Requests of one MCP connection the server is working on or answering at once. The SDK runs a
# task per request, and a client that never reads its answers would otherwise grow one per line
# it sends; at the limit the connection is not read until an answer goes out.
MAX_IN_FLIGHT = 64


def import_mcp() -> None:
    """Import the SDK (about 0.9 s). Run it in a thread, never on the event loop."""
    import mcp.server.lowlevel
    import mcp.server.subscriptions  # noqa: F401


class _InFlight:
    """One MCP connection's requests not answered yet, by id, at most `limit` of them.

    Each request holds a place until an answer with its id goes out (or the client cancels it).
    A client that repeats an id may lose places for good if only one answer comes: its own
    connection then stops being read, which costs nobody else anything.
    """

    def __init__(self, limit: int) -> None:
        self._room = trio.Semaphore(limit)
        self._ids: collections.Counter[Any] = collections.Counter()

    async def started(self, id: Any) -> None:
        """Waits for room (the connection is not read meanwhile)."""
        await self._room.acquire()
        self._ids[id] += 1

    def ended(self, id: Any) -> None:
        if isinstance(id, (int, str)) and self._ids[id] > 0:  # a cancel may name anything at all
            self._ids[id] -= 1
            if not self._ids[id]:
                del self._ids[id]
            self._room.release()


async def serve_mcp(server: Server[Any], stream: trio.abc.Stream, first: bytes, tracer: Tracer | None) -> None:
    """One MCP connection, newline-delimited JSON-RPC, as the SDK's stdio transport frames it."""
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import NotificationOptions
    from mcp.shared.message import SessionMessage

    read_send, read_receive = anyio.create_memory_object_stream[Any](0)
    write_send, write_receive = anyio.create_memory_object_stream[Any](0)
    in_flight = _InFlight(MAX_IN_FLIGHT)

    async def reader() -> None:
        splitter = LineSplitter(MAX_LINE)
        chunk: bytes | bytearray = first
        async with read_send:
            while True:
                for line in splitter.feed(chunk):
                    if isinstance(line, Overlong):
                        log.warning("vscode_tools: line over %d bytes; closing the connection", MAX_LINE)
                        return
                    if line.strip():
                        try:
                            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        except Exception as exc:
                            await read_send.send(exc)
                            continue
                        if tracer is not None:
                            tracer("recv", json.loads(line))
                        if isinstance(message, types.JSONRPCRequest):
                            await in_flight.started(message.id)
                        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
                            in_flight.ended((message.params or {}).get("requestId"))  # the SDK may not answer it
                        await read_send.send(SessionMessage(message))
                try:
                    chunk = await stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                if not chunk:
                    return

    async def writer() -> None:
        async with write_receive:
            async for message in write_receive:
                if isinstance(message.message, (types.JSONRPCResponse, types.JSONRPCError)):
                    in_flight.ended(message.message.id)
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                if tracer is not None:
                    tracer("send", json.loads(data))
                data += "\n"
                try:
                    await stream.send_all(data.encode())
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return

    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        nursery.start_soon(writer)
        await server.run(read_receive, write_send, options)  # closes both streams it is given
        nursery.cancel_scope.cancel()
    with trio.move_on_after(1) as scope:
        scope.shield = True
        await stream.aclose()
