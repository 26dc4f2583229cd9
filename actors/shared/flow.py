"""Backpressure: how much of an agent's output may be on its way to VS Code at once.

Every channel between an agent's stdout and the backend's is a trio memory channel that
never blocks its sender (actors must not stall on one another), so what bounds them is a
`Window` beside each: the sender counts what it hands on, the receiver gives it back once
it is done with it, and the one who reads the source (the agent's stdout, the agent's
events) waits while the window is full. A slow VS Code thus stops the backend reading the
agent, and the agent blocks on its own writes. See "Reliability" in `docs/DESIGN.md`.
"""

from __future__ import annotations

import trio

from protocol.vscode.lm import Part, TextPart, ThinkingPart

# Characters of text a chat request may have on their way to VS Code (rendered, not yet
# written to stdout): beyond it the Session stops taking its agent's events.
REPLY_WINDOW = 2 * 1024 * 1024
# Bytes of an agent's lines for one session read but not yet taken by its Session: beyond
# it the agent's stdout is no longer read.
EVENTS_WINDOW = 2 * 1024 * 1024
# Characters in one `lm/responsePart`: a backlog goes out as parts of at most this size.
PART_MAX = 256 * 1024


class Window:
    """A count of what was handed on and not yet given back; `room()` waits while `limit` or
    more is out. Amounts are whatever the two sides agree on (bytes, characters)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.out = 0
        self._room = trio.Event()
        self._room.set()
        self._closed = False

    @property
    def full(self) -> bool:
        return self.out >= self.limit and not self._closed

    def spend(self, amount: int) -> None:
        self.out += amount
        if self.full and self._room.is_set():
            self._room = trio.Event()

    def refund(self, amount: int) -> None:
        # Never below zero: what a stale turn spent may be given back after the window moved on.
        self.out = max(0, self.out - amount)
        if not self.full:
            self._room.set()

    def close(self) -> None:
        """Nobody will give anything back (the receiver is gone): never wait on it again."""
        self._closed = True
        self._room.set()

    async def room(self) -> None:
        """Return once less than `limit` is out (or the window is closed); no checkpoint when
        there is room already: this is on the path of every streamed chunk."""
        while self.full:
            await self._room.wait()


class Receipt:
    """What a batch of an agent's updates counts in its session's window (`protocol/turn/machine.py`'s
    `AgentUpdates.receipt`): given back once the Session took the batch off its channel, so the
    agent's reader may read on."""

    __slots__ = ("size", "window")

    def __init__(self, size: int, window: Window) -> None:
        self.size = size
        self.window = window

    def taken(self) -> None:
        self.window.refund(self.size)


def part_cost(part: Part) -> int:
    """What a part counts in a reply window: its text. Tool calls and markers are few and
    small (a flood is text), and counting them would cost more than it bounds."""
    return len(part.value) if isinstance(part, (TextPart, ThinkingPart)) else 0
