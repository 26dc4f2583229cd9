"""A conversation's `vscode_tools` over MCP's Streamable HTTP, for agents that take no stdio server.

See "Tool bridge" in `docs/DESIGN.md` and `protocol/bridge/mcp_transport.py` (who gets it). The MCP side is
the SDK's `StreamableHTTPSessionManager` (stateless, JSON answers) around the bridge's own `Server`:
the same tool list and the same `tools/call` path as the stdio relay, calls taken only while a prompt
runs. The SDK's HTTP side is an ASGI app and its servers run on asyncio, so this module hosts it on
trio with h11: HTTP/1.1, keep-alive, one request at a time per connection.

It listens on 127.0.0.1 on a port of the system's choosing, which any local process can reach: a
request must carry `Authorization: Bearer <secret>`, a random secret of this bridge's that only the
agent is given (in `session/new`'s entry, whose `headers` transcripts redact). A request without it
is answered 401 before anything is read of its body, and the secret is never written anywhere (no
log line carries a header).

A connection authenticates before it holds anything the agent needs: until its first request's head
has shown the secret it is only *pending*, with `AUTH_TIMEOUT` to do so, and at most `MAX_PENDING`
are pending at once, the oldest closed to make room for a new one (so any number of idle local
connections cannot keep the agent's own out: its request head arrives as it connects). Only then
does it take one of `MAX_CONNECTIONS` slots, kept while it stays open (keep-alive, each request's
secret checked again, idle at most `HEADER_TIMEOUT`). Bounded like the socket bridge otherwise:
headers within `MAX_HEADER` bytes, bodies within `MAX_BODY` and `HEADER_TIMEOUT`. It runs in the
bridge's nursery: the listener, its connections and the SDK's tasks end with the conversation
(docs/reliability.md, "The HTTP bridge cannot be locked").
"""

from __future__ import annotations

import errno
import hmac
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from actors.shared.peer import Tracer

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
PATH = "/mcp"
MAX_CONNECTIONS = 16  # authenticated connections
MAX_PENDING = 64  # connections that have not shown the secret yet; the oldest goes for a new one
AUTH_TIMEOUT = 3.0  # a new connection's first request line and headers must arrive within this
HEADER_TIMEOUT = 10.0  # an authenticated connection's next request, and each body, must arrive within this
MAX_HEADER = 64 * 1024
MAX_BODY = 4 * 1024 * 1024  # the SDK's own limit for Streamable HTTP bodies
ACCEPT_RETRY = 0.1  # out of file descriptors: accept again after this (connections wait in the backlog)
ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})


def new_secret() -> str:
    return secrets.token_urlsafe(32)


class HttpEndpoint:
    """One bridge's HTTP listener. `run` in the bridge's nursery; `url` once it started."""

    def __init__(self, server: Any, secret: str, tracer: Callable[[], Tracer | None] = lambda: None) -> None:
        self._server = server  # the bridge's MCP `Server`
        self._expected = f"Bearer {secret}".encode()
        self._tracer = tracer
        self._slots = trio.Semaphore(MAX_CONNECTIONS)
        # Pending connections' scopes, oldest first: cancelling one closes its connection.
        self._pending: dict[object, trio.CancelScope] = {}
        self.url: str | None = None

    async def run(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        listeners = await trio.open_tcp_listeners(0, host=HOST)
        port = listeners[0].socket.getsockname()[1]
        # Host and Origin checked too (DNS rebinding): a web page cannot add the header anyway.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{HOST}:{port}", f"localhost:{port}"],
            allowed_origins=[f"http://{HOST}:{port}", f"http://localhost:{port}"],
        )
        manager = StreamableHTTPSessionManager(self._server, json_response=True, stateless=True, security_settings=security, max_request_body_size=MAX_BODY)
        async with manager.run(), trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(self._accept, listener, manager.handle_request, nursery)
            self.url = f"http://{HOST}:{port}{PATH}"
            task_status.started(self.url)

    async def _accept(self, listener: trio.SocketListener, app: Any, nursery: trio.Nursery) -> None:
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as exc:
                    if exc.errno not in ACCEPT_CAPACITY_ERRNOS:
                        raise
                    log.warning("vscode_tools (HTTP): cannot accept a connection now: %s", exc.strerror or exc)
                    await trio.sleep(ACCEPT_RETRY)
                    continue
                if len(self._pending) >= MAX_PENDING:
                    oldest = next(iter(self._pending))
                    self._pending.pop(oldest).cancel()
                    log.info("vscode_tools (HTTP): closed the oldest of %d connections that have not authenticated", MAX_PENDING)
                key = object()
                self._pending[key] = trio.CancelScope(deadline=trio.current_time() + AUTH_TIMEOUT)
                nursery.start_soon(self._connection, stream, app, key)

    async def _connection(self, stream: trio.SocketStream, app: Any, key: object) -> None:
        import h11

        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEADER)
        authenticated = False
        try:
            while True:
                # Pending, the scope `_accept` made (its deadline AUTH_TIMEOUT); once authenticated, HEADER_TIMEOUT.
                waiting = self._pending.get(key) if not authenticated else trio.CancelScope(deadline=trio.current_time() + HEADER_TIMEOUT)
                if waiting is None:
                    return  # closed for a newer connection before it ran
                with waiting:
                    request = await _next_event(conn, stream)
                self._pending.pop(key, None)
                if waiting.cancelled_caught or not isinstance(request, h11.Request):
                    return  # timed out, closed for a newer one, or not HTTP
                if not self._authorized(request.headers):
                    await _respond(conn, stream, 401, {"error": "a bearer token is required"}, ((b"www-authenticate", b"Bearer"),))
                    return
                if not authenticated:
                    try:
                        self._slots.acquire_nowait()
                    except trio.WouldBlock:
                        log.warning("vscode_tools (HTTP): refused a connection: this conversation already has %d", MAX_CONNECTIONS)
                        await _respond(conn, stream, 503, {"error": f"at most {MAX_CONNECTIONS} connections"})
                        return
                    authenticated = True
                with trio.move_on_after(HEADER_TIMEOUT):
                    body = await _read_body(conn, stream)
                    if body is None:
                        await _respond(conn, stream, 413, {"error": "request too large"})
                        return
                if conn.their_state is not h11.DONE or body is None:
                    return  # timed out
                await self._serve(conn, stream, request, body, app)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except (h11.ProtocolError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            log.info("vscode_tools (HTTP): connection ended: %s", type(exc).__name__)
        except Exception:  # one connection fails, never the bridge (no header is in what is logged)
            log.exception("vscode_tools (HTTP): connection failed")
        finally:
            self._pending.pop(key, None)
            if authenticated:
                self._slots.release()
            await trio.aclose_forcefully(stream)

    def _authorized(self, headers: Any) -> bool:
        given = [value for name, value in headers if name == b"authorization"]
        # Compared in constant time; the value is never logged.
        return len(given) == 1 and hmac.compare_digest(given[0], self._expected)

    async def _serve(self, conn: Any, stream: trio.SocketStream, request: Any, body: bytes, app: Callable[..., Awaitable[None]]) -> None:
        import h11

        tracer = self._tracer()
        if tracer is not None and body:
            try:
                tracer("recv", json.loads(body))
            except ValueError:
                pass
        target = request.target.decode("latin-1")
        path, _, query = target.partition("?")
        client = stream.socket.getpeername()
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": request.method.decode("ascii"),
            "scheme": "http", "path": path, "raw_path": path.encode("latin-1"), "query_string": query.encode("latin-1"),
            "root_path": "", "headers": [(name, value) for name, value in request.headers],
            "client": (client[0], client[1]), "server": stream.socket.getsockname()[:2],
        }
        finished = trio.Event()
        given = False
        status: list[Any] = []
        answer = bytearray()

        async def receive() -> dict[str, Any]:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            await finished.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[:] = [message["status"], list(message.get("headers", []))]
            elif message["type"] == "http.response.body":
                if conn.our_state is h11.SEND_RESPONSE:
                    await _send(conn, stream, h11.Response(status_code=status[0], headers=status[1]))
                chunk = message.get("body", b"")
                if chunk:
                    if tracer is not None and len(answer) < MAX_BODY:
                        answer.extend(chunk)
                    await _send(conn, stream, h11.Data(data=chunk))
                if not message.get("more_body", False):
                    await _send(conn, stream, h11.EndOfMessage())
                    finished.set()

        try:
            await app(scope, receive, send)
        except Exception:
            log.exception("vscode_tools (HTTP): cannot serve a request")
            if conn.our_state is h11.SEND_RESPONSE:
                await _respond(conn, stream, 500, {"error": "internal error"})
            return
        finally:
            finished.set()
        if tracer is not None and answer:
            try:
                tracer("send", json.loads(bytes(answer)))
            except ValueError:
                pass


async def _send(conn: Any, stream: trio.SocketStream, event: Any) -> None:
    data = conn.send(event)
    if data:
        await stream.send_all(data)


async def _next_event(conn: Any, stream: trio.SocketStream) -> Any:
    import h11

    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await stream.receive_some(65536)
            conn.receive_data(data)  # b"": the peer closed
            continue
        if event is h11.PAUSED or isinstance(event, h11.ConnectionClosed):
            return None
        return event


async def _read_body(conn: Any, stream: trio.SocketStream) -> bytes | None:
    """The request's body, or None past MAX_BODY."""
    import h11

    body = bytearray()
    while True:
        event = await _next_event(conn, stream)
        if isinstance(event, h11.Data):
            body.extend(event.data)
            if len(body) > MAX_BODY:
                return None
        elif isinstance(event, h11.EndOfMessage):
            return bytes(body)
        else:
            raise h11.RemoteProtocolError("the request ended early")


async def _respond(conn: Any, stream: trio.SocketStream, status: int, body: dict[str, Any], headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    import h11

    if conn.our_state is not h11.SEND_RESPONSE:
        return
    data = json.dumps(body).encode()
    await _send(conn, stream, h11.Response(status_code=status, headers=[(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), (b"connection", b"close"), *headers]))
    await _send(conn, stream, h11.Data(data=data))
    await _send(conn, stream, h11.EndOfMessage())
