"""Receiving without waiting (what is already queued on a channel), and answering once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Generic, TypeVar

import attrs
import trio

T = TypeVar("T")


def queued(channel: trio.MemoryReceiveChannel[T]) -> Iterator[T]:
    """The items already queued on `channel`, taken without waiting (lazily: stop early to leave the rest)."""
    while True:
        try:
            yield channel.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel):
            return


@attrs.frozen(eq=False)
class Answering(Generic[T]):
    """What the turn machine calls a handle (`protocol/turn/machine.py`'s `PermissionRequested`,
    `ToolRequested`): the way back to whoever waits for the answer (the agent's permission
    request, the bridge's `tools/call`). Answered at most once; an answer nobody waits for any
    more (the request withdrawn, the call given up) is dropped."""

    reply: trio.MemorySendChannel[T]

    def answer(self, outcome: T) -> None:
        try:
            self.reply.send_nowait(outcome)
        except (trio.BrokenResourceError, trio.ClosedResourceError, trio.WouldBlock):
            pass


def answering() -> tuple[Answering[Any], trio.MemoryReceiveChannel[Any]]:
    """A handle and the channel its one answer arrives on."""
    send, receive = trio.open_memory_channel[Any](1)
    return Answering(send), receive
