"""Which conversation does a request continue? Pure logic, no I/O (docs/DESIGN.md, "History and matching").

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
import hashlib
import json
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

import attrs

from protocol.shared.structuring import canonical_json
from protocol.vscode.copilot_prompt import GLOBAL_CONTEXT_TAGS, CopilotText, unwrap
from protocol.vscode.lm import (
    Agent,
    DataPart,
    HeldDataPart,
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
    """The message as everything downstream takes it (docs/DESIGN.md, "History matching"):
    bookkeeping parts stripped, consecutive text merged, and a user's Copilot-wrapped text
    unwrapped into a `CopilotText`. Reading a request calls it once per new message."""
    content = message.content
    if len(content) == 1 and type(content[0]) is TextPart:  # the common case: nothing to strip
        if message.role != "user":
            return message
        unwrapped = _unwrapped(content[0])
        return message if unwrapped is content[0] else attrs.evolve(message, content=(unwrapped,))
    parts = _content_parts(content)
    if message.role == "user":
        parts = _unwrapped_turn(parts)
    return attrs.evolve(message, content=tuple(parts))


def _unwrapped_turn(parts: list[Any]) -> list[Any]:
    """A user's parts with a Copilot turn unwrapped. Copilot Chat 0.67 puts an attached image
    inside the turn's `<attachments>` element, so its text comes in pieces around the image
    (`<attachments>`, the image, `</attachments>` ... `<userRequest>`): the pieces read together
    are the turn, and the images go before it (what the user attached, then what they asked,
    which the agent answers: it comes last)."""
    texts = [part for part in parts if type(part) is TextPart]
    if len(texts) > 1 and all(type(part) is TextPart or isinstance(part, DataPart) for part in parts):
        whole = "".join(part.value for part in texts)
        if (turn := unwrap(whole)) is not None:
            return [part for part in parts if type(part) is not TextPart] + [CopilotText(whole, turn=turn)]
    return [_unwrapped(part) for part in parts]


def _unwrapped(part: Any) -> Any:
    """A Copilot turn's text part as a `CopilotText`; any other part as it is."""
    if type(part) is not TextPart:
        return part
    turn = unwrap(part.value)
    return part if turn is None else CopilotText(part.value, turn=turn)


def _part_form(part: Any) -> tuple[Any, ...]:
    if isinstance(part, CopilotText):
        # Copilot re-renders the wrappers of a turn (a new editor context, no reminders when it
        # rebuilds a turn): its identity is what the user asked and attached.
        return part.turn.identity
    if isinstance(part, TextPart):
        return ("text", part.value)
    if isinstance(part, DataPart):
        return ("data", part.mime_type, data_digest(part.data))
    if isinstance(part, HeldDataPart):
        return ("data", part.mime_type, part.digest)
    if isinstance(part, ToolResultPart):
        return ("tool_result", part.tool_call_id, tuple(_part_form(p) for p in _content_parts(part.content)))
    if isinstance(part, ToolCallPart):
        return ("tool_call", part.tool_call_id, part.tool_name, canonical_json(tool_input(part.parameters)))
    return (part.type,)


def data_digest(data: str) -> str:
    """What a data part's form holds of its bytes: a digest, so that a conversation may keep the
    part by its digest alone (`HeldDataPart`) and still match it."""
    return hashlib.blake2b(data.encode(), digest_size=16).hexdigest()


def tool_input(parameters: Any) -> Any:
    """A tool call's input by meaning. Copilot round-trips our inputs through JSON.stringify and
    JSON.parse (an empty one comes back `{}`); prompt-tsx passes the function arguments on as the
    JSON text they are (Microsoft's chat sample). A string that reads as a JSON object is that
    object, so either way the same value compares equal, key order and whitespace aside."""
    if parameters is None:
        return {}
    if isinstance(parameters, str) and parameters.lstrip().startswith("{"):
        try:
            value = json.loads(parameters)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
            return parameters
        return value if isinstance(value, dict) else parameters
    return parameters


Form = tuple[Any, ...]


def is_global_context_message(message: Message) -> bool:
    """Copilot's environment/workspace message: context the agent has, re-rendered at will.
    Takes a normalised message: a wrapped turn (`CopilotText`) is never one."""
    if message.role != "user" or len(message.content) != 1:
        return False
    part = message.content[0]
    return type(part) is TextPart and part.value.lstrip().startswith(GLOBAL_CONTEXT_TAGS)


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


def message_digest(form: Form) -> Digest:
    """A message's own digest: 64 bits of BLAKE2b over its canonical form.

    Stable across backend runs (markers carry digests, see `markers`), and computed once per
    message: History reuses the digests of the messages a request shares with the previous
    request of the same conversation (`reading`).
    """
    return int.from_bytes(hashlib.blake2b(repr(form).encode(), digest_size=8).digest(), "little")


def chain(previous: Digest, message: Digest) -> Digest:
    """The digest of a history extended by one message (of digest `message`).

    A hash of two ints: as stable across runs as the message digests, and cheap.
    """
    return hash((previous, message))


def root(agent: Agent) -> Digest:
    """Chains start from the agent definition, so histories of different agents never meet."""
    return message_digest(("agent", canonical_json(agent_to_wire(agent))))


def prefix_digests(start: Digest, messages: Sequence[Message]) -> list[tuple[int, Digest]]:
    """(index after the message, digest of everything up to it) for each counting message."""
    out: list[tuple[int, Digest]] = []
    digest = start
    for index, message in enumerate(messages):
        form = canonical(message)
        if form is None:
            continue
        digest = chain(digest, message_digest(form))
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


_SUMMARY_ASK = re.compile(r"\bsummar(?:y|i[sz]e|i[sz]ing)\b.{0,80}\bconversation\b|\bconversation\b.{0,80}\bsummar(?:y|i[sz]e)\b", re.I | re.S)


def is_summarisation(messages: Sequence[Message]) -> bool:
    """A consumer asking the model to summarise the conversation (Copilot does when its context
    overflows): the last user message asks for it, or a system prompt is a summariser's."""
    last_user = next((m for m in reversed(messages) if m.role == "user"), None)
    if last_user is not None and _SUMMARY_ASK.search(last_user.text()[:2000]):
        return True
    return any(_SUMMARY_ASK.search(m.text()[:2000]) for m in leading_system(messages))


def leading_system(messages: Sequence[Message]) -> Iterator[Message]:
    """The system messages a request opens with (consumers put their instructions first)."""
    for message in messages:
        if message.role != "system":
            return
        yield message


def is_summarised(messages: Sequence[Message]) -> bool:
    """Whether the history opens with Copilot's summary of what it dropped."""
    first = next((m for m in messages if m.role != "system" and not is_global_context_message(m)), None)
    return first is not None and is_summary(first)


def is_summary(message: Message) -> bool:
    """Copilot's stand-in for the history it summarised away (its context budget overflowed)."""
    return message.role == "user" and message.text().lstrip().startswith("<conversation-summary>")


def is_tool_round(message: Message) -> bool:
    """A user message that only carries tool results: a round of the agent's own tool loop."""
    return message.role == "user" and bool(message.content) and all(isinstance(p, ToolResultPart) for p in message.content)


def is_plain_text(message: Message) -> bool:
    """A user message of plain text only: no Copilot-wrapped turn, no image, no tool result."""
    return message.role == "user" and bool(message.content) and all(type(p) is TextPart for p in message.content)


def carries_results(message: Message) -> bool:
    """A user message of tool results, possibly followed in the same message by the consumer's
    own text (an Anthropic-style rendering puts a note after the results it follows)."""
    parts = message.content
    if message.role != "user" or not parts or not isinstance(parts[0], ToolResultPart):
        return False
    rest = [p for p in parts if not isinstance(p, ToolResultPart)]
    return all(type(p) is TextPart for p in rest) and all(isinstance(p, ToolResultPart) for p in parts[: len(parts) - len(rest)])


@attrs.frozen
class ResultsWithNote:
    """A request's tool round followed by its consumer's own words (docs/how-it-works.md,
    "A consumer's note after tool results")."""

    results: tuple[Message, ...]  # the tool-result messages, without the note's text
    notes: tuple[Message, ...]  # what followed them: the consumer's note to its model


def results_with_note(messages: Sequence[Message], awaited: Collection[str]) -> ResultsWithNote | None:
    """`messages` as the results of exactly the `awaited` calls followed by plain text, or None.

    A consumer that runs its own tool loop (prompt-tsx's `ToolCalls`, as in Microsoft's chat
    sample) ends the request after a tool round with a user message of its own ("Above is the
    result of calling one or more tools..."): it ran the tools the model asked for and calls
    the model again, so the agent's turn goes on. Only plain text counts: a new turn of the
    user's as Copilot sends it (a wrapped `<userRequest>`, attachments, images) is the user
    moving on, and is left to the turn machine's rule."""
    results: list[Message] = []
    notes: list[Message] = []
    answered: set[str] = set()
    index = 0
    while index < len(messages) and carries_results(messages[index]):
        message = messages[index]
        own = tuple(p for p in message.content if isinstance(p, ToolResultPart))
        answered.update(p.tool_call_id for p in own)
        results.append(attrs.evolve(message, content=own))
        index += 1
        if len(own) < len(message.content):
            notes.append(Message("user", message.content[len(own) :]))
            break
    rest = messages[index:]
    if not results or answered != set(awaited) or not all(is_plain_text(m) for m in rest):
        return None
    notes.extend(rest)
    return ResultsWithNote(tuple(results), tuple(notes)) if notes else None


def call_ids(message: Message) -> Iterator[str]:
    """The tool-call ids a message carries: its calls (an assistant's) or its results (a user's)."""
    for part in message.content:
        if isinstance(part, ToolResultPart) or (isinstance(part, ToolCallPart) and message.role == "assistant"):
            yield part.tool_call_id


@attrs.frozen
class UserTurn:
    """One turn the user asked: its first message that is not a known note, and the digest of its
    last message (what the user typed comes last: Copilot's `<userRequest>`, the chat sample's
    prompt after its `<context>` message)."""

    start: int
    digest: Digest


def user_turns(messages: Sequence[Message], digests: Sequence[Digest | None], notes: Collection[Digest] = ()) -> list[UserTurn]:
    """What the user asked, turn by turn, however the consumer renders the rest.

    A turn is a run of user messages between the model's messages and tool rounds; it is known by
    its last message, so a context message the consumer sent before the user's words and leaves
    out when it renders that turn again does not change it. Messages that never count (system,
    Copilot's environment) and the consumer's known notes (`notes`, their digests) are skipped;
    the model's messages, rendered however the consumer likes, only end a turn."""
    turns: list[UserTurn] = []
    start: int | None = None
    last: Digest = 0
    for index, (message, digest) in enumerate(zip(messages, digests, strict=False)):
        if digest is None:
            continue
        if message.role != "user" or carries_results(message):
            if start is not None:
                turns.append(UserTurn(start, last))
                start = None
            continue
        if digest in notes:
            continue
        if start is None:
            start = index
        last = digest
    if start is not None:
        turns.append(UserTurn(start, last))
    return turns


def asked(turns: Iterable[UserTurn]) -> Digest:
    """The digest of what the user asked in `turns`, in order."""
    digest = 0
    for turn in turns:
        digest = chain(digest, turn.digest)
    return digest


# What `conversation_step` carries from message to message: the digest of the conversation so far,
# and the digest of the agent's latest answer, not yet followed by a turn of the user's.
SeenSoFar = tuple[Digest, Digest | None]
SEEN_START: SeenSoFar = (0, None)


def conversation_step(state: SeenSoFar, message: Message, own: Digest | None) -> SeenSoFar:
    """One message more of the conversation the user sees (`own`: the message's own digest,
    None for one that never counts): each turn the user asked, and the agent's answer that ended
    the turn before it (the text of its last assistant message before the user's next turn).
    The agent's own tool rounds (calls, results, the text in a message with calls) are left out: Copilot
    re-renders them at will (a round at its request limit is dropped once the user goes on with
    Continue), and they are the agent's business (docs/DESIGN.md, "Identity and markers")."""
    digest, answer = state
    if own is None:
        return state
    if message.role == "assistant":
        if any(isinstance(p, ToolCallPart) for p in message.content):
            # A round of the agent's tool loop, not an answer: Copilot drops the round pending
            # at its request limit when the user sends a new message there, and the text of the
            # round before it would otherwise read as another answer.
            return state
        text = "".join(p.value for p in message.content if isinstance(p, TextPart)).strip()
        return (digest, message_digest(("answer", text))) if text else state
    if is_tool_round(message):
        return state
    if answer is not None:
        digest = chain(digest, answer)
    return chain(digest, own), None


def trailing_digest(messages: Sequence[Message]) -> Digest:
    """The digest of the messages after the last assistant message: what a turn was asked.

    A marker carries it beside the digest of the whole history before it: when Copilot has
    replaced that history with a summary, the turn's own messages still identify it.
    """
    digest = 0
    for message in messages[_last_assistant(messages) + 1 :]:
        form = canonical(message)
        if form is not None and not is_summary(message):
            digest = chain(digest, message_digest(form))
    return digest


def _last_assistant(messages: Sequence[Message]) -> int:
    return last_assistant(messages) - 1


def last_assistant(messages: Sequence[Message]) -> int:
    """The index after the last assistant message (0 if there is none)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return index + 1
    return 0
