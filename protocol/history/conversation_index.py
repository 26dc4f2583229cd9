"""Which conversation does a request continue? Pure logic, no I/O (docs/DESIGN.md, "History and matching").

Each conversation is indexed by chained hashes of its canonical history (`canonical`), so a
request is matched by hashing its own prefixes once: O(length of the request), independent
of how many conversations exist or how long they are.

- `head`: committed + the current turn's inputs + our reply so far. A request that extends
  it is a *clean* continuation (the consumer accepted our reply).
- `seen`: committed + the current turn's inputs, i.e. exactly what the agent was sent.
  A request that extends it but not `head` *cancelled* our reply (the user stopped it, or
  rejected a permission); the agent already holds the inputs, so only what follows is new.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import attrs

from protocol.history.canonical import Digest, canonical, chain, has_content, message_digest, prefix_digests, root
from protocol.vscode.lm import Agent, Message, Part, TextPart


@attrs.define
class Conversation:
    """What History knows of one conversation (the Session actor lives beside it)."""

    id: str
    agent: Agent
    committed: Digest  # digest of the history the consumer has confirmed
    inputs: list[Message]  # the current turn's new messages, as sent to the agent
    reply: list[Part] = attrs.Factory(list)  # what we streamed back for them so far
    _seen: Digest | None = None  # seen(), once known
    reply_chars: int = 0  # the text of `reply`
    overlong: bool = False  # the reply's text outgrew what any request can carry back: not kept

    def begin_turn(self, committed: Digest, inputs: list[Message], seen: Digest | None = None) -> None:
        """A new turn: the confirmed history, the new messages, and (if known) the digest of both."""
        self.committed, self.inputs, self.reply, self._seen = committed, inputs, [], seen
        self.reply_chars, self.overlong = 0, False

    def keep_inputs(self, inputs: list[Message]) -> None:
        """Keep the turn's inputs as `inputs`: the same messages with their data kept by digest
        (`protocol/history/held_data.py`), so their digests are the same."""
        self.inputs = inputs

    def add_reply(self, part: Part, limit: int) -> None:
        """A part of the reply. A reply whose text passes `limit` characters never comes back
        whole in a request (see `conversations.REPLY_KEPT`), so it cannot be continued cleanly: its
        text is no longer kept (memory stays bounded whatever the agent writes), and the
        conversation is continued, if at all, as a stopped reply is (by `seen`)."""
        if isinstance(part, TextPart):
            self.reply_chars += len(part.value)
            if self.reply_chars > limit:
                if not self.overlong:
                    self.overlong = True
                    self.reply = [p for p in self.reply if not isinstance(p, TextPart)]
                return
        self.reply.append(part)

    def seen(self) -> Digest:
        if self._seen is None:
            digest = self.committed
            for message in self.inputs:
                form = canonical(message)
                if form is not None:
                    digest = chain(digest, message_digest(form))
            self._seen = digest
        return self._seen

    def head(self) -> Digest:
        if self.overlong:
            return chain(self.seen(), message_digest(("overlong reply", self.id)))  # matches no request
        if not self.reply:
            return self.seen()
        return chain(self.seen(), message_digest(canonical(Message("assistant", tuple(self.reply))) or ()))


@attrs.frozen
class Match:
    conversation: Conversation | None  # None: a new conversation
    start: int  # request.messages[start:] are new to the agent
    cancelled: bool  # the previous reply was not accepted
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
        for table, key in zip((self._by_head, self._by_seen), keys, strict=False):
            bucket = [c for c in table.get(key, []) if c.id != conversation.id]
            if bucket:
                table[key] = bucket
            else:
                table.pop(key, None)

    def match(self, agent: Agent, messages: Sequence[Message], prefixes: list[tuple[int, Digest]] | None = None) -> Match:
        """Messages must be normalised; `prefixes` are their `prefix_digests` when already known.
        Clean continuations win over cancelled ones, and the longest prefix wins within each."""
        start_digest = root(agent)
        if prefixes is None:
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


def match_after_marker(
    conversation: Conversation, messages: Sequence[Message], index: int, marker_turn: int, head_turn: int, after: Sequence[Digest] | None = None
) -> Match | None:
    """Continue `conversation` from the assistant message at `index`, which carries our marker.

    The marker of the newest reply is a clean continuation. The marker of the reply before
    it, followed by exactly what the newest turn sent the agent, means the newest reply was
    cancelled or rejected (the consumer dropped it, or rebuilt it without its marker). Any
    older marker is a fork (an edited or retried message): None, a new conversation.
    """
    start = index + 1
    cancelled = False
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
        start, cancelled = position, True
    elif marker_turn != head_turn:
        return None
    if not has_content(messages[start:]):
        return None
    if after is not None:
        return Match(conversation, start, cancelled, after[start])
    prefixes = prefix_digests(root(conversation.agent), messages[:start])
    return Match(conversation, start, cancelled, prefixes[-1][1] if prefixes else root(conversation.agent))
