"""Newline-delimited JSON-RPC 2.0: framing, limits and classification, with no I/O.

One JSON object per line, in both directions, as the VS Code extension, ACP agents and
MCP stdio servers all speak it. The framing and message classification are plain
functions (`LineSplitter`, `classify`); `actors/shared/peer.py`'s `Peer` is the thin trio shell
that reads lines, dispatches them and serialises writes.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import re
from typing import Any

import attrs

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

    def feed(self, chunk: bytes | bytearray) -> list[bytes | Overlong]:
        data = bytes(chunk)  # trio's streams give bytes, and `bytes` of bytes is the same object: no copy
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
_scan = _DECODER.scan_once  # type: ignore[attr-defined]  # (not in the stubs)  the C scanner `decode` wraps; a line it reads whole needs no more


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


def is_stray_text(line: bytes) -> bool:
    """Whether a line that could not be read is plain text, not a message gone wrong: it does not
    start (after blanks) as a JSON object or array. Such a line from an agent (a log line a CLI
    prints on stdout: "Ignore file not found: ...") cannot be the reply anything waits for, so
    it is skipped (docs/reliability.md); one that starts like a message and breaks is not."""
    start = line.lstrip()[:1]
    return start not in (b"{", b"[")


def unreadable(line: bytes, problem: str) -> Invalid:
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
        return unreadable(line, f"nesting {depth} deep exceeds the limit of {MAX_DEPTH}")
    try:
        obj = _decode_line(line.decode())
    except UnicodeDecodeError as exc:
        return unreadable(line, f"invalid UTF-8 at byte {exc.start}")
    except RecursionError:
        return unreadable(line, "nesting too deep")
    except ValueError as exc:
        problem = str(exc)
        if problem.startswith("Exceeds the limit"):
            problem = "an integer of more than 4,300 digits"
        return unreadable(line, problem)
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
