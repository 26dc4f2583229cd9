"""Receiving without waiting: what is already queued on a channel."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

import trio

T = TypeVar("T")


def queued(channel: trio.MemoryReceiveChannel[T]) -> Iterator[T]:
    """The items already queued on `channel`, taken without waiting (lazily: stop early to leave the rest)."""
    while True:
        try:
            yield channel.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel):
            return
