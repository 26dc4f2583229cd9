"""Reading a request's messages, at the cost of what is new in it. Pure, no I/O.

Every chat request carries the whole conversation, so parsing (strict, with wire paths in
errors), normalising and hashing every message of every request makes a long conversation
slow: a 1,000-turn request cost about 15 ms more than a 10-turn one. But a request shares
almost all of its messages, as the same JSON values, with the previous request of the same
conversation. So each conversation keeps its last request as read (`Read`), and the next
request reuses it for the leading messages that are equal as JSON values (a comparison
that runs in C); only the rest is parsed and hashed. System messages never count for
matching (Copilot re-renders its own every request), so a changed one is parsed afresh
without ending the reuse. Cache breakpoints that move between the last messages end the
reuse there, a few messages from the end.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from protocol.history.canonical import Digest, canonical, chain, message_digest, normalise
from protocol.history.held_data import data_chars, held_messages, holds
from protocol.history.user_turns import SEEN_START, SeenSoFar, conversation_step
from protocol.shared.structuring import structure
from protocol.vscode.lm import Message


@attrs.frozen
class Read:
    """A request's messages, normalised, with the digest of every prefix."""

    raw: tuple[Any, ...]  # the messages as they came (JSON values), to compare the next request with
    messages: tuple[Message, ...]
    after: tuple[Digest, ...]  # after[i]: the digest of messages[:i] (after[0] is the agent's root)
    digests: tuple[Digest | None, ...]  # each message's own digest; None for one that never counts
    # seen[i]: the conversation the user sees in messages[:i] (`user_turns.conversation_step`);
    # seen[i][0] is its digest, which markers carry
    seen: tuple[SeenSoFar, ...] = (SEEN_START,)
    data: tuple[int, ...] = ()  # data[i]: the characters of large data messages[i] holds whole (`held_data`)

    def held(self) -> Read:
        """This read with its large data kept by digest (`protocol/history/held_data.py`), its raw JSON cut
        before the first message that held any (the next request is compared with what is left,
        and read afresh from there)."""
        first = next((i for i, m in enumerate(self.messages) if holds(m)), None)
        if first is None:
            return self
        return attrs.evolve(self, raw=self.raw[:first], messages=tuple(held_messages(self.messages)), data=(0,) * len(self.messages))

    def prefixes(self) -> list[tuple[int, Digest]]:
        """(index after the message, digest up to it) for each message that counts."""
        return [(index + 1, self.after[index + 1]) for index, digest in enumerate(self.digests) if digest is not None]


OPENING = 2  # how many leading messages name the conversations a request may share them with


def opening(raw: Sequence[Any]) -> str:
    """A key for the first messages that count (system messages aside), a digest of their JSON:
    requests of one conversation share it, and few conversations share it with each other."""
    start = _after_system(raw)
    text = json.dumps(list(raw[start : start + OPENING]), sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _after_system(raw: Sequence[Any]) -> int:
    """The index of the first message after the leading system messages."""
    index = 0
    while index < len(raw) and _is_system(raw[index]):
        index += 1
    return index


def _is_system(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") == "system"


def _reusable(raw: tuple[Any, ...], earlier: Read) -> int:
    """How many leading messages `raw` shares with `earlier`: their leading system messages
    (re-rendered every request, never counted) aside, the longest run equal as JSON values.

    Compared by slices, so the comparisons run in C: one for the usual case (all of the
    earlier request is shared), a binary search over slices otherwise.
    """
    start = _after_system(raw)
    if _after_system(earlier.raw) != start:
        return 0
    low, high = start, min(len(raw), len(earlier.raw))
    if raw[start:high] != earlier.raw[start:high]:
        while low < high:  # raw[start:low] is shared; raw[start:high + 1] is not
            middle = (low + high + 1) // 2
            if raw[start:middle] == earlier.raw[start:middle]:
                low = middle
            else:
                high = middle - 1
    return high if high > start else 0


def read_messages(raw: Sequence[Any], root: Digest, earlier: Iterable[Read] = ()) -> Read:
    """Parse, normalise and hash `raw`, reusing the longest run shared with one of `earlier`
    (read from the same agent, so from the same root). Raises WireError naming the wire path."""
    raw = tuple(raw)  # compared by slices with earlier readings' tuples
    best: Read | None = None
    shared = 0
    for candidate in earlier:
        if candidate.after[0] != root:
            continue
        if (count := _reusable(raw, candidate)) > shared:
            best, shared = candidate, count
    if best is None:
        messages: list[Message] = []
        after: list[Digest] = [root]
        digests: list[Digest | None] = []
        seen: list[SeenSoFar] = [SEEN_START]
        data: list[int] = []
    else:
        messages, after, digests = list(best.messages[:shared]), list(best.after[: shared + 1]), list(best.digests[:shared])
        seen, data = list(best.seen[: shared + 1]), list(best.data[:shared])
        for index in range(_after_system(raw)):  # this request's own system messages (they never count)
            messages[index] = _read(raw[index], index)
            data[index] = data_chars(messages[index])
    fresh = range(shared, len(raw))
    for index in fresh:
        message = _read(raw[index], index)
        form = canonical(message)
        digest = None if form is None else message_digest(form)
        messages.append(message)
        digests.append(digest)
        after.append(after[-1] if digest is None else chain(after[-1], digest))
        seen.append(conversation_step(seen[-1], message, digest))
        data.append(data_chars(message))
    return Read(raw, tuple(messages), tuple(after), tuple(digests), tuple(seen), tuple(data))


def _read(value: Any, index: int) -> Message:
    return normalise(structure(value, Message, f"messages[{index}]"))
