"""A scripted Anthropic Messages API on 127.0.0.1, so Claude Code runs offline and deterministically.

The test scripts the *main conversation*: each main model request takes the next `Reply` from a
queue, which the server streams as SSE (`message_start`, `content_block_start/delta/stop` per
block, `message_delta` with the stop reason, `message_stop`). Claude Code also makes calls of its
own (a session title, a "what might the user type next" suggestion, token counts): those are
answered generically and never consume the script. Every request is recorded, so a test can
assert what the model received.

    api = FakeAnthropic()
    await nursery.start(api.serve)
    api.script(reply(text("Hello ", "there.")), reply(tool_use("Bash", {"command": "ls"})))
    ... ANTHROPIC_BASE_URL=api.url ...
    api.main[1].messages  # the second model request of the conversation

A reply can be held for the request it answers (`answers=` the last user text), can stall after
N deltas until the client hangs up (`stall_after=`, for cancels and kills mid-stream), or be
`paced`: each delta waits for `api.advance()`, which the test calls on each part it receives.

Plain HTTP/1.1 over trio (keep-alive, Content-Length bodies, chunked responses), bounded in
requests per connection and in time per stream; it stops with the nursery it runs in.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from typing import Any

import attrs
import trio

JSON = Any

MAX_REQUESTS_PER_CONNECTION = 200
MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024
STALL_LIMIT = 60.0  # a stalled stream waits at most this long for the client to hang up
SUGGESTION_PREFIX = "[SUGGESTION MODE"


# Scripted replies --------------------------------------------------------------------------------


@attrs.frozen
class Block:
    """One content block of a reply, streamed as start, deltas, stop."""

    start: dict[str, JSON]
    deltas: tuple[dict[str, JSON], ...]


def text(*chunks: str) -> Block:
    """A text block; each chunk is one `text_delta`."""
    return Block({"type": "text", "text": ""}, tuple({"type": "text_delta", "text": c} for c in chunks))


def thinking(*chunks: str, signature: str = "c2lnbmF0dXJl") -> Block:
    """A thinking block: `thinking_delta`s, then its `signature_delta`."""
    deltas = tuple({"type": "thinking_delta", "thinking": c} for c in chunks)
    return Block({"type": "thinking", "thinking": "", "signature": ""}, (*deltas, {"type": "signature_delta", "signature": signature}))


_tool_ids = itertools.count(1)


def tool_use(name: str, input: dict[str, JSON], *, id: str | None = None) -> Block:
    """A tool_use block whose input arrives as two `input_json_delta`s (as the real API splits it)."""
    raw = json.dumps(input)
    half = len(raw) // 2
    start = {"type": "tool_use", "id": id or f"toolu_fake{next(_tool_ids):04d}", "name": name, "input": {}}
    return Block(start, ({"type": "input_json_delta", "partial_json": raw[:half]}, {"type": "input_json_delta", "partial_json": raw[half:]}))


@attrs.frozen
class Reply:
    blocks: tuple[Block, ...]
    stop_reason: str
    delay: float = 0.0  # between SSE events
    stall_after: int | None = None  # after this many deltas, hold the stream until the client hangs up
    answers: str | None = None  # only for a request whose last user text is this
    paced: bool = False  # each delta after the first waits for FakeAnthropic.advance()

    def fits(self, request: Request) -> bool:
        return self.answers is None or request.user_texts()[-1:] == [self.answers]

    def tool_use_ids(self) -> list[str]:
        return [b.start["id"] for b in self.blocks if b.start["type"] == "tool_use"]


def reply(*blocks: Block, delay: float = 0.0, stall_after: int | None = None, answers: str | None = None, paced: bool = False) -> Reply:
    """A scripted model reply; `answers` holds it back for the request whose last user text it is."""
    stop = "tool_use" if any(b.start["type"] == "tool_use" for b in blocks) else "end_turn"
    return Reply(tuple(blocks), stop, delay, stall_after, answers, paced)


# Recorded requests -------------------------------------------------------------------------------


@attrs.define
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: JSON
    main: bool = False  # a main-conversation model request (took a scripted reply)
    reply: Reply | None = None
    finished: bool = False  # the response was sent whole
    aborted: bool = False  # the client hung up before the end of the response

    @property
    def messages(self) -> list[dict[str, JSON]]:
        return (self.body or {}).get("messages", []) if isinstance(self.body, dict) else []

    def blocks(self, role: str | None = None) -> Iterator[dict[str, JSON]]:
        """Every content block of every message (strings as text blocks), in order."""
        for message in self.messages:
            if role is not None and message["role"] != role:
                continue
            content = message["content"]
            yield from ([{"type": "text", "text": content}] if isinstance(content, str) else content)

    def user_texts(self) -> list[str]:
        """The text of every user text block, system reminders left out."""
        return [b["text"] for b in self.blocks("user") if b.get("type") == "text" and not b["text"].startswith("<system-reminder>")]

    def assistant_texts(self) -> list[str]:
        return [b["text"] for b in self.blocks("assistant") if b.get("type") == "text"]

    def tool_uses(self) -> list[dict[str, JSON]]:
        return [b for b in self.blocks("assistant") if b.get("type") == "tool_use"]

    def tool_results(self) -> list[dict[str, JSON]]:
        return [b for b in self.blocks("user") if b.get("type") == "tool_result"]


def is_main_conversation(body: JSON) -> bool:
    """The agent's own turn, not a side call: it offers tools, and it is not a suggestion request."""
    if not isinstance(body, dict) or not body.get("tools"):
        return False  # titles and other one-shot calls offer no tools
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    first = content if isinstance(content, str) else next((b.get("text", "") for b in content or [] if b.get("type") == "text"), "")
    return not first.startswith(SUGGESTION_PREFIX)


# The server --------------------------------------------------------------------------------------


class _Closed(Exception):
    pass


class FakeAnthropic:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.port: int | None = None
        self._script: list[Reply] = []
        self._changed = trio.Event()
        self._ids = itertools.count(1)
        self._steps_send, self._steps = trio.open_memory_channel[None](math.inf)

    @property
    def url(self) -> str:
        assert self.port is not None, "not serving yet"
        return f"http://127.0.0.1:{self.port}"

    @property
    def main(self) -> list[Request]:
        """The main-conversation model requests, in order."""
        return [r for r in self.requests if r.main]

    @property
    def unscripted(self) -> list[Request]:
        """Main-conversation requests no scripted reply fitted (answered with a stub)."""
        return [r for r in self.main if r.reply is None]

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next main-conversation requests, taken in order (`answers` permitting)."""
        self._script.extend(replies)

    def advance(self) -> None:
        """Let a paced reply send its next delta: call it on each part the client sees, and
        no two deltas can reach the client as one part."""
        self._steps_send.send_nowait(None)

    async def wait_for(self, predicate: Any) -> Request:
        """The first recorded request that satisfies `predicate`, waiting for it if need be."""
        while True:
            for request in self.requests:
                if predicate(request):
                    return request
            await self._changed.wait()

    def _take(self, request: Request) -> Reply | None:
        """The first queued reply that fits the request, taken off the queue."""
        for index, candidate in enumerate(self._script):
            if candidate.fits(request):
                return self._script.pop(index)
        return None

    def _note(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            await nursery.start(trio.serve_listeners, self._connection, listeners)
            task_status.started()

    # HTTP ----------------------------------------------------------------------------------------

    async def _connection(self, stream: trio.SocketStream) -> None:
        buffer = bytearray()
        try:
            for _ in range(MAX_REQUESTS_PER_CONNECTION):
                method, path, headers, body = await self._read_request(stream, buffer)
                if not await self._respond(stream, method, path, headers, body):
                    break
        except (_Closed, trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await trio.aclose_forcefully(stream)

    async def _read_request(self, stream: trio.SocketStream, buffer: bytearray) -> tuple[str, str, dict[str, str], bytes]:
        while b"\r\n\r\n" not in buffer:
            if len(buffer) > MAX_HEADER_BYTES:
                raise _Closed
            await self._fill(stream, buffer)
        head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, path, _version = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", ""):
            raise _Closed  # Claude Code sends Content-Length; keep this server small
        length = int(headers.get("content-length", "0"))
        if length > MAX_BODY_BYTES:
            raise _Closed
        buffer[:] = rest
        while len(buffer) < length:
            await self._fill(stream, buffer)
        body = bytes(buffer[:length])
        del buffer[:length]
        return method, path, headers, body

    @staticmethod
    async def _fill(stream: trio.SocketStream, buffer: bytearray) -> None:
        data = await stream.receive_some(65536)
        if not data:
            raise _Closed
        buffer += data

    async def _respond(self, stream: trio.SocketStream, method: str, path: str, headers: dict[str, str], raw: bytes) -> bool:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        request = Request(method, path, headers, body)
        self.requests.append(request)
        self._note()
        route = path.split("?", 1)[0]
        if method == "POST" and route == "/v1/messages" and isinstance(body, dict):
            request.main = is_main_conversation(body)
            if request.main:
                request.reply = self._take(request)
            chosen = request.reply or self._side_reply(body, stub=request.main)
            if body.get("stream"):
                await self._stream(stream, request, chosen)
            else:
                await self._json(stream, 200, self._message(chosen, body))
                request.finished = True
        elif method == "POST" and route == "/v1/messages/count_tokens":
            await self._json(stream, 200, {"input_tokens": max(1, len(raw) // 4)})
            request.finished = True
        elif method == "GET" and route == "/v1/models":
            model = {"type": "model", "id": "claude-fake-1", "display_name": "Fake", "created_at": "2026-01-01T00:00:00Z"}
            await self._json(stream, 200, {"data": [model], "has_more": False, "first_id": model["id"], "last_id": model["id"]})
            request.finished = True
        else:
            error = {"type": "error", "error": {"type": "not_found_error", "message": f"{method} {route} is not faked"}}
            await self._json(stream, 404, error)
            request.finished = True
        self._note()
        return not request.aborted

    @staticmethod
    def _side_reply(body: dict[str, JSON], *, stub: bool) -> Reply:
        """A sensible answer to a call the test did not script: JSON for a schema, else a short text."""
        if stub:
            return reply(text("(unscripted)"))
        schema = ((body.get("output_config") or {}).get("format") or {}).get("schema") or {}
        if schema.get("type") == "object":
            value = {name: "Fake title" for name in schema.get("properties", {})}
            return reply(text(json.dumps(value)))
        return reply(text(""))

    def _message(self, chosen: Reply, body: dict[str, JSON]) -> dict[str, JSON]:
        content = []
        for block in chosen.blocks:
            item = dict(block.start)
            for delta in block.deltas:
                kind = delta["type"]
                if kind == "text_delta":
                    item["text"] += delta["text"]
                elif kind == "thinking_delta":
                    item["thinking"] += delta["thinking"]
                elif kind == "signature_delta":
                    item["signature"] = delta["signature"]
            if item["type"] == "tool_use":
                item["input"] = json.loads("".join(d["partial_json"] for d in block.deltas))
            content.append(item)
        return {
            "id": f"msg_fake{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake-1"),
            "content": content,
            "stop_reason": chosen.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    async def _json(self, stream: trio.SocketStream, status: int, payload: JSON) -> None:
        data = json.dumps(payload).encode()
        reason = {200: "OK", 404: "Not Found"}[status]
        head = f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
        await stream.send_all(head.encode() + data)

    async def _stream(self, stream: trio.SocketStream, request: Request, chosen: Reply) -> None:
        body = request.body
        message = self._message(reply(), body) | {"content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
        events: list[tuple[str, JSON]] = [("message_start", {"type": "message_start", "message": message})]
        for index, block in enumerate(chosen.blocks):
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block.start}))
            events.extend(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in block.deltas)
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        usage = {"input_tokens": 10, "output_tokens": 5}
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": chosen.stop_reason, "stop_sequence": None}, "usage": usage}))
        events.append(("message_stop", {"type": "message_stop"}))

        head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
        deltas_sent = 0
        try:
            await stream.send_all(head.encode())
            for name, data in events:
                if chosen.delay:
                    await trio.sleep(chosen.delay)
                if chosen.paced and name == "content_block_delta" and deltas_sent:
                    with trio.move_on_after(STALL_LIMIT):
                        await self._steps.receive()
                frame = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                await stream.send_all(b"%x\r\n%s\r\n" % (len(frame), frame))
                if name == "content_block_delta":
                    deltas_sent += 1
                    if deltas_sent == chosen.stall_after:
                        await self._stall(stream)
            await stream.send_all(b"0\r\n\r\n")
            request.finished = True
        except (trio.BrokenResourceError, trio.ClosedResourceError, _Closed):
            request.aborted = True

    async def _stall(self, stream: trio.SocketStream) -> None:
        """Hold the stream until the client hangs up (bounded); raises _Closed when it does."""
        with trio.move_on_after(STALL_LIMIT):
            while await stream.receive_some(65536):
                pass  # a client does not send on a streaming response; ignore anything it does
            raise _Closed


__all__ = ["FakeAnthropic", "Reply", "Request", "reply", "text", "thinking", "tool_use", "is_main_conversation"]
