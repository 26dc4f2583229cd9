"""`Peer`: the trio shell of a newline-delimited JSON-RPC 2.0 connection over any byte stream.

It reads lines, dispatches them and serialises writes; the framing, limits and message
classification it relies on are `protocol/shared/jsonrpc.py`'s plain functions.

Why not trio-jsonrpc: see docs/wire-protocol.md. In short, it has no newline framing, cannot carry
a `null` result, deadlocks when a cancelled request's late reply arrives, and answers a
stray response with an endless error ping-pong. Each of those is a test instead.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable

import trio

from protocol.shared.jsonrpc import (
    DEFAULT_MAX_LINE,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    JSON,
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    Invalid,
    LineSplitter,
    Message,
    Notification,
    Overlong,
    Request,
    Response,
    RpcError,
    classify_object,
    encode_lines,
    error_response,
    id_key,
    is_stray_text,
    parse_line,
    unreadable,
)
from protocol.shared.redact import excerpt as redacted_excerpt

log = logging.getLogger(__name__)

STRAY_LOGGED = 20  # stray text lines of one peer logged as warnings; the rest only at debug level


class ConnectionClosed(Exception):
    """The peer's input ended (or its output broke) before the reply came."""



RequestHandler = Callable[[JSON, JSON], Awaitable[JSON]]  # (params, id)
NotificationHandler = Callable[[JSON], Awaitable[None]]
BatchHandler = Callable[[list[JSON], int], None]  # the params of notifications read together, in order; their lines' bytes
Tracer = Callable[..., None]  # (direction, message, raw line if at hand) → None


class Peer:
    """One end of a JSON-RPC connection: requests both ways, notifications, cancellation.

    Inbound requests each run in their own task (so a slow one never blocks the others) and
    always get exactly one response. Notifications run inline in the reader, in order,
    so handlers must be quick (typically a `send_nowait` to a channel). That ordering is
    what lets an ACP client see every `session/update` before the prompt's own reply.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        name: str,
        max_line: int = DEFAULT_MAX_LINE,
        tracer: Tracer | None = None,
        unreadable_is_fatal: bool = False,
        decode: Callable[[bytes], JSON | Invalid] = parse_line,
        flow: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`unreadable_is_fatal`: a line that is not JSON within our limits ends the connection
        (`failure` says why) instead of being answered with an error. Right for a peer we
        started ourselves (an agent): the line may have been the reply a request waits for,
        so carrying on could leave that request waiting forever. But a line of plain text
        (`is_stray_text`: not even the start of a JSON object or array) is no reply: it is
        logged (the first STRAY_LOGGED, redacted and cut) and skipped.

        `decode`: how a line becomes JSON; `protocol.shared.incremental_json.Decoder` reads long requests at
        the cost of what is new in them.

        `flow`: awaited after each read is handled and before the next: the reader's
        backpressure (an agent's reader waits while its sessions have too much unread,
        `actors/shared/flow.py`). While it waits, nothing more is read: the peer blocks on its writes."""
        self.name = name
        self.unreadable_is_fatal = unreadable_is_fatal
        self.failure: str | None = None  # why the connection was given up, if it was
        self.stray = 0  # plain text lines skipped (see `unreadable_is_fatal`)
        self._stream = stream
        self._splitter = LineSplitter(max_line)
        self._decode = decode
        self._tracer = tracer
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._batch_handlers: dict[str, BatchHandler] = {}
        self._batch: list[JSON] = []  # params of batched notifications read, not yet handed over
        self._batch_method = ""
        self._batch_bytes = 0  # the bytes of the lines of `_batch`
        self._flow = flow
        self._pending: dict[str, trio.MemorySendChannel[Response]] = {}
        self._answered: dict[str, Callable[[Response], None]] = {}  # `request`'s `answered`, by id
        self._inbound: dict[str, trio.CancelScope] = {}
        self._ids = itertools.count()
        self._send_lock = trio.Lock()
        self.eof = trio.Event()

    # Registration ----------------------------------------------------------------------

    def on_request(self, method: str, handler: RequestHandler) -> None:
        self._request_handlers[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        self._notification_handlers[method] = handler

    def on_notifications(self, method: str, handler: BatchHandler) -> None:
        """Handle a notification that comes in floods (an agent's `session/update`) in batches.

        The params of consecutive ones that arrived in one read go to `handler` as one list
        (with the bytes of their lines, for the handler's backpressure), synchronously, before anything read after them is dispatched: the order is the same as
        `on_notification`'s, at one call per read instead of one await per line. An exception
        is logged, as `on_notification`'s are, and costs the rest of that batch.
        """
        self._batch_handlers[method] = handler

    # Outbound --------------------------------------------------------------------------

    def new_id(self) -> int:
        """An id for `request(..., id=...)`, for callers that must know it before sending."""
        return next(self._ids)

    async def request(self, method: str, params: JSON = None, *, id: int | None = None, answered: Callable[[Response], None] | None = None) -> JSON:
        """Send a request and wait for its result; raises RpcError or ConnectionClosed.

        If the caller is cancelled, the pending entry goes away and a late reply is
        logged and dropped: the connection stays healthy. `answered`, if given, takes the
        response in the reader, as it is read: before anything read after it is handled (an
        ACP client learns a prompt ended before it hears what the agent asks next).
        """
        if self.eof.is_set():
            raise ConnectionClosed(f"{self.name}: connection closed")
        if id is None:
            id = self.new_id()
        key = id_key(id)
        send, receive = trio.open_memory_channel[Response](1)
        self._pending[key] = send
        if answered is not None:
            self._answered[key] = answered
        try:
            msg: dict[str, JSON] = {"jsonrpc": "2.0", "id": id, "method": method}
            if params is not None:
                msg["params"] = params
            await self._send(msg)
            try:
                response = await receive.receive()
            except trio.EndOfChannel:
                why = f"gave up the connection: {self.failure}" if self.failure else "connection closed"
                raise ConnectionClosed(f"{self.name}: {why} before {method} was answered") from None
        finally:
            self._pending.pop(key, None)
            self._answered.pop(key, None)
        if response.error is not None:
            raise response.error
        return response.result

    async def notify(self, method: str, params: JSON = None) -> None:
        await self.notify_many([(method, params)])

    async def notify_many(self, notifications: list[tuple[str, JSON]]) -> None:
        """Several notifications in one write: a flood of small ones costs one syscall."""
        messages = []
        for method, params in notifications:
            msg: dict[str, JSON] = {"jsonrpc": "2.0", "method": method}
            if params is not None:
                msg["params"] = params
            messages.append(msg)
        await self._send(*messages)

    async def aclose(self) -> None:
        """Close the underlying stream (the other side sees EOF)."""
        try:
            await self._stream.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    def cancel_inbound(self, id: JSON) -> bool:
        """Cancel the handler of an inbound request; it is answered -32800. False if unknown."""
        scope = self._inbound.get(id_key(id))
        if scope is None:
            return False
        scope.cancel()
        return True

    async def _send(self, *messages: dict[str, JSON]) -> None:
        data = encode_lines(messages)
        async with self._send_lock:
            if self._tracer is not None:
                for msg in messages:
                    self._tracer("send", msg)
            try:
                await self._stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise ConnectionClosed(f"{self.name}: cannot write: {exc}") from None

    async def _send_quietly(self, msg: dict[str, JSON]) -> None:
        try:
            await self._send(msg)
        except ConnectionClosed as exc:
            log.debug("%s", exc)

    # Inbound ---------------------------------------------------------------------------

    async def serve(self) -> None:
        """Read until EOF; returns once every inbound request has been answered."""
        async with trio.open_nursery() as nursery:
            try:
                while True:
                    try:
                        data = await self._stream.receive_some(65536)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        data = b""
                    if not data:
                        break
                    for line in self._splitter.feed(data):
                        if (msg := self._read(line)) is not None:
                            await self._dispatch(line, msg, nursery)
                            if self.failure is not None:
                                break
                    self._hand_over()
                    if self.failure is not None:
                        break
                    if self._flow is not None:
                        await self._flow()
                else:
                    tail = self._splitter.leftover()
                    if tail is not None and (msg := self._read(tail)) is not None:
                        await self._dispatch(tail, msg, nursery)
                    self._hand_over()
            finally:
                self.eof.set()
                for send in list(self._pending.values()):
                    send.close()

    def _read(self, line: bytes | Overlong) -> Message | None:
        """A line as the message to dispatch; None when there is none (a blank line, or a
        notification batched for `on_notifications`, which this takes: no await per line)."""
        if isinstance(line, Overlong):
            return unreadable(line.head, f"line of {line.size} bytes exceeds the limit of {self._splitter.max_line}")
        obj = self._decode(line)
        if type(obj) is Invalid:
            return None if not line.strip() else obj
        if self._tracer is not None and isinstance(obj, dict):
            self._tracer("recv", obj, line)
        if type(obj) is dict and "id" not in obj and type(method := obj.get("method")) is str:
            # The hot path (an agent streaming updates): no classification objects.
            params = obj.get("params")
            if params is None or isinstance(params, (dict, list)):
                if method not in self._batch_handlers:
                    return Notification(method, params)
                if method != self._batch_method:
                    self._hand_over()
                    self._batch_method = method
                self._batch.append(params)
                self._batch_bytes += len(line)
                return None
        return classify_object(obj)

    async def _dispatch(self, line: bytes | Overlong, msg: Message, nursery: trio.Nursery) -> None:
        self._hand_over()  # what was read before this message is handled before it
        match msg:
            case Invalid(reply=reply, reason=reason, unreadable=unreadable):
                excerpt = f"{line.size} bytes" if isinstance(line, Overlong) else repr(redacted_excerpt(line))
                if unreadable and self.unreadable_is_fatal and is_stray_text(line.head if isinstance(line, Overlong) else line):
                    self.stray += 1
                    if self.stray <= STRAY_LOGGED:
                        more = "; further ones are logged at debug level" if self.stray == STRAY_LOGGED else ""
                        log.warning("%s: skipped a line that is not JSON-RPC%s: %s", self.name, more, excerpt)
                    else:
                        log.debug("%s: skipped a line that is not JSON-RPC: %s", self.name, excerpt)
                    return
                if unreadable and self.unreadable_is_fatal:
                    log.warning("%s: unreadable input (%s), giving up the connection: %s", self.name, reason, excerpt)
                    self.failure = reason
                    return
                log.warning("%s: bad input (%s): %s", self.name, reason, excerpt)
                if reply is not None:
                    await self._send_quietly(reply)
            case Response():
                self._deliver(msg)
            case Notification(method=method, params=params):
                await self._handle_notification(method, params)
            case Request():
                key = id_key(msg.id)
                if key in self._inbound:
                    error = RpcError(INVALID_REQUEST, f"Invalid request: id {msg.id!r} is already in use")
                    await self._send_quietly(error_response(msg.id, error))
                    return
                scope = trio.CancelScope()
                self._inbound[key] = scope
                nursery.start_soon(self._handle_request, msg, scope)

    def _hand_over(self) -> None:
        """Give the batched notifications read so far to their handler."""
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        size, self._batch_bytes = self._batch_bytes, 0
        try:
            self._batch_handlers[self._batch_method](batch, size)
        except Exception:
            log.exception("%s: notification handler for %s failed", self.name, self._batch_method)

    def _deliver(self, response: Response) -> None:
        key = id_key(response.id)
        send = self._pending.pop(key, None)
        if send is None:
            log.info("%s: dropped a response for unknown or abandoned request id %r", self.name, response.id)
            return
        if (answered := self._answered.pop(key, None)) is not None:
            try:
                answered(response)
            except Exception:
                log.exception("%s: the handler of the answer to %r failed", self.name, response.id)
        send.send_nowait(response)

    async def _handle_notification(self, method: str, params: JSON) -> None:
        handler = self._notification_handlers.get(method)
        try:
            if handler is not None:
                await handler(params)
            else:
                log.debug("%s: ignored notification %s", self.name, method)
        except Exception:
            log.exception("%s: notification handler for %s failed", self.name, method)

    async def _handle_request(self, request: Request, scope: trio.CancelScope) -> None:
        reply: dict[str, JSON]
        try:
            with scope:
                result = await self._call_handler(request)
                reply = {"jsonrpc": "2.0", "id": request.id, "result": result}
            if scope.cancelled_caught:
                reply = error_response(request.id, RpcError(REQUEST_CANCELLED, "Request cancelled"))
        except RpcError as exc:
            reply = error_response(request.id, exc)
        except trio.Cancelled:
            # The whole peer is being torn down; still answer, briefly.
            with trio.CancelScope(shield=True) as shield:
                shield.deadline = trio.current_time() + 1
                await self._send_quietly(error_response(request.id, RpcError(REQUEST_CANCELLED, "Request cancelled")))
            raise
        except Exception as exc:
            log.exception("%s: handler for %s failed", self.name, request.method)
            reply = error_response(request.id, RpcError(INTERNAL_ERROR, f"Internal error: {exc}"))
        finally:
            self._inbound.pop(id_key(request.id), None)
        await self._send_quietly(reply)

    async def _call_handler(self, request: Request) -> JSON:
        handler = self._request_handlers.get(request.method)
        if handler is not None:
            return await handler(request.params, request.id)
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
