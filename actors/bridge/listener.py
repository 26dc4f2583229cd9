"""Where the agents' relays reach the tool bridges: one listener for every conversation.

A listening socket per conversation would cost a file descriptor each, and thousands of
conversations would exhaust the process's limit. So one `BridgeListener` per backend accepts every
relay's connection: on a Unix socket in a private folder, serving this user's processes only, or on
loopback TCP where there are no Unix sockets (`actors/bridge/endpoint.py`). The relay presents its
conversation's random secret as its first line (the secret is a private file there whose path,
never its content, is on the relay's command line); the listener reads it and hands the connection
to the bridge that registered it (`actors/bridge/tool_bridge.py`), which serves it in its own nursery.
"""

from __future__ import annotations

import errno
import hashlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio

from actors.bridge import endpoint as bridge_socket
from actors.bridge.endpoint import Endpoint
from protocol.shared.failures import AgentError, FailureKind, failure, resource_failure

log = logging.getLogger(__name__)

TOKEN_TIMEOUT = 10.0
# Connections read up to their token line at once. More wait in the kernel's backlog, holding
# none of our descriptors: whoever connects and says nothing (any of this user's processes; any
# local user's on the loopback fallback) costs at most this many, each for at most TOKEN_TIMEOUT.
MAX_HANDSHAKES = 16
ACCEPT_RETRY = 0.1  # out of file descriptors: accept again after this (connections wait in the backlog)
ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})


@attrs.frozen
class Relay:
    """How an agent reaches the bridges: the stdio MCP server it starts. `--socket PATH` (or
    `--port PORT`) and `--key FILE` are added: where to connect, and the file holding its
    conversation's secret."""

    command: tuple[str, ...]


# A connection that presented a bridge's token: the stream, and what arrived after the token line.
Handoff = tuple[trio.SocketStream, bytes]


def _token_key(token: str | bytes) -> bytes:
    """Tokens are looked up by digest: a dict lookup never compares secret bytes directly."""
    return hashlib.sha256(token.encode() if isinstance(token, str) else token).digest()


class BridgeListener:
    """The one listener every conversation's ToolBridge is reached through.

    Opened on first use, in the nursery it is given (the backend's), and closed with it (its
    private folder removed). A connection from another user is closed as it is accepted; the
    others are read up to their token line here, in a task bounded by TOKEN_TIMEOUT; then each
    belongs to the bridge that registered the token, or is closed. `unix`: a Unix socket in a
    private folder (the default where the platform has them), else loopback TCP
    (`actors/bridge/endpoint.py`).
    """

    def __init__(self, nursery: trio.Nursery, relay: Relay, *, unix: bool = bridge_socket.UNIX_SOCKETS) -> None:
        self._nursery = nursery
        self.relay = relay
        self._unix = unix
        self._bridges: dict[bytes, trio.MemorySendChannel[Handoff]] = {}
        self._keys: dict[bytes, str] = {}  # token digest → its key file
        self._endpoint: Endpoint | None = None
        self._folder: str | None = None
        self._opening = trio.Lock()
        self._handshakes = trio.Semaphore(MAX_HANDSHAKES)  # taken before accept, given back by _route

    def __len__(self) -> int:
        """Bridges registered now (one per live conversation)."""
        return len(self._bridges)

    async def endpoint(self) -> Endpoint:
        """Where relays connect, opening the listener if it is not open yet.

        Raises AgentError when it cannot be opened (out of descriptors, say): that
        conversation's request fails saying so, and the next one tries again.
        """
        async with self._opening:
            if self._endpoint is None:
                folder: str | None = None
                try:
                    folder = bridge_socket.private_folder(self._unix)
                    listener, endpoint = await bridge_socket.open_listener(folder, self._unix)
                except OSError as exc:
                    if folder is not None:
                        bridge_socket.remove_folder(folder)
                    raise bridge_failure("open the tool bridge's listener", exc) from None
                self._folder, self._endpoint = folder, endpoint
                self._nursery.start_soon(self._accept, listener, folder, name="vscode_tools listener")
        return self._endpoint

    async def start(self, run: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Start a bridge's `run` in the listener's nursery (`tool_bridge.open_bridge`): every bridge
        has this one owner, whichever way its conversation began."""
        await self._nursery.start(run, *args)

    def register(self, token: str, inbox: trio.MemorySendChannel[Handoff]) -> str:
        """Connections presenting `token` go to `inbox` from now on. Returns the path of the
        private file holding it, for the relay's command line (once `endpoint` has returned).
        Raises AgentError when the file cannot be written."""
        assert self._folder is not None, "the listener is not open"
        try:
            path = bridge_socket.write_key(self._folder, token)  # a few bytes, in a private folder
        except OSError as exc:
            raise bridge_failure("write the tool bridge's key", exc) from None
        self._keys[_token_key(token)] = path
        self._bridges[_token_key(token)] = inbox
        return path

    def unregister(self, token: str) -> None:
        """A released token: refused from now on, its key file removed."""
        self._bridges.pop(_token_key(token), None)
        path = self._keys.pop(_token_key(token), None)
        if path is not None:
            bridge_socket.remove(path)

    async def _accept(self, listener: trio.SocketListener, folder: str) -> None:
        try:
            async with listener:
                while True:
                    await self._handshakes.acquire()
                    try:
                        stream = await listener.accept()
                    except OSError as exc:
                        self._handshakes.release()
                        if exc.errno not in ACCEPT_CAPACITY_ERRNOS:
                            raise
                        # The connection waits in the kernel's backlog; conversations ending free descriptors.
                        log.warning("vscode_tools: cannot accept a connection now: %s", exc.strerror or exc)
                        await trio.sleep(ACCEPT_RETRY)
                        continue
                    if (why := bridge_socket.refusal(stream)) is not None:
                        self._handshakes.release()
                        log.warning("vscode_tools: refused a connection: %s", why)
                        stream.socket.close()
                        continue
                    self._nursery.start_soon(self._route, stream, name="vscode_tools token")
        finally:
            self._keys.clear()
            bridge_socket.remove_folder(folder)

    async def _route(self, stream: trio.SocketStream) -> None:
        """Read the token line and hand the connection to its bridge; close it otherwise."""
        try:
            token, rest = await _read_token(stream)
            inbox = self._bridges.get(_token_key(token))
            if inbox is None:
                raise ValueError("wrong token")
            inbox.send_nowait((stream, rest))
        except (ValueError, trio.TooSlowError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            # ClosedResourceError/BrokenResourceError also cover a bridge that closed meanwhile.
            log.warning("vscode_tools: refused a connection: %s", str(exc) or type(exc).__name__)
            await trio.aclose_forcefully(stream)
        finally:
            self._handshakes.release()


def bridge_failure(doing: str, exc: OSError) -> AgentError:
    """What a listener or key file that cannot be made fails a conversation with."""
    exhausted = resource_failure(doing, exc)
    return AgentError(exhausted or failure(FailureKind.BRIDGE_FAILED, f"Cannot {doing}: {exc}"))


async def _read_token(stream: trio.SocketStream) -> tuple[bytes, bytes]:
    data = b""
    with trio.fail_after(TOKEN_TIMEOUT):
        while b"\n" not in data:
            chunk = await stream.receive_some(1024)
            if not chunk or len(data) > 1024:
                raise ValueError("no token line")
            data += chunk
    token, _, rest = data.partition(b"\n")
    return token.strip(), rest
