"""Which conversation does a request continue? Pure logic, no I/O (DESIGN §4).

Consumers never re-send history byte-identical, so messages are compared in a canonical
form: system messages (and Copilot's environment message) ignored, cache-control/marker
data and thinking stripped, text merged, assistant messages reduced to (all their text,
their tool calls in order), Copilot's wrapped user turns reduced to what the user asked
and attached (`copilot_prompt`).

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

import bisect
import re
import json
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from actors.copilot_prompt import is_global_context, unwrap
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
)

# Data parts that carry consumer bookkeeping, never content.
IGNORED_MIME_TYPES = frozenset({"cache_control", "stateful_marker"})

Digest = int


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _content_parts(parts: Iterable[Any], *, merge: bool = True) -> list[Any]:
    """Drop bookkeeping parts and (with `merge`) merge consecutive text.

    A tool result's own parts stay apart: only its first text part is the tool's own answer
    (hooks append theirs), and the approval of a permission is read from exactly that part.
    """
    out: list[Any] = []
    for part in parts:
        if isinstance(part, (ThinkingPart, MarkerPart)):
            continue
        if isinstance(part, DataPart) and part.mime_type in IGNORED_MIME_TYPES:
            continue
        if merge and isinstance(part, TextPart) and out and isinstance(out[-1], TextPart):
            out[-1] = TextPart(out[-1].value + part.value)
            continue
        if isinstance(part, ToolResultPart):
            part = ToolResultPart(part.tool_call_id, tuple(_content_parts(part.content, merge=False)))
        out.append(part)
    return out


def normalise(message: Message) -> Message:
    """The message with bookkeeping parts stripped and consecutive text merged."""
    content = message.content
    if len(content) == 1 and type(content[0]) is TextPart:
        return message  # the common case, and matching runs over every message of every request
    return attrs.evolve(message, content=tuple(_content_parts(content)))


def _part_form(part: Any) -> tuple[Any, ...]:
    if isinstance(part, TextPart):
        # Copilot re-renders the wrappers of a turn (a new editor context, no reminders when it
        # rebuilds a turn): its identity is what the user asked and attached.
        turn = unwrap(part.value)
        return turn.identity if turn is not None else ("text", part.value)
    if isinstance(part, DataPart):
        return ("data", part.mime_type, part.data)
    if isinstance(part, ToolResultPart):
        return ("tool_result", part.tool_call_id, tuple(_part_form(p) for p in _content_parts(part.content)))
    if isinstance(part, ToolCallPart):
        # Consumers round-trip inputs through JSON.stringify/JSON.parse: compare them as JSON.
        parameters = canonical_json(part.parameters if part.parameters is not None else {})
        return ("tool_call", part.tool_call_id, part.tool_name, parameters)
    return (part.type,)


Form = tuple[Any, ...]


def is_global_context_message(message: Message) -> bool:
    """Copilot's environment/workspace message: context the agent has, re-rendered at will."""
    return (
        message.role == "user" and len(message.content) == 1 and isinstance(message.content[0], TextPart) and is_global_context(message.content[0].value)
    )


def canonical(message: Message) -> Form | None:
    """The form two renderings of the same message share; None for messages that never count.

    Call it on normalised messages (History normalises every request once). The form is a
    nested tuple of strings, so hashing it is cheap enough to run over every message of
    every request.
    """
    if message.role == "system" or is_global_context_message(message):
        return None
    if message.role == "assistant":
        text = "".join(p.value for p in message.content if isinstance(p, TextPart)).strip()
        calls = tuple(_part_form(p) for p in message.content if isinstance(p, ToolCallPart))
        return ("assistant", text, calls)
    return ("user", tuple(_part_form(p) for p in message.content))


def chain(previous: Digest, form: Form) -> Digest:
    """The digest of a history extended by one message.

    Python's own hash: strings hash with SipHash under a per-process random key, so the
    64-bit chain resists crafted collisions, and the index never outlives the process.
    """
    return hash((previous, form))


def root(agent: Agent) -> Digest:
    """Chains start from the agent definition, so histories of different agents never meet."""
    return hash(("agent", canonical_json(agent_to_wire(agent))))


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
        return chain(self.seen(), canonical(Message("assistant", tuple(self.reply))) or ())


@attrs.frozen
class Match:
    conversation: Conversation | None  # None: a new conversation
    start: int  # request.messages[start:] are new to the agent
    canceled: bool  # the previous reply was not accepted
    committed: Digest  # the digest of request.messages[:start], which the request confirms


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
        """Messages must be normalised. Clean continuations win over cancelled ones, and the
        longest prefix wins within each."""
        start_digest = root(agent)
        prefixes = prefix_digests(start_digest, messages)

        def digest_at(index: int) -> Digest:
            position = bisect.bisect_right(prefixes, index, key=lambda p: p[0])
            return prefixes[position - 1][1] if position else start_digest

        for end, digest in reversed(prefixes):
            for conversation in reversed(self._by_head.get(digest, [])):
                if has_content(messages[end:]):
                    return Match(conversation, end, False, digest)
        for end, digest in reversed(prefixes):
            for conversation in reversed(self._by_seen.get(digest, [])):
                # The consumer's own rendering of our cancelled reply is not news to the agent.
                start = end
                while start < len(messages) and messages[start].role == "assistant":
                    start += 1
                if has_content(messages[start:]):
                    return Match(conversation, start, True, digest_at(start))
        return Match(None, 0, False, start_digest)


def match_after_marker(conversation: Conversation, messages: Sequence[Message], index: int, marker_turn: int, head_turn: int) -> Match | None:
    """Continue `conversation` from the assistant message at `index`, which carries our marker.

    The marker of the newest reply is a clean continuation. The marker of the reply before
    it, followed by exactly what the newest turn sent the agent, means the newest reply was
    cancelled or rejected (the consumer dropped it, or rebuilt it without its marker). Any
    older marker is a fork (an edited or retried message): None, a new conversation.
    """
    start = index + 1
    canceled = False
    if marker_turn == head_turn - 1:
        forms = [f for f in (canonical(m) for m in conversation.inputs) if f is not None]
        position = start
        for form in forms:
            while position < len(messages) and canonical(messages[position]) is None:
                position += 1
            if position >= len(messages) or canonical(messages[position]) != form:
                return None
            position += 1
        while position < len(messages) and messages[position].role == "assistant":
            position += 1
        start, canceled = position, True
    elif marker_turn != head_turn:
        return None
    if not has_content(messages[start:]):
        return None
    prefixes = prefix_digests(root(conversation.agent), messages[:start])
    return Match(conversation, start, canceled, prefixes[-1][1] if prefixes else root(conversation.agent))


_SUMMARY_ASK = re.compile(r"\bsummar(?:y|i[sz]e|i[sz]ing)\b.{0,80}\bconversation\b|\bconversation\b.{0,80}\bsummar(?:y|i[sz]e)\b", re.I | re.S)


def is_summarisation(messages: Sequence[Message]) -> bool:
    """A consumer asking the model to summarise the conversation (Copilot does when its context
    overflows): the last user message asks for it, or a system prompt is a summariser's."""
    users = [m for m in messages if m.role == "user"]
    if users and _SUMMARY_ASK.search(users[-1].text()[:2000]):
        return True
    return any(m.role == "system" and _SUMMARY_ASK.search(m.text()[:2000]) for m in messages)
