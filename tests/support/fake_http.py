"""The HTTP core and scripting the tests' fake model APIs share (tests/support/fake_anthropic.py,
tests/support/fake_openai.py, tests/support/fake_chat.py, tests/support/fake_gemini.py): each says only what its API's replies and requests look like.

A scripted model server on 127.0.0.1: each *main-conversation* model request takes the next
scripted reply that fits it; every request is recorded, so a test can assert what the model
received, and can wait for a request (`wait_for`) instead of sleeping. A reply may be `paced`:
each streamed delta after the first waits for `advance()`, which the test calls on each part it
receives, so no two deltas reach the client as one part.

Plain HTTP/1.1 over trio (keep-alive, Content-Length bodies, chunked responses), bounded in
requests per connection and in time per stream; it stops with the nursery it runs in. A
subclass routes requests (`_respond`).
"""

from __future__ import annotations

import json
import math
import re
import time
from typing import Any, ClassVar

import attrs
import trio

JSON = Any

MAX_REQUESTS_PER_CONNECTION = 200
MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024
STALL_LIMIT = 60.0  # a stalled or paced stream waits at most this long for the client


@attrs.define
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: JSON
    main: bool = False  # a main-conversation model request (took a scripted reply)
    reply: Any = None
    finished: bool = False  # the response was sent whole
    aborted: bool = False  # the client hung up before the end of the response
    at: float = attrs.field(factory=time.perf_counter)  # when it was read whole (for benchmarks)


@attrs.frozen
class Reply:
    """A scripted model reply: its content in the API's own terms (content blocks, output items),
    and how it is sent. Each fake subclasses it to read its content (call ids, stop reason)."""

    parts: tuple[Any, ...]
    delay: float = 0.0  # between SSE events
    stall_after: int | None = None  # after this many deltas, hold the stream until the client hangs up
    answers: str | None = None  # only for a request whose last user text is this
    paced: bool = False  # each delta after the first waits for FakeServer.advance()
    usage: tuple[int, int] = (10, 5)  # (input, output) tokens the API reports for it

    @classmethod
    def of(cls, *parts: Any, **how: Any) -> Any:
        """A reply of `parts`, sent `how` the keywords say."""
        return cls(tuple(parts), **how)

    def fits(self, request: Any) -> bool:
        # The user's text as the agent sent it, or wrapped whole in one tag (Grok Build's <user_query>).
        return self.answers is None or [re.sub(r"^<(\w+)>\s*(.*?)\s*</\1>$", r"\2", t, flags=re.S) for t in request.user_texts()[-1:]] == [self.answers]


@attrs.frozen
class Event:
    """One server-sent event of a streamed reply; `delta` marks the ones `paced` and `stall_after` count.
    An empty `name` sends a data-only event (Gemini's and Chat Completions' streams); `data` as a str is
    sent as it is (Chat Completions' closing `[DONE]`)."""

    name: str
    data: JSON
    delta: bool = False


class Closed(Exception):
    pass


class FakeServer:
    request_class: ClassVar[type[Request]] = Request

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.port: int | None = None
        self._script: list[Any] = []
        self._changed = trio.Event()
        self._steps_send, self._steps = trio.open_memory_channel[None](math.inf)

    @property
    def url(self) -> str:
        assert self.port is not None, "not serving yet"
        return f"http://127.0.0.1:{self.port}"

    @property
    def main(self) -> list[Any]:
        """The main-conversation model requests, in order."""
        return [r for r in self.requests if r.main]

    @property
    def unscripted(self) -> list[Any]:
        """Main-conversation requests no scripted reply fitted (answered with a stub)."""
        return [r for r in self.main if r.reply is None]

    def script(self, *replies: Any) -> None:
        """Queue replies for the next main-conversation requests, taken in order (`answers` permitting)."""
        self._script.extend(replies)

    def advance(self) -> None:
        """Let a paced reply send its next delta."""
        self._steps_send.send_nowait(None)

    async def wait_for(self, predicate: Any) -> Any:
        """The first recorded request that satisfies `predicate`, waiting for it if need be."""
        while True:
            for request in self.requests:
                if predicate(request):
                    return request
            await self._changed.wait()

    def _take(self, request: Any) -> Any:
        """The first queued reply that fits the request, taken off the queue."""
        for index, candidate in enumerate(self._script):
            if candidate.fits(request):
                return self._script.pop(index)
        return None

    def _note(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def _paced_step(self) -> None:
        with trio.move_on_after(STALL_LIMIT):
            await self._steps.receive()

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
                method, path, headers, raw = await self._read_request(stream, buffer)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                request = self.request_class(method, path, headers, body)
                self.requests.append(request)
                self._note()
                await self._respond(stream, request, raw)
                self._note()
                if request.aborted:
                    break
        except (Closed, trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await trio.aclose_forcefully(stream)

    async def _respond(self, stream: trio.SocketStream, request: Any, raw: bytes) -> None:
        raise NotImplementedError

    async def _read_request(self, stream: trio.SocketStream, buffer: bytearray) -> tuple[str, str, dict[str, str], bytes]:
        while b"\r\n\r\n" not in buffer:
            if len(buffer) > MAX_HEADER_BYTES:
                raise Closed
            await self._fill(stream, buffer)
        head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, path, _version = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", ""):
            raise Closed  # the agents send Content-Length; keep this server small
        length = int(headers.get("content-length", "0"))
        if length > MAX_BODY_BYTES:
            raise Closed
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
            raise Closed
        buffer += data

    @staticmethod
    async def _json(stream: trio.SocketStream, status: int, payload: JSON) -> None:
        data = json.dumps(payload).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
        head = f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
        await stream.send_all(head.encode() + data)

    SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"

    @staticmethod
    async def _chunk(stream: trio.SocketStream, data: bytes) -> None:
        """One chunk of a chunked response (empty data: the last chunk)."""
        await stream.send_all(b"%x\r\n%s\r\n" % (len(data), data) if data else b"0\r\n\r\n")

    async def _send_events(self, stream: trio.SocketStream, request: Request, chosen: Reply, events: list[Event]) -> None:
        """Stream `events` as SSE the way `chosen` says (delayed, paced, stalled); mark the request
        finished, or aborted if the client hung up first."""
        deltas_sent = 0
        try:
            await stream.send_all(self.SSE_HEAD)
            for event in events:
                if chosen.delay:
                    await trio.sleep(chosen.delay)
                if chosen.paced and event.delta and deltas_sent:
                    await self._paced_step()
                data = event.data if isinstance(event.data, str) else json.dumps(event.data)
                await self._chunk(stream, (f"event: {event.name}\n" if event.name else "").encode() + f"data: {data}\n\n".encode())
                if event.delta:
                    deltas_sent += 1
                    if deltas_sent == chosen.stall_after:
                        await self._stall(stream)
            await self._chunk(stream, b"")
            request.finished = True
        except (trio.BrokenResourceError, trio.ClosedResourceError, Closed):
            request.aborted = True

    @staticmethod
    async def _stall(stream: trio.SocketStream) -> None:
        """Hold the stream until the client hangs up (bounded); raises Closed when it does."""
        with trio.move_on_after(STALL_LIMIT):
            while await stream.receive_some(65536):
                pass  # a client does not send on a streaming response; ignore anything it does
            raise Closed
