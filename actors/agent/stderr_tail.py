"""An agent's stderr: read at a bounded rate, its last lines kept for its errors' data (`data.stderr`),
redacted when read."""

from __future__ import annotations

import collections
from collections.abc import Callable

import trio

from protocol.shared.jsonrpc import LineSplitter, Overlong

STDERR_LINES = 20
STDERR_READ_MAX = 64 * 1024  # a stderr line longer than this is kept by its head only
STDERR_LINE_MAX = 4096  # characters of a stderr line kept for an error's data
# An agent's stderr is read at most this fast (bytes/s), after a first STDERR_BURST: beyond it the
# agent waits on its own writes, as on a full pipe, instead of taking the backend's CPU from every
# other conversation. Agents that log verbosely write kilobytes a second.
STDERR_RATE = 1024 * 1024
STDERR_BURST = 1024 * 1024
STDERR_DRAIN = 1.0  # after an agent exited, how long what it left on stderr is read at full speed


class StderrTail:
    """The last STDERR_LINES non-blank lines of an agent's stderr, for an error's data.

    Kept raw and redacted only when read: an agent can write stderr endlessly, and redacting
    every line (though only the last few are kept) once took most of a core and slowed every
    other conversation a hundredfold. Per read the work is a split in C and a look at the
    lines that are kept.
    """

    def __init__(self, keep: int = STDERR_LINES) -> None:
        self._splitter = LineSplitter(STDERR_READ_MAX)
        self._lines: collections.deque[bytes | Overlong] = collections.deque(maxlen=keep)

    def feed(self, chunk: bytes | bytearray) -> list[bytes | Overlong]:
        """Take what the agent wrote; returns the lines it completed (for whoever wants each)."""
        lines = self._splitter.feed(chunk)
        kept: list[bytes | Overlong] = []
        for raw in reversed(lines):  # from the end, until enough are kept: bounded by `keep` but for blank lines
            if len(kept) == self._lines.maxlen:
                break
            if (raw.head if isinstance(raw, Overlong) else raw).strip():
                kept.append(raw)
        self._lines.extend(reversed(kept))
        return lines

    def end(self) -> bytes | Overlong | None:
        """The end of the stream: keep an unterminated last line (often why the agent exited)."""
        last = self._splitter.leftover()
        if last is not None and (last.head if isinstance(last, Overlong) else last).strip():
            self._lines.append(last)
        return last

    def lines(self, redact: Callable[[str], str]) -> list[str]:
        """The kept lines, oldest first, each redacted now and cut to STDERR_LINE_MAX."""
        return [line for line in (tail_line(raw, redact) for raw in self._lines) if line]


def tail_line(raw: bytes | Overlong, redact: Callable[[str], str]) -> str:
    """A stderr line as it is shown: decoded, redacted, then cut (redacting first, so that a cut
    cannot leave a secret's start unrecognised)."""
    text = raw.head if isinstance(raw, Overlong) else raw
    line = redact(text.decode(errors="replace").rstrip())
    if line and (isinstance(raw, Overlong) or len(line) > STDERR_LINE_MAX):
        return line[:STDERR_LINE_MAX] + "..."
    return line


class StderrReader:
    """Reads an agent's stderr into its tail, at most STDERR_RATE bytes/s after a first STDERR_BURST;
    `each`, if given, takes every line (a transcript being recorded, debug logging)."""

    def __init__(self, tail: StderrTail, each: Callable[[bytes | Overlong], None] | None = None) -> None:
        self._tail = tail
        self._each = each
        self._ended = trio.Event()  # set when stderr is read to its end
        self._wait: trio.CancelScope | None = None  # the rate limit's wait, cancelled to read the last words
        self._hurry = False  # the agent exited: read what it left without the rate limit

    async def read(self, stream: trio.abc.ReceiveStream) -> None:
        allowance, then = float(STDERR_BURST), trio.current_time()
        try:
            async for chunk in stream:
                now = trio.current_time()
                allowance = min(STDERR_BURST, allowance + (now - then) * STDERR_RATE) - len(chunk)
                then = now
                if allowance < 0 and not self._hurry:  # a rate limit (a token bucket), not a synchronisation
                    with trio.CancelScope() as self._wait:
                        await trio.sleep(-allowance / STDERR_RATE)
                lines = self._tail.feed(chunk)
                if self._each is not None:
                    for raw in lines:
                        self._each(raw)
            last = self._tail.end()  # a last line without a newline (often why it exited)
            if self._each is not None and last is not None:
                self._each(last)
        finally:
            self._ended.set()

    async def drain(self) -> None:
        """The agent exited: its last words (why) may still wait behind the rate limit: read them at
        full speed, for at most STDERR_DRAIN (a child may hold stderr open)."""
        self._hurry = True
        if self._wait is not None:
            self._wait.cancel()
        with trio.move_on_after(STDERR_DRAIN):
            await self._ended.wait()
        self._hurry = False
