"""The ToolBridge actor: VS Code's tools as the synthetic MCP server `vscode_tools` (DESIGN §6).

One per conversation. The agent reaches it through a stdio `mcpServers` entry whose command
is `symposium.mcp_relay`; the relay connects back here on 127.0.0.1 and presents the
conversation's random token before any MCP traffic. The MCP side is the SDK's low-level
`Server` with its handlers registered explicitly. A `tools/call` becomes a `ToolCalled`
event on the Session's channel; the Session answers it with VS Code's tool result (or an
error) once VS Code has run the tool.
"""

from __future__ import annotations

import contextvars
import hmac
import json
import logging
import math
import secrets
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import trio

from actors.messages import AgentError, resource_failure, session_failure
from protocol.jsonrpc import Tracer
from protocol.transcript import Recorder
from protocol.lm import DataPart, TextPart, Tool, ToolResultPart
from symposium.mcp_relay import TOKEN_ENV

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

log = logging.getLogger(__name__)

SERVER_NAME = "vscode_tools"
TOKEN_TIMEOUT = 10.0
MAX_LINE = 64 * 1024 * 1024
NOTIFY_TIMEOUT = 5.0  # a client that stopped reading must not wedge the bridge


def import_mcp() -> None:
    """Import the SDK (about 0.9 s). Run it in a thread, never on the event loop."""
    import mcp.server.lowlevel  # noqa: F401
    import mcp.server.subscriptions  # noqa: F401


@attrs.frozen
class ToolCalled:
    """The agent called a VS Code tool; `answer` with VS Code's result, or a string error."""

    name: str
    arguments: dict[str, Any] | None
    reply: trio.MemorySendChannel[ToolResultPart | str] = attrs.field(eq=False)

    def answer(self, outcome: ToolResultPart | str) -> None:
        try:
            self.reply.send_nowait(outcome)
        except (trio.BrokenResourceError, trio.ClosedResourceError, trio.WouldBlock):
            pass  # the agent gave up on the call


@attrs.define(eq=False)
class _Connection:
    session: Any = None  # the SDK's ServerSession, once initialized (2025 protocol)
    listeners: list[Callable[[Any], None]] = attrs.Factory(list)  # 2026 protocol listen streams

    async def notify_tools_changed(self) -> None:
        from mcp.server.subscriptions import ToolsListChanged

        with trio.move_on_after(NOTIFY_TIMEOUT):
            if self.session is not None:
                await self.session.send_tool_list_changed()
            for deliver in list(self.listeners):
                deliver(ToolsListChanged())


_CONNECTION: contextvars.ContextVar[_Connection] = contextvars.ContextVar("vscode_tools_connection")


def _schema(tool: Tool) -> dict[str, Any]:
    return tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}


def _tool_key(tools: tuple[Tool, ...]) -> tuple[Any, ...]:
    return tuple((t.name, t.description, repr(t.input_schema)) for t in tools)


class ToolBridge:
    def __init__(self, events: trio.MemorySendChannel[Any], *, recorder: Recorder | None = None) -> None:
        self._events = events
        self._recorder = recorder
        self.token = secrets.token_urlsafe(32)
        self._index = recorder.next_index("mcp") if recorder else 0
        self._accepted = 0
        if recorder is not None:
            recorder.secret(self.token)
        self.port: int | None = None
        self._tools: tuple[Tool, ...] = ()
        self._connections: set[_Connection] = set()
        self._updates_send, self._updates = trio.open_memory_channel[tuple[Tool, ...]](math.inf)
        self._mcp_server: Server[Any] | None = None
        self._server_lock = trio.Lock()

    # The Session's side --------------------------------------------------------------------

    def entry(self) -> dict[str, Any]:
        """The `mcpServers` entry for `session/new`."""
        return {
            "name": SERVER_NAME,
            "command": sys.executable,
            "args": ["-m", "symposium.mcp_relay", "--port", str(self.port)],
            "env": [{"name": TOKEN_ENV, "value": self.token}],
        }

    def update_tools(self, tools: tuple[Tool, ...]) -> None:
        try:
            self._updates_send.send_nowait(tools)
        except trio.ClosedResourceError:
            pass

    def close(self) -> None:
        self._updates_send.close()

    def tool_names(self) -> set[str]:
        return {t.name for t in self._tools}

    # The actor -----------------------------------------------------------------------------

    async def run(self, tools: tuple[Tool, ...], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen on loopback, serve connections, and follow tool updates until closed.

        The SDK is imported (in a thread) only when an agent first connects: many
        conversations never touch a VS Code tool, and the import costs most of a second.
        """
        self._tools = tools
        try:
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        except OSError as exc:
            failure = resource_failure("open the conversation's tool bridge", exc)
            raise AgentError(failure or session_failure(f"Cannot open the conversation's tool bridge: {exc}", kind="bridge_failed")) from None
        self.port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.serve_listeners, self._serve_connection, listeners)
            task_status.started()
            async for tools in self._updates:
                if _tool_key(tools) != _tool_key(self._tools):
                    self._tools = tools
                    for connection in list(self._connections):
                        nursery.start_soon(connection.notify_tools_changed)
            nursery.cancel_scope.cancel()

    def _build_server(self) -> Server[Any]:
        import mcp.types as types
        from mcp.server.lowlevel import Server
        from mcp.server.subscriptions import ListenHandler

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(
                tools=[types.Tool(name=t.name, description=t.description or None, input_schema=_schema(t)) for t in self._tools]
            )

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            if params.name not in self.tool_names():
                return types.CallToolResult(content=[types.TextContent(type="text", text=f"tool '{params.name}' not found")], is_error=True)
            reply_send, reply = trio.open_memory_channel[ToolResultPart | str](1)
            await self._events.send(ToolCalled(params.name, params.arguments, reply_send))
            try:
                outcome = await reply.receive()
            except trio.EndOfChannel:
                outcome = "the conversation ended before VS Code ran the tool"
            if isinstance(outcome, str):
                return types.CallToolResult(content=[types.TextContent(type="text", text=outcome)], is_error=True)
            return types.CallToolResult(content=_mcp_content(outcome))

        async def initialized(ctx: Any, params: Any) -> None:
            connection = _CONNECTION.get(None)
            if connection is not None:
                connection.session = ctx.session

        server: Server[Any] = Server(
            SERVER_NAME,
            version="0.1.0",
            instructions="Tools of the VS Code window this conversation runs in.",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_subscriptions_listen=ListenHandler(_ConnectionBus(self)),
        )
        server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
        return server

    async def _server(self) -> Server[Any]:
        async with self._server_lock:
            if self._mcp_server is None:
                await trio.to_thread.run_sync(import_mcp)
                self._mcp_server = self._build_server()
        return self._mcp_server

    async def _serve_connection(self, stream: trio.SocketStream) -> None:
        try:
            rest = await self._check_token(stream)
        except (ValueError, trio.TooSlowError, trio.BrokenResourceError) as exc:
            log.warning("vscode_tools: refused a connection: %s", exc)
            await stream.aclose()
            return
        try:
            server = await self._server()
        except Exception:  # noqa: BLE001 - e.g. no thread for the import: this connection fails, not the bridge
            log.exception("vscode_tools: cannot serve a connection")
            await stream.aclose()
            return
        connection = _Connection()
        _CONNECTION.set(connection)  # inherited by every task the server spawns for it
        self._connections.add(connection)
        self._accepted += 1
        tracer = self._recorder.channel(f"mcp {self._index} {self._accepted}") if self._recorder else None
        try:
            await _serve_mcp(server, stream, rest, tracer)
        except Exception:
            log.exception("vscode_tools: connection failed")
        finally:
            self._connections.discard(connection)

    async def _check_token(self, stream: trio.SocketStream) -> bytes:
        data = b""
        with trio.fail_after(TOKEN_TIMEOUT):
            while b"\n" not in data:
                chunk = await stream.receive_some(1024)
                if not chunk or len(data) > 1024:
                    raise ValueError("no token line")
                data += chunk
        token, _, rest = data.partition(b"\n")
        if not hmac.compare_digest(token.strip(), self.token.encode()):
            raise ValueError("wrong token")
        return rest


class _ConnectionBus:
    """Routes 2026-protocol `subscriptions/listen` streams to the connection that opened them."""

    def __init__(self, bridge: ToolBridge) -> None:
        self._bridge = bridge

    async def publish(self, event: Any) -> None:
        for connection in list(self._bridge._connections):
            for deliver in list(connection.listeners):
                deliver(event)

    def subscribe(self, listener: Callable[[Any], None]) -> Callable[[], None]:
        connection = _CONNECTION.get()
        connection.listeners.append(listener)
        return lambda: connection.listeners.remove(listener) if listener in connection.listeners else None


def _mcp_content(result: ToolResultPart) -> list[Any]:
    import mcp.types as types

    content: list[Any] = []
    for item in result.content:
        if isinstance(item, TextPart):
            content.append(types.TextContent(type="text", text=item.value))
        elif isinstance(item, DataPart) and item.mime_type.startswith("image/"):
            content.append(types.ImageContent(type="image", data=item.data, mime_type=item.mime_type))
        elif isinstance(item, DataPart):
            content.append(types.TextContent(type="text", text=f"[{item.mime_type} data]"))
    return content or [types.TextContent(type="text", text="")]


async def _serve_mcp(server: Server[Any], stream: trio.abc.Stream, first: bytes, tracer: Tracer | None) -> None:
    """One MCP connection, newline-delimited JSON-RPC, as the SDK's stdio transport frames it."""
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import NotificationOptions
    from mcp.shared.message import SessionMessage

    read_send, read_receive = anyio.create_memory_object_stream[Any](0)
    write_send, write_receive = anyio.create_memory_object_stream[Any](0)

    async def reader() -> None:
        buffer = first
        async with read_send:
            while True:
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        try:
                            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        except Exception as exc:  # noqa: BLE001 - the server logs and skips it
                            await read_send.send(exc)
                            continue
                        if tracer is not None:
                            tracer("recv", json.loads(line))
                        await read_send.send(SessionMessage(message))
                if len(buffer) > MAX_LINE:
                    log.warning("vscode_tools: line over %d bytes; closing the connection", MAX_LINE)
                    return
                try:
                    chunk = await stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                if not chunk:
                    return
                buffer += chunk

    async def writer() -> None:
        async with write_receive:
            async for message in write_receive:
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
