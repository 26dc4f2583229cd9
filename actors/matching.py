"""Which conversation does a request continue? Pure logic, no I/O (DESIGN §4).

Consumers never re-send history byte-identical, so messages are compared in a canonical
form: system messages ignored, cache-control/marker data and thinking stripped, text
merged, assistant messages reduced to (all their text, their tool calls in order).

Each conversation is indexed by chained hashes of its canonical history, so a request is
matched by hashing its own prefixes once: O(length of the request), independent of how
many conversations exist or how long they are.

- `head`: committed + the current turn's inputs + our reply so far. A request that extends
  it is a *clean* continuation (the consumer accepted our reply).
- `seen`: committed + the current turn's inputs, i.e. exactly what the agent was sent.
  A request that extends it but not `head` *cancelled* our reply (the user stopped it, or
  rejected a permission); the agent already holds the inputs, so only what follows is new.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from protocol.lm import (
    Agent,
    DataPart,
    MarkerPart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    agent_to_wire,
    to_wire,
)

# Data parts that carry consumer bookkeeping, never content.
IGNORED_MIME_TYPES = frozenset({"cache_control", "stateful_marker"})

Digest = bytes


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _content_parts(parts: Iterable[Any]) -> list[Any]:
    """Drop bookkeeping parts and merge consecutive text."""
    out: list[Any] = []
    for part in parts:
        if isinstance(part, (ThinkingPart, MarkerPart)):
            continue
        if isinstance(part, DataPart) and part.mime_type in IGNORED_MIME_TYPES:
            continue
        if isinstance(part, TextPart) and out and isinstance(out[-1], TextPart):
            out[-1] = TextPart(out[-1].value + part.value)
            continue
        if isinstance(part, ToolResultPart):
            part = ToolResultPart(part.tool_call_id, tuple(_content_parts(part.content)))
        out.append(part)
    return out


def normalise(message: Message) -> Message:
    """The message with bookkeeping parts stripped and consecutive text merged."""
    return attrs.evolve(message, content=tuple(_content_parts(message.content)))


def canonical(message: Message) -> str | None:
    """The form two renderings of the same message share; None for messages that never count."""
    if message.role == "system":
        return None
    if message.role == "assistant":
        text = "".join(p.value for p in message.content if isinstance(p, TextPart)).strip()
        calls = [
            [p.tool_call_id, p.tool_name, p.parameters if p.parameters is not None else {}]
            for p in message.content
            if isinstance(p, ToolCallPart)
        ]
        return canonical_json(["assistant", text, calls])
    return canonical_json(["user", [to_wire(p) for p in _content_parts(message.content)]])


def chain(previous: Digest, canonical_form: str) -> Digest:
    return hashlib.blake2b(previous + canonical_form.encode(), digest_size=16).digest()


def root(agent: Agent) -> Digest:
    """Chains start from the agent definition, so histories of different agents never meet."""
    return hashlib.blake2b(canonical_json(agent_to_wire(agent)).encode(), digest_size=16).digest()


def prefix_digests(start: Digest, messages: Sequence[Message]) -> list[tuple[int, Digest]]:
    """(index after the message, digest of everything up to it) for each counting message."""
    out: list[tuple[int, Digest]] = []
    digest = start
    for index, message in enumerate(messages):
        form = canonical(message)
        if form is None:
            continue
        digest = chain(digest, form)
        out.append((index + 1, digest))
    return out


def has_content(messages: Iterable[Message]) -> bool:
    return any(m.role != "system" and _content_parts(m.content) for m in messages)


@attrs.define
class Conversation:
    """What History knows of one conversation (the Session actor lives beside it)."""

    id: str
    agent: Agent
    committed: Digest  # digest of the history the consumer has confirmed
    inputs: list[Message]  # the current turn's new messages, as sent to the agent
    reply: list[Part] = attrs.Factory(list)  # what we streamed back for them so far

    def seen(self) -> Digest:
        digest = self.committed
        for message in self.inputs:
            form = canonical(message)
            if form is not None:
                digest = chain(digest, form)
        return digest

    def head(self) -> Digest:
        if not self.reply:
            return self.seen()
        return chain(self.seen(), canonical(Message("assistant", tuple(self.reply))) or "")


@attrs.frozen
class Match:
    conversation: Conversation | None  # None: a new conversation
    start: int  # request.messages[start:] are new to the agent
    canceled: bool  # the previous reply was not accepted


class ConversationIndex:
    """Finds the conversation a request continues; holds no references beyond its maps."""

    def __init__(self) -> None:
        self._by_head: dict[Digest, list[Conversation]] = {}
        self._by_seen: dict[Digest, list[Conversation]] = {}
        self._keys: dict[str, tuple[Digest, Digest]] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def update(self, conversation: Conversation) -> None:
        """(Re)index a conversation after its state changed."""
        self.remove(conversation)
        head, seen = conversation.head(), conversation.seen()
        self._keys[conversation.id] = (head, seen)
        self._by_head.setdefault(head, []).append(conversation)
        self._by_seen.setdefault(seen, []).append(conversation)

    def remove(self, conversation: Conversation) -> None:
        keys = self._keys.pop(conversation.id, None)
        if keys is None:
            return
        for table, key in zip((self._by_head, self._by_seen), keys):
            bucket = [c for c in table.get(key, []) if c.id != conversation.id]
            if bucket:
                table[key] = bucket
            else:
                table.pop(key, None)

    def match(self, agent: Agent, messages: Sequence[Message]) -> Match:
        prefixes = prefix_digests(root(agent), messages)
        # A clean continuation wins over a cancelled one; the longest prefix wins within each.
        for end, digest in reversed(prefixes):
            for conversation in reversed(self._by_head.get(digest, [])):
                if has_content(messages[end:]):
                    return Match(conversation, end, canceled=False)
        for end, digest in reversed(prefixes):
            for conversation in reversed(self._by_seen.get(digest, [])):
                # The consumer's own rendering of our cancelled reply is not news to the agent.
                start = end
                while start < len(messages) and messages[start].role == "assistant":
                    start += 1
                if has_content(messages[start:]):
                    return Match(conversation, start, canceled=True)
        return Match(None, 0, canceled=False)

    def committed_digest(self, agent: Agent, messages: Sequence[Message], start: int) -> Digest:
        """The digest of messages[:start]: what a matched request confirms."""
        prefixes = prefix_digests(root(agent), messages[:start])
        return prefixes[-1][1] if prefixes else root(agent)
