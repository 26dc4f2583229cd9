"""The ToolBridge actor: VS Code's tools as the synthetic MCP server `vscode_tools`.

One per conversation. The agent reaches it through a stdio `mcpServers` entry whose command
is the application's `Relay` (the backend's is `symposium/mcp_relay.py`); the relay connects
back to the backend and presents the conversation's random secret before any MCP traffic, and
the one `BridgeListener` (`actors/bridge/listener.py`) hands the connection to the bridge the
secret belongs to, which serves it in its own nursery (framed by `actors/bridge/mcp_stream.py`), so a
conversation's connections end with it. The MCP side is the SDK's low-level `Server` with its
handlers registered explicitly. A `tools/call` becomes a `ToolRequested` event (the turn machine's own) on the Session's channel; the
Session answers it with VS Code's tool result (or an error) once VS Code has run the tool. Calls
are taken only while a prompt of the conversation runs (`accept_calls`, the turn machine's
`AcceptToolCalls`); any other is refused at once.
"""

from __future__ import annotations

import contextvars
import logging
import math
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import trio

from actors.bridge.endpoint import Endpoint
from actors.bridge.http_server import HttpEndpoint, new_secret
from actors.bridge.listener import BridgeListener, Handoff, bridge_failure
from actors.bridge.mcp_stream import import_mcp, serve_mcp
from actors.shared import threads
from actors.shared.mailbox import answering, queued
from actors.shared.version import version
from actors.store.transcript import Recorder
from protocol.bridge.mcp_transport import HTTP, Transport, http_entry
from protocol.bridge.tool_names import ToolNames
from protocol.bridge.tool_schema import listable
from protocol.shared.failures import AgentError, FailureKind, failure
from protocol.turn.events import ToolRequested
from protocol.turn.rules import NO_PROMPT_CALL
from protocol.vscode.lm import DataPart, TextPart, Tool, ToolResultPart

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

log = logging.getLogger(__name__)

SERVER_NAME = "vscode_tools"
# Connections one bridge (one conversation's token) serves at once. An agent holds its token, so
# without this bound it could open connections until the backend's descriptors ran out and every
# other conversation failed. A legitimate agent opens one per session it runs the relay in, a few
# more across restarts of its MCP client; further ones are closed at once.
MAX_CONNECTIONS = 16
NOTIFY_TIMEOUT = 5.0  # a client that stopped reading must not wedge the bridge
# How long a prompt waits for a client that listed the tools before they changed to list them again.
# Claude Code does within milliseconds of the notice; one that did not in this time is not waited for again.
RELIST_TIMEOUT = 2.0


@attrs.define(eq=False)
class _Connection:
    session: Any = None  # the SDK's ServerSession, once initialized (2025 protocol)
    listeners: list[Callable[[Any], None]] = attrs.Factory(list)  # 2026 protocol listen streams
    listed: int | None = None  # the tool-list change its client last listed (None: it never listed)
    relists: bool = True  # its client lists again when told of a change (until it once did not, in RELIST_TIMEOUT)

    async def notify_tools_changed(self) -> None:
        from mcp.server.subscriptions import ToolsListChanged

        with trio.move_on_after(NOTIFY_TIMEOUT):
            if self.session is not None:
                await self.session.send_tool_list_changed()
            for deliver in list(self.listeners):
                deliver(ToolsListChanged())


_CONNECTION: contextvars.ContextVar[_Connection] = contextvars.ContextVar("vscode_tools_connection")


def _tool_key(tools: tuple[Tool, ...]) -> tuple[Any, ...]:
    return tuple((t.name, t.description, repr(t.input_schema)) for t in tools)


async def open_bridge(listener: BridgeListener, events: trio.MemorySendChannel[Any], tools: tuple[Tool, ...], *, recorder: Recorder | None = None) -> ToolBridge:
    """A conversation's bridge, offering `tools`, its `tools/call`s sent to `events`.

    It runs in the listener's nursery: every bridge has this one owner, whichever way its
    conversation began (its Session made it, or it came with a spare session made ahead,
    `actors/conversation/spares.py`); whoever holds it closes it. Raises AgentError when the listener
    cannot be opened.
    """
    bridge = ToolBridge(events, listener, recorder=recorder)
    await listener.start(bridge.run, tools)
    return bridge


class ToolBridge:
    def __init__(self, events: trio.MemorySendChannel[Any], listener: BridgeListener, *, recorder: Recorder | None = None) -> None:
        self._events = events
        self._listener = listener
        self._recorder = recorder
        self.token = secrets.token_urlsafe(32)
        self._index = recorder.next_index("mcp") if recorder else 0
        self._accepted = 0
        self._live = 0  # connections taken and not yet closed (at most MAX_CONNECTIONS)
        self._http_secret = new_secret()  # the HTTP entry's bearer token (actors/bridge/http_server.py)
        if recorder is not None:
            recorder.secret(self.token)
            recorder.secret(self._http_secret)
        self._http: HttpEndpoint | None = None  # opened for the first HTTP entry
        self._http_lock = trio.Lock()
        self._nursery: trio.Nursery | None = None  # run's: whatever serves this bridge ends with it
        self.endpoint: Endpoint | None = None  # where the relay connects, once `run` has started
        self.key_path: str | None = None  # the private file holding `token`, for the relay
        self._accepting = False  # a prompt of the conversation runs: `tools/call`s are taken
        self._tools: tuple[Tool, ...] = ()
        self._listed: list[dict[str, Any]] = []  # self._tools as MCP lists them (protocol/bridge/tool_schema.py)
        self._changes = 0  # tool-list changes so far
        self._told = 0  # the last change every connected client was told of
        self._told_event = trio.Event()
        self._listed_event = trio.Event()  # set (and replaced) whenever a client lists the tools
        self._connections: set[_Connection] = set()
        self._updates_send, self._updates = trio.open_memory_channel[int](math.inf)
        self._mcp_server: Server[Any] | None = None
        self._server_lock = trio.Lock()
        self.ended = trio.Event()  # set once `run` has returned: its connections are closed

    # The Session's side --------------------------------------------------------------------

    async def entry_for(self, transport: Transport) -> dict[str, Any]:
        """The `mcpServers` entry for `session/new` in the transport `protocol/bridge/mcp_transport.py`
        chose: `entry()`, or for an agent that takes no stdio server the HTTP one, which carries
        its own secret in a header and opens this bridge's HTTP listener on first use
        (`actors/bridge/http_server.py`). Raises AgentError when that cannot be opened."""
        if transport == HTTP:
            return http_entry(SERVER_NAME, await self._http_url(), self._http_secret)
        return self.entry()

    def entry(self) -> dict[str, Any]:
        """The stdio `mcpServers` entry. No secret in it: an agent may put it on a command line
        (Claude Code's SDK does), where every local user can read it. It names the private file
        holding the secret instead."""
        assert self.endpoint is not None and self.key_path is not None, "the bridge is not running"
        command, *args = self._listener.relay.command
        return {
            "name": SERVER_NAME,
            "command": command,
            "args": [*args, *self.endpoint.args(), "--key", self.key_path],
            "env": [],
        }

    async def _http_url(self) -> str:
        async with self._http_lock:
            if self._http is None:
                assert self._nursery is not None, "the bridge is not running"
                try:
                    server = await self._server()
                except Exception as exc:
                    raise AgentError(failure(FailureKind.BRIDGE_FAILED, f"Cannot start the tool bridge: {type(exc).__name__}")) from None
                recorder, index = self._recorder, self._index
                tracer = recorder.channel(f"mcp {index} http") if recorder is not None else None
                endpoint = HttpEndpoint(server, self._http_secret, lambda: tracer)
                try:
                    await self._nursery.start(endpoint.run)
                except OSError as exc:
                    raise bridge_failure("open the tool bridge's HTTP listener", exc) from None
                self._http = endpoint
            assert self._http.url is not None
            return self._http.url

    def accept_calls(self, accept: bool) -> None:
        """Take `tools/call`s (a prompt runs), or refuse them at once (`NO_PROMPT_CALL`)."""
        self._accepting = accept

    def update_tools(self, tools: tuple[Tool, ...]) -> None:
        """Offer `tools` from now on: a `tools/list` answered after this call lists them.

        Set here, not in the bridge's loop: the Session calls this before the prompt that
        the tools belong to goes out, and the agent may list them the moment it has the
        prompt. Connected clients are told (`list_changed`) by the loop; `announced`
        waits for that.
        """
        if _tool_key(tools) == _tool_key(self._tools):
            return
        self._set_tools(tools)
        self._changes += 1
        try:
            self._updates_send.send_nowait(self._changes)
        except trio.ClosedResourceError:
            self._told = self._changes

    async def announced(self) -> bool:
        """Returns once every client connected was told of the last change (or given up on:
        `NOTIFY_TIMEOUT`), or the bridge closed; and every client that had listed the tools
        before has listed them again (docs/DESIGN.md, "Tool bridge"). Told is not enough: an
        agent re-lists a few milliseconds after the notice, and a prompt sent at once can reach
        its model first, offering the old list (a spare session made with another chat's tools).
        Whether every client that listed the tools has the current ones."""
        target = self._changes
        while self._told < target:
            await self._told_event.wait()
        with trio.move_on_after(RELIST_TIMEOUT):
            while self._stale(target):
                await self._listed_event.wait()
            return True
        for connection in self._stale(target):
            connection.relists = False
            log.info("vscode_tools: a client did not list the tools again after they changed; it is not waited for again")
        return not any(c.listed is not None and c.listed < target for c in self._connections)

    def _stale(self, change: int) -> list[_Connection]:
        """Connected clients that listed the tools before `change` and may list them again."""
        return [c for c in self._connections if c.relists and c.listed is not None and c.listed < change]

    def _tell(self, change: int) -> None:
        self._told = max(self._told, change)
        self._told_event.set()
        self._told_event = trio.Event()

    def _set_tools(self, tools: tuple[Tool, ...]) -> None:
        self._tools = tools
        self._names = ToolNames.of(t.name for t in tools)  # what the agent calls them (docs/DESIGN.md, "Tool names")
        self._listed, problems = listable(tools, self._names)
        for problem in problems:
            log.warning("vscode_tools: %s", problem)

    def close(self) -> None:
        self._updates_send.close()

    def tool_names(self) -> set[str]:
        """The tools' names as the agent knows them."""
        return set(self._names.to_consumer)

    # The actor -----------------------------------------------------------------------------

    async def run(self, tools: tuple[Tool, ...], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Take this conversation's connections from the shared listener, serve them, and follow
        tool updates until closed; then every connection of this bridge ends.

        The SDK is imported (in a thread) only when an agent first connects: many
        conversations never touch a VS Code tool, and the import costs most of a second.
        """
        self._set_tools(tools)
        self.endpoint = await self._listener.endpoint()
        inbox_send, inbox = trio.open_memory_channel[Handoff](math.inf)
        self.key_path = self._listener.register(self.token, inbox_send)
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._take_connections, inbox, nursery)
                task_status.started()
                async for change in self._updates:
                    change = max([change, *queued(self._updates)])  # one notice tells of every change queued
                    async with trio.open_nursery() as notices:
                        for connection in list(self._connections):
                            notices.start_soon(connection.notify_tools_changed)
                    self._tell(change)
                nursery.cancel_scope.cancel()
        finally:
            self._tell(self._changes)  # nobody is left to tell
            self._listener.unregister(self.token)
            inbox_send.close()
            # Connections handed over but not yet taken are this bridge's to close.
            for stream, _ in queued(inbox):
                stream.socket.close()
            inbox.close()
            self.ended.set()

    async def _take_connections(self, inbox: trio.MemoryReceiveChannel[Handoff], nursery: trio.Nursery) -> None:
        async for stream, rest in inbox:
            if self._live >= MAX_CONNECTIONS:
                log.warning("vscode_tools: refused a connection: this conversation already has %d", MAX_CONNECTIONS)
                stream.socket.close()
                continue
            self._live += 1
            nursery.start_soon(self._serve_connection, stream, rest)

    def _build_server(self) -> Server[Any]:
        import mcp.types as types
        from mcp.server.lowlevel import Server
        from mcp.server.subscriptions import ListenHandler

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            listed = types.ListToolsResult.model_validate({"tools": self._listed}, by_name=False)
            if (connection := _CONNECTION.get(None)) is not None:
                connection.listed = self._changes
                self._listed_event.set()
                self._listed_event = trio.Event()
            return listed

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            if not self._accepting:
                return types.CallToolResult(content=[types.TextContent(type="text", text=NO_PROMPT_CALL)], is_error=True)
            name = self._names.consumer(params.name)
            if name is None:
                return types.CallToolResult(content=[types.TextContent(type="text", text=f"tool '{params.name}' not found")], is_error=True)
            handle, reply = answering()  # VS Code's result, or a string error
            await self._events.send(ToolRequested(handle, name, params.arguments))
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
            version=version(),
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
                await threads.run_sync(import_mcp)
                self._mcp_server = self._build_server()
        return self._mcp_server

    async def _serve_connection(self, stream: trio.SocketStream, rest: bytes) -> None:
        try:
            try:
                server = await self._server()
            except Exception:
                log.exception("vscode_tools: cannot serve a connection")
                return
            connection = _Connection()
            _CONNECTION.set(connection)  # inherited by every task the server spawns for it
            self._connections.add(connection)
            self._accepted += 1
            tracer = self._recorder.channel(f"mcp {self._index} {self._accepted}") if self._recorder else None
            try:
                await serve_mcp(server, stream, rest, tracer)
            except Exception:
                log.exception("vscode_tools: connection failed")
            finally:
                self._connections.discard(connection)
        finally:
            self._live -= 1
            await trio.aclose_forcefully(stream)


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
