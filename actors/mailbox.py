"""Receiving without waiting: a channel you can peek (the Session's mailbox of turns), and
what is already queued on one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

import trio

T = TypeVar("T")


def queued(channel: trio.MemoryReceiveChannel[T]) -> Iterator[T]:
    """The items already queued on `channel`, taken without waiting (lazily: stop early to leave the rest)."""
    while True:
        try:
            yield channel.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel):
            return


class PeekableMailbox(Generic[T]):
    """Wraps a memory receive channel; `peek` looks at the next item without taking it."""

    def __init__(self, channel: trio.MemoryReceiveChannel[T]) -> None:
        self._channel = channel
        self._peeked: list[T] = []

    async def peek(self) -> T:
        """The next item, left in place; raises trio.EndOfChannel when closed and empty."""
        if not self._peeked:
            self._peeked.append(await self._channel.receive())
        return self._peeked[0]

    async def receive(self) -> T:
        if self._peeked:
            return self._peeked.pop()
        return await self._channel.receive()

    def consume(self) -> T:
        """Take the item last peeked."""
        return self._peeked.pop()
