"""The data (pasted images) idle conversations hold, bounded in bytes. Pure, no I/O.

A conversation keeps its latest request as read (`reading.Read`: the raw JSON and the parsed
messages) and its turn's inputs, to match and read its next request cheaply. An image is base64
in those messages, so each idle conversation held its images whole: forty with a 1 MiB image
each held over a hundred MiB, bounded only by the number of conversations.

So the conversations that took a turn most recently keep their data whole, up to `KEPT_CHARS`
in all; beyond it, the least recently active ones keep each large data part by its digest only
(`HeldDataPart`). Matching compares data parts by digest (`canonical.data_digest`), so a held
conversation still matches its next request; that request is read afresh from the first
message whose data was released (its raw JSON is cut there), which costs one parse of the rest.
See docs/reliability.md, "Bounded memory".
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import attrs

from protocol.history.canonical import data_digest
from protocol.vscode.lm import DataPart, HeldDataPart, Message, ToolResultPart

HELD_FROM = 4096  # characters: shorter data (bookkeeping, a small icon) is always kept whole
KEPT_CHARS = 32 * 1024 * 1024  # large data kept whole across the most recent conversations


def _large(part: object) -> bool:
    return isinstance(part, DataPart) and len(part.data) >= HELD_FROM


def holds(message: Message) -> bool:
    return any(_large(p) or (isinstance(p, ToolResultPart) and any(_large(i) for i in p.content)) for p in message.content)


def data_chars(message: Message) -> int:
    """The characters of large data `message` holds whole. Counted once, as a message is read
    (`reading.Read.data`): a long conversation's every request must not walk all of it again."""
    total = 0
    for part in message.content:
        items = part.content if isinstance(part, ToolResultPart) else (part,)
        total += sum(len(i.data) for i in items if isinstance(i, DataPart) and _large(i))
    return total


def _held_part(part: Any) -> Any:
    if _large(part):
        assert isinstance(part, DataPart)
        return HeldDataPart(part.mime_type, data_digest(part.data))
    if isinstance(part, ToolResultPart) and any(_large(i) for i in part.content):
        return attrs.evolve(part, content=tuple(_held_part(i) for i in part.content))
    return part


def held_messages(messages: Sequence[Message]) -> list[Message]:
    """`messages` with their large data kept by digest (the others are the same objects)."""
    return [attrs.evolve(m, content=tuple(_held_part(p) for p in m.content)) if holds(m) else m for m in messages]


class WholeData:
    """Which conversations keep their large data whole: the most recently active, up to
    `limit` characters in all (least recently active released first)."""

    def __init__(self, limit: int = KEPT_CHARS) -> None:
        self._limit = limit
        self._chars: OrderedDict[str, int] = OrderedDict()  # conversation → its data's characters, oldest first
        self._total = 0

    def took_turn(self, conversation: str, chars: int) -> list[str]:
        """`conversation` now holds `chars` of large data whole: the conversations whose data must
        now be released (never `conversation` itself, which a request is being answered for)."""
        self.forget(conversation)
        if chars:
            self._chars[conversation] = chars
            self._total += chars
        released = []
        for other in list(self._chars):
            if self._total <= self._limit:
                break
            if other != conversation:
                released.append(other)
                self.forget(other)
        return released

    def forget(self, conversation: str) -> None:
        self._total -= self._chars.pop(conversation, 0)
