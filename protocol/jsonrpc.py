"""Newline-delimited JSON-RPC 2.0 over any trio byte stream.

One JSON object per line, in both directions, as the VS Code extension, ACP agents and
MCP stdio servers all speak it. The framing and message classification are plain
functions (`LineSplitter`, `classify`) with no I/O; `Peer` is the thin trio shell that
reads lines, dispatches them and serialises writes.

Why not trio-jsonrpc: see docs/wire-protocol.md. In short, it has no newline framing, cannot carry
a `null` result, deadlocks when a cancelled request's late reply arrives, and answers a
stray response with an endless error ping-pong. Each of those is a test here instead.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import re
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio

from protocol.redact import excerpt as redacted_excerpt

log = logging.getLogger(__name__)

JSON = Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000
REQUEST_CANCELLED = -32800

DEFAULT_MAX_LINE = 64 * 1024 * 1024
MAX_DEPTH = 256  # JSON nesting; far beyond any real message, far below Python's recursion limit
HEAD = 4096  # what is kept of a line that cannot be parsed, to find its request id


class RpcError(Exception):
    """An error that travels as a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: JSON = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, JSON]:
        error: dict[str, JSON] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_json(cls, error: JSON) -> RpcError:
        if isinstance(error, dict):
            code = error.get("code")
            return cls(
                code if isinstance(code, int) else INTERNAL_ERROR,
                str(error.get("message", "")),
                error.get("data"),
            )
        return cls(INTERNAL_ERROR, f"malformed error object: {error!r}")


class ConnectionClosed(Exception):
    """The peer's input ended (or its output broke) before the reply came."""


# ---------------------------------------------------------------------------------------
# Pure framing and classification


@attrs.frozen
class Overlong:
    """Stands in for a line that exceeded the bound; its bytes were discarded but the first
    `HEAD`, where a request's id usually is, so the request can still be answered."""

    size: int
    head: bytes = attrs.field(default=b"", eq=False)


class LineSplitter:
    """Cuts a byte stream into lines, discarding (and reporting) lines over `max_line`.

    Memory stays bounded by `max_line` whatever the peer sends. A line that comes in many
    reads (a long chat request) is kept as the pieces it came in and joined once, so it is
    copied once.
    """

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self._pieces: list[bytes] = []  # the unfinished line
        self._size = 0  # its length
        self._discarding = 0  # bytes of an overlong line dropped so far, 0 if none
        self._head = b""  # the start of the line being discarded

    def feed(self, data: bytes) -> list[bytes | Overlong]:
        if not self._discarding and self._size + len(data) <= self.max_line:
            # Every line within the bound (all but always): cut in C, no loop per line.
            if b"\n" not in data:
                self._add(data)
                return []
            lines: list[bytes] = data.split(b"\n")
            if self._pieces:
                lines[0] = b"".join((*self._pieces, lines[0]))
                self._pieces.clear()
            self._size = 0
            self._add(lines.pop())
            return lines  # type: ignore[return-value]
        return self._feed_bounded(data)

    def _feed_bounded(self, data: bytes) -> list[bytes | Overlong]:
        out: list[bytes | Overlong] = []
        start = 0
        while (nl := data.find(b"\n", start)) >= 0:
            out.append(self._end(data[start:nl]))
            start = nl + 1
        self._add(data[start:] if start else data)
        return out

    def leftover(self) -> bytes | Overlong | None:
        """What remains at end of input: an unterminated last line, if any."""
        if self._discarding:
            return Overlong(self._discarding, self._head)
        line = b"".join(self._pieces)
        return line if line.strip() else None

    def _end(self, last: bytes) -> bytes | Overlong:
        """The line that `last` ends."""
        line: bytes | Overlong
        if self._discarding:
            line = Overlong(self._discarding + len(last), self._head)
        elif self._size + len(last) > self.max_line:
            line = Overlong(self._size + len(last), _start_of((*self._pieces, last)))
        else:
            line = b"".join((*self._pieces, last)) if self._pieces else last
        self._pieces.clear()
        self._size = self._discarding = 0
        self._head = b""
        return line

    def _add(self, rest: bytes) -> None:
        if self._discarding:
            self._discarding += len(rest)
        elif self._size + len(rest) > self.max_line:
            self._discarding = self._size + len(rest)
            self._head = _start_of((*self._pieces, rest))
            self._pieces.clear()
            self._size = 0
        elif rest:
            self._pieces.append(rest)
            self._size += len(rest)


def _start_of(pieces: tuple[bytes, ...]) -> bytes:
    """The first `HEAD` bytes of what `pieces` make, where a request's id usually is."""
    head = b""
    for piece in pieces:
        head += piece[: HEAD - len(head)]
        if len(head) >= HEAD:
            break
    return head


@attrs.frozen
class Request:
    id: JSON
    method: str
    params: JSON


@attrs.frozen
class Notification:
    method: str
    params: JSON


@attrs.frozen
class Response:
    id: JSON
    result: JSON = None
    error: RpcError | None = None


@attrs.frozen
class Invalid:
    """A line that is not a usable message; `reply` is the error response to send, if any.

    `unreadable`: the line is not JSON within our limits at all (as opposed to JSON that is
    not a usable message), so nothing in it can be trusted, not even which request it answers.
    """

    reply: dict[str, JSON] | None
    reason: str
    unreadable: bool = False


Message = Request | Notification | Response | Invalid


def error_response(id: JSON, error: RpcError) -> dict[str, JSON]:
    return {"jsonrpc": "2.0", "id": id, "error": error.to_json()}


def _valid_id(value: JSON) -> bool:
    # JSON-RPC ids are strings or numbers (null only in error replies); bool is not a number.
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


# Parsing within limits. Whatever a peer sends, parsing neither recurses without bound nor
# yields values that cannot be written back: nesting is bounded, non-finite numbers are
# refused, and lone surrogates (which cannot be encoded as UTF-8) are replaced.

_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_DEPTH_STEP = [0] * 256
_DEPTH_STEP[ord("[")] = _DEPTH_STEP[ord("{")] = 1
_DEPTH_STEP[ord("]")] = _DEPTH_STEP[ord("}")] = -1
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # after decoding, paired surrogates are one character
REPLACEMENT = "\ufffd"


def nesting_depth(line: bytes, limit: int | None = None) -> int:
    """How deeply a line of JSON nests its arrays and objects, without parsing it; with a
    `limit`, a depth within it may be given as a bound (at most `limit`) found more cheaply.

    Brackets inside strings do not count. Every step runs in C, costing about what
    `json.loads` does on the same line (less for plain text): escaped backslashes and
    quotes are dropped (left to right, as JSON reads escapes), then everything but brackets
    and quotes; `""` pairs go (an empty string, or one string's end next to the next one's
    start); what is left inside quotes is brackets within strings, dropped by keeping every
    other piece.
    """
    if b"\\" in line:
        line = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = line.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in structure:
        structure = b"".join(structure.split(b'"')[::2])
    if limit is not None:
        # Each pass drops the innermost empty pairs, lowering the depth by at most one; what
        # is left opens at most so many more. Real messages collapse in a few passes.
        collapsed, passes = structure, 0
        while passes < 16 and (shorter := collapsed.replace(b"[]", b"").replace(b"{}", b"")) != collapsed:
            collapsed, passes = shorter, passes + 2  # two replacements: the depth drops by two at most
        if (bound := collapsed.count(b"[") + collapsed.count(b"{") + passes) <= limit:
            return bound
    return max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, structure)), default=0)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


# Refuses NaN and ±Infinity literals and numbers too large for a double (which would become
# inf, and be written back as the invalid literal `Infinity`). Integers keep Python's own
# bound on digits (a ValueError beyond 4,300).
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
_decode = _DECODER.decode
_scan = _DECODER.scan_once  # the C scanner `decode` wraps; a line it reads whole needs no more


def _decode_line(text: str) -> JSON:
    """`_decode`, at about half the cost for a line that is one JSON value and nothing else:
    the scanner is called directly, and anything else (whitespace around the value, an
    error) goes through `_decode`, which reads or refuses it exactly as before."""
    try:
        obj, end = _scan(text, 0)
    except (StopIteration, ValueError, RecursionError):
        return _decode(text)
    return obj if end == len(text) else _decode(text)

_QUOTED = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_MEMBER = re.compile(
    rb"\s*(" + _QUOTED + rb")\s*:\s*(" + _QUOTED + rb"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)\s*([,}])"
)


def request_id_in(head: bytes) -> JSON:
    """The id of a request line that cannot be parsed as a whole (too long, too deep, broken
    further on), read from its first top-level members; None if it cannot be read.

    Only members before the first nested value are read (`{"jsonrpc", "id", "method",
    "params": ...}` is how clients write them), and only a line that names a method counts:
    answering a broken *response* would start an error ping-pong.
    """
    start = head.find(b"{")
    if start < 0 or head[:start].strip():
        return None
    members: dict[str, bytes] = {}
    position = start + 1
    while (member := _MEMBER.match(head, position)) is not None:
        try:
            members[_DECODER.decode(member[1].decode())] = member[2]
        except (ValueError, UnicodeDecodeError):
            return None
        position = member.end()
        if member[3] == b"}":
            break
    if "method" not in members or "id" not in members:
        return None
    try:
        id = _DECODER.decode(members["id"].decode())
    except (ValueError, UnicodeDecodeError):
        return None
    if not _valid_id(id) or (isinstance(id, str) and _LONE_SURROGATE.search(id)):
        return None
    return id


def _unreadable(line: bytes, problem: str) -> Invalid:
    reply = error_response(request_id_in(line[:HEAD]), RpcError(PARSE_ERROR, f"Parse error: {problem}"))
    return Invalid(reply, problem, unreadable=True)


def replace_lone_surrogates(value: JSON, path: str, found: list[str]) -> JSON:
    """`value` with every lone surrogate replaced by U+FFFD; the wire paths changed go in `found`.

    Clients written in JavaScript produce them by cutting a string inside a surrogate pair
    (a truncated tool result, say); they encode no character, and refusing them would fail
    every later request that carries the same history.
    """
    if isinstance(value, str):
        if _LONE_SURROGATE.search(value) is None:
            return value
        found.append(path or "(the message)")
        return _LONE_SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, (str, list, dict)):
                value[index] = replace_lone_surrogates(item, f"{path}[{index}]", found)
        return value
    if isinstance(value, dict):
        if any(_LONE_SURROGATE.search(key) for key in value):
            value = {_LONE_SURROGATE.sub(REPLACEMENT, key): item for key, item in value.items()}
            found.append(f"{path} (a member name)" if path else "(a member name)")
        for key, item in value.items():
            if isinstance(item, (str, list, dict)):
                value[key] = replace_lone_surrogates(item, f"{path}.{key}" if path else key, found)
        return value
    return value


def parse_line(line: bytes) -> JSON | Invalid:
    """One line as JSON within our limits, or the `Invalid` (unreadable) it deserves.

    Cheap on the hot path (short lines of streamed updates): the depth is only measured
    when the line has more opening brackets than the limit, and strings are only searched
    for lone surrogates when the line has a surrogate escape.
    """
    if len(line) > 2 * MAX_DEPTH and line.count(b"[") + line.count(b"{") > MAX_DEPTH and (depth := nesting_depth(line, MAX_DEPTH)) > MAX_DEPTH:
        return _unreadable(line, f"nesting {depth} deep exceeds the limit of {MAX_DEPTH}")
    try:
        obj = _decode_line(line.decode())
    except UnicodeDecodeError as exc:
        return _unreadable(line, f"invalid UTF-8 at byte {exc.start}")
    except RecursionError:
        return _unreadable(line, "nesting too deep")
    except ValueError as exc:
        problem = str(exc)
        if problem.startswith("Exceeds the limit"):
            problem = "an integer of more than 4,300 digits"
        return _unreadable(line, problem)
    if b"\\u" in line and (b"\\ud" in line or b"\\uD" in line):
        found: list[str] = []
        obj = replace_lone_surrogates(obj, "", found)
        if found:
            if isinstance(obj, dict) and "id" in found:
                reply = error_response(None, RpcError(INVALID_REQUEST, "Invalid request: id: contains a lone surrogate"))
                return Invalid(reply, "a lone surrogate in the id")
            log.warning("replaced lone surrogates (they encode no character) with U+FFFD at %s", ", ".join(found[:5]))
    return obj


def classify(line: bytes) -> Message:
    """Turn one line into a message, or into the error reply the line deserves."""
    obj = parse_line(line)
    return obj if isinstance(obj, Invalid) else classify_object(obj)


def classify_object(obj: JSON) -> Message:
    if not isinstance(obj, dict):
        what = "batch requests are not supported" if isinstance(obj, list) else "a message must be a JSON object"
        return Invalid(error_response(None, RpcError(INVALID_REQUEST, f"Invalid request: {what}")), what)
    if "method" in obj:
        method = obj["method"]
        params = obj.get("params")
        has_id = "id" in obj
        id = obj.get("id")
        if not isinstance(method, str):
            reply = error_response(id if has_id and _valid_id(id) else None,
                                   RpcError(INVALID_REQUEST, "Invalid request: method must be a string"))
            return Invalid(reply, "method is not a string")
        if has_id and not _valid_id(id):
            return Invalid(error_response(None, RpcError(INVALID_REQUEST, "Invalid request: bad id")), "bad id")
        if params is not None and not isinstance(params, (dict, list)):
            if has_id:
                reply = error_response(id, RpcError(INVALID_PARAMS, "Invalid params: params must be an object or array"))
                return Invalid(reply, "params not structured")
            return Invalid(None, f"notification {method} with unstructured params")
        return Request(id, method, params) if has_id else Notification(method, params)
    if "id" in obj and ("result" in obj or "error" in obj):
        if "error" in obj and obj["error"] is not None:
            return Response(obj["id"], error=RpcError.from_json(obj["error"]))
        return Response(obj["id"], result=obj.get("result"))
    if "id" in obj:
        # A reply with neither result nor error still ends the request it names (a request left
        # waiting would never be answered); it is never answered back, which would start an
        # error ping-pong.
        return Response(obj["id"], error=RpcError(INTERNAL_ERROR, "malformed response: neither result nor error"))
    return Invalid(error_response(None, RpcError(INVALID_REQUEST, "Invalid request: no method")), "no method")


def id_key(id: JSON) -> str:
    """A dict key that keeps the id's JSON type: 1 and "1" are different requests."""
    return json.dumps(id)


def encode_lines(messages: tuple[dict[str, JSON], ...]) -> bytes:
    """Messages as NDJSON bytes. Never fails: what could not be written as valid JSON in
    UTF-8 (a lone surrogate, a non-finite number, nesting beyond the limit, from whatever
    source) is written repaired, and the repair is logged."""
    try:
        return "".join(json.dumps(msg, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n" for msg in messages).encode()
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        pass
    repaired: list[str] = []
    lines = []
    for msg in messages:
        safe = _repair(msg, 0, repaired)
        lines.append(json.dumps(safe, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n")
    log.warning("repaired an outgoing message: %s", "; ".join(sorted(set(repaired))))
    return "".join(lines).encode()


def _repair(value: JSON, depth: int, repaired: list[str]) -> JSON:
    if isinstance(value, str):
        if _LONE_SURROGATE.search(value) is None:
            return value
        repaired.append("lone surrogates replaced by U+FFFD")
        return _LONE_SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, float) and not math.isfinite(value):
        repaired.append("a non-finite number written as null")
        return None
    if isinstance(value, (list, tuple, dict)) and depth >= MAX_DEPTH:
        repaired.append(f"nesting beyond {MAX_DEPTH} written as null")
        return None
    if isinstance(value, (list, tuple)):
        return [_repair(item, depth + 1, repaired) for item in value]
    if isinstance(value, dict):
        return {_repair(str(key), depth, repaired): _repair(item, depth + 1, repaired) for key, item in value.items()}
    return value


# ---------------------------------------------------------------------------------------
# The trio shell

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
        so carrying on could leave that request waiting forever.

        `decode`: how a line becomes JSON; `protocol.decoding.Decoder` reads long requests at
        the cost of what is new in them.

        `flow`: awaited after each read is handled and before the next: the reader's
        backpressure (an agent's reader waits while its sessions have too much unread,
        `actors/flow.py`). While it waits, nothing more is read: the peer blocks on its writes."""
        self.name = name
        self.unreadable_is_fatal = unreadable_is_fatal
        self.failure: str | None = None  # why the connection was given up, if it was
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

    async def request(self, method: str, params: JSON = None, *, id: int | None = None) -> JSON:
        """Send a request and wait for its result; raises RpcError or ConnectionClosed.

        If the caller is cancelled, the pending entry goes away and a late reply is
        logged and dropped: the connection stays healthy.
        """
        if self.eof.is_set():
            raise ConnectionClosed(f"{self.name}: connection closed")
        if id is None:
            id = self.new_id()
        key = id_key(id)
        send, receive = trio.open_memory_channel[Response](1)
        self._pending[key] = send
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
            return _unreadable(line.head, f"line of {line.size} bytes exceeds the limit of {self._splitter.max_line}")
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
        send = self._pending.pop(id_key(response.id), None)
        if send is None:
            log.info("%s: dropped a response for unknown or abandoned request id %r", self.name, response.id)
            return
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
