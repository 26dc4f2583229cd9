"""History's transitions without trio: which conversation a chat request continues, the turn
it begins, the reply it grows, the marker that ends it, forgetting it.

The History actor (`actors/conversation/history.py`) keeps one `Conversations`, and beside each record the
Session actor and the request being answered; tests drive it directly (`tests/unit/test_matching.py`).
See "History and matching" and "Identity and markers" in `docs/DESIGN.md`.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import attrs

from protocol.history.canonical import Digest, canonical, has_content, message_digest, root
from protocol.history.compaction import Summarisation, answer_key, sent_summary_key, summarisation
from protocol.history.conversation_index import Conversation, ConversationIndex, Match, match_after_marker
from protocol.history.forking import ForkPoint, forks_after_marker
from protocol.history.held_data import KEPT_CHARS, WholeData, held_messages
from protocol.history.markers import Marker
from protocol.history.prompt import split_context
from protocol.history.reading import Read, opening, read_messages
from protocol.history.summaries import is_summarised
from protocol.history.tool_rounds import call_ids, is_plain_text, results_then_text, shown_with_results
from protocol.history.user_turns import asked, last_assistant, trailing_digest, user_turns
from protocol.shared.failures import Failure, FailureKind, failure
from protocol.shared.structuring import WireError
from protocol.vscode.lm import ChatParams, EditPart, Message, Part, TextPart, ThinkingPart, ToolCallPart, UsagePart

log = logging.getLogger(__name__)

# Characters of a reply's text kept to match the request that continues it. No consumer sends a
# longer one back whole: it exceeds every model's input window (2M tokens hold about 8 MB of
# text), so the consumer trims or summarises it. Beyond it, nothing more of the reply is held.
REPLY_KEPT = 16 * 1024 * 1024
MAX_FORK_POINTS = 1024  # turns of a conversation whose fork points are kept (the newest)
CALLS_KEPT = 4096  # ids of a conversation's tool calls kept as evidence of it (the newest)


@attrs.frozen
class MarkerAt:
    """The newest of our markers in a request: the message it is in, and what it names."""

    index: int
    marker: Marker


@attrs.define(eq=False)
class Record:
    """What History knows of one conversation besides its Session actor."""

    state: Conversation
    conversation_turn: int = 0  # turns this conversation has taken: the number its newest marker carries
    throwaway: bool = False  # a one-off session (a summary), never matched, retired when done
    resumable: bool = False  # named by a marker of a conversation this process no longer held (until its first turn)
    read: Read | None = None  # its latest request, as read: the next one reuses it
    opening: str | None = None  # `reading.opening` of its first request, under which it is found
    # Per turn (markers' numbering): where its agent session can be forked to go on after it
    # (`protocol/history/forking.py`). Only the last MAX_FORK_POINTS are kept.
    fork_points: dict[int, ForkPoint] = attrs.Factory(dict)
    calls: list[str] = attrs.Factory(list)  # the ids of every tool call its replies made (ours: `sym-<uuid>`)
    notes: set[Digest] = attrs.Factory(set)  # the digests of its consumer's notes after tool results
    inherited: frozenset[str] = frozenset()  # tool-call ids in the history it began with (a fork, a primed chat)
    compacting: bool = False  # its current turn answers a summarisation (protocol/history/compaction.py)
    summaries: list[str] = attrs.Factory(list)  # the keys of the summaries it answered, which name it again

    def pending(self) -> set[str]:
        """The calls its current reply made, which the next turn may answer."""
        return {p.tool_call_id for p in self.state.reply if isinstance(p, ToolCallPart)}


@attrs.frozen
class Route:
    """Where a chat request goes: the conversation, and what of the request is new to its agent."""

    record: Record
    read: Read
    start: int  # read.messages[start:] are new to the agent
    context: tuple[Message, ...]  # earlier history, for a conversation's first turn
    new: tuple[Message, ...]
    cancelled: bool  # the previous reply was not accepted
    started: bool  # a new conversation: History starts its Session
    error: Failure | None = None  # nothing to answer: the request fails (a new conversation is then not kept)
    fork: ForkPoint | None = None  # a new conversation that goes on in a fork of this agent session, where the agent can
    after_marker: bool = False  # a new conversation: all that follows the request's newest marker is its turn
    compaction: Summarisation | None = None  # the turn answers the consumer's summarisation, in the agent's own session


class Conversations:
    """History's transitions without trio: matching a request to its conversation, the turn it
    begins, the reply it grows, the marker that ends it, forgetting it.

    The History actor keeps one, and beside each record the Session actor and the request
    being answered; tests drive it directly (`tests/unit/test_matching.py`). See "History and
    matching" and "Identity and markers" in `docs/DESIGN.md`.
    """

    def __init__(self, data_kept: int = KEPT_CHARS) -> None:
        self._index = ConversationIndex()
        self._records: dict[str, Record] = {}
        self._dirty: set[str] = set()  # conversations whose reply grew since they were indexed
        self._by_opening: dict[str, list[str]] = {}  # opening(messages) → conversations that began so
        self._calls: dict[str, str] = {}  # tool-call id → the conversation whose reply made the call
        # tool-call id of ours → the conversations that began with it in their history (forks), oldest first
        self._heirs: dict[str, list[str]] = {}
        self._whole = WholeData(data_kept)  # which conversations keep their data (images) whole
        self._summaries: dict[str, str] = {}  # the key of a summary we answered → its conversation

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self._records

    @property
    def indexed(self) -> int:
        """Conversations the index holds (every record but the throwaway ones)."""
        return len(self._index)

    def route(self, params: ChatParams, found: MarkerAt | None) -> Route | Failure:
        """Read the request and find its conversation (by `found`, our newest marker in it,
        else by content), beginning the conversation's turn; an unreadable request's error."""
        try:
            read = read_messages(params.messages, root(params.agent), self._earlier_reads(params.messages, found))
        except WireError as exc:
            return failure(FailureKind.INVALID_PARAMS, f"Invalid params: {exc}")
        messages = read.messages
        if (asked := summarisation(messages)) is not None:
            if asked.copilots and (compacting := self._compaction(params, read, found, asked)) is not None:
                return compacting
            # Another consumer's summary (a side request: its title, say, never standing in for
            # the turns), or one of no conversation held at its head (a history Copilot compressed,
            # a turn in the middle of its tool loop): a throwaway session.
            record = self._new(params, messages, None, throwaway=True)
            return Route(record, read, 0, messages[:-1], messages[-1:], cancelled=False, started=True)
        match, conversation_id, fork = self._match(params, read, found)
        if match.conversation is None:
            context, new = split_context(messages)
            if not any(m.role == "user" for m in new):
                # The request ends with an answer: a new session would be primed with the history
                # and nothing to answer, and start the task over (a late "Continue" of a turn that
                # has ended). Said, never acted on (docs/DESIGN.md, "History and matching").
                return failure(FailureKind.INVALID_PARAMS, NOTHING_NEW_ASKED if context else NOTHING_TO_ANSWER)
            record = self._new(params, messages, conversation_id)
            record.resumable = conversation_id is not None
            if record.resumable and found is not None:
                # Its turns go on numbering from the marker's, so an older marker of its first
                # life still reads as a fork, never as this life's head.
                record.conversation_turn = found.marker.turn
            after_marker = found is not None and forks_after_marker(messages, found.index)
            return Route(record, read, 0, context, new, cancelled=False, started=True, fork=fork, after_marker=after_marker)
        record = self._records[match.conversation.id]
        tail = messages[match.start :]
        context, new = split_context(tail)
        inputs = list(tail)
        seen: Digest | None = read.after[-1]  # what the agent holds after the turn; None: worked out from the inputs
        if not context and not match.cancelled and (pending := record.pending()) and (after := results_then_text(new, pending)) is not None:
            # Text after the results the conversation waits on (docs/how-it-works.md, "Text after
            # tool results"): the consumer's note goes to the agent with the results; the user's
            # own words are the turn's too, and the turn machine's rule for a user who moved on
            # answers the calls with their results before the words are prompted.
            record.notes.update(_digest(m) for m in after.notes)
            shown = shown_with_results(after.results, after.notes)
            if after.words:
                new = (*shown, *after.words)  # the conversation holds the request as it was sent
            else:
                # The consumer's tool loop goes on; it leaves its note out when it renders this
                # round again, so the conversation holds the results alone.
                new, inputs, seen = shown, list(after.results), None
        while len(new) > 1 and is_plain_text(new[0]) and _digest(new[0]) in record.notes:
            new = new[1:]  # a known note ahead of the user's next turn: never news to the agent
        record.state.begin_turn(match.committed, inputs, seen)
        record.compacting = False
        error = None if _answerable(context, new) else failure(FailureKind.INVALID_PARAMS, NOTHING_TO_ANSWER)
        return Route(record, read, match.start, context, new, match.cancelled, started=False, error=error)

    def _compaction(self, params: ChatParams, read: Read, found: MarkerAt | None, asked: Summarisation) -> Route | None:
        """A summarisation of a conversation held, asked after its latest turn: a turn of that
        conversation, answered in its agent's own session (docs/how-it-works.md, "Compaction")."""
        match, _, _ = self._match(params, read, found)
        messages = read.messages
        if match.conversation is None or match.cancelled or match.start != len(messages) - 1:
            return None
        record = self._records[match.conversation.id]
        if record.pending():
            return None  # its agent waits on tool results: it cannot be asked anything else now
        record.state.begin_turn(match.committed, [messages[-1]], read.after[-1])
        record.compacting = True
        return Route(record, read, match.start, (), messages[-1:], cancelled=False, started=False, compaction=asked)

    def begin(self, record: Record, read: Read) -> None:
        """The turn is handed to the conversation's Session: index what it was sent."""
        record.resumable = False  # only its first turn may load the agent's own session
        record.conversation_turn += 1
        if not record.throwaway:
            self._index.update(record.state)
            if record.opening is None:
                record.opening = opening(read.raw)
                self._by_opening.setdefault(record.opening, []).append(record.state.id)
        record.read = read
        for other in self._whole.took_turn(record.state.id, sum(read.data)):
            held = self._records[other]  # its data kept by digest only (`protocol/history/held_data.py`)
            held.state.keep_inputs(held_messages(held.state.inputs))
            held.read = held.read.held() if held.read is not None else None

    def reply(self, record: Record, part: Part) -> None:
        """A part of the reply streamed back. Thinking, edits and usage never count for matching
        (an assistant message's form is its text and tool calls), and an edit can hold whole files:
        they are not kept. Each follows a part that is (usage: at least `EMPTY_REPLY`)."""
        if isinstance(part, ToolCallPart) and not record.throwaway:
            # Every consumer must echo our tool calls' ids: they say which conversation it is.
            self._calls[part.tool_call_id] = record.state.id
            record.calls.append(part.tool_call_id)
            if len(record.calls) > CALLS_KEPT:  # the newest say which conversation it is
                for call_id in record.calls[: len(record.calls) - CALLS_KEPT]:
                    if self._calls.get(call_id) == record.state.id:
                        del self._calls[call_id]
                del record.calls[: len(record.calls) - CALLS_KEPT]
        if not isinstance(part, (ThinkingPart, EditPart, UsagePart)):
            record.state.add_reply(part, REPLY_KEPT)
            self._dirty.add(record.state.id)  # re-indexed lazily: parts can come by the thousand

    def completed(self, record: Record, point: ForkPoint | None) -> None:
        """The turn's reply ended, leaving its agent session at `point` (None: nowhere to fork)."""
        if record.compacting and (key := answer_key("".join(p.value for p in record.state.reply if isinstance(p, TextPart)))) is not None:
            # The consumer sends this summary in place of the turns from now on: it names this conversation.
            self._summaries[key] = record.state.id
            record.summaries.append(key)
        if point is None:
            record.fork_points.pop(record.conversation_turn, None)
            return
        record.fork_points[record.conversation_turn] = point
        while len(record.fork_points) > MAX_FORK_POINTS:
            del record.fork_points[min(record.fork_points)]

    def marker(self, record: Record) -> Marker:
        """The marker ending the reply: it names this point of the conversation, after exactly this history."""
        seen_by_user = record.read.seen[-1][0] if record.read is not None else 0
        return Marker(record.state.id, record.conversation_turn, seen_by_user, trailing_digest(record.state.inputs))

    def forget(self, record: Record) -> None:
        for summary in record.summaries:
            if self._summaries.get(summary) == record.state.id:
                del self._summaries[summary]
        for call_id in record.calls:
            if self._calls.get(call_id) == record.state.id:
                del self._calls[call_id]
        for call_id in record.inherited:
            if (heirs := self._heirs.get(call_id)) is not None and record.state.id in heirs:
                heirs.remove(record.state.id)
                if not heirs:
                    del self._heirs[call_id]
        self._index.remove(record.state)
        self._records.pop(record.state.id, None)
        self._dirty.discard(record.state.id)
        self._whole.forget(record.state.id)
        if (key := record.opening) is not None:
            remaining = [c for c in self._by_opening.get(key, ()) if c != record.state.id]
            if remaining:
                self._by_opening[key] = remaining
            else:
                self._by_opening.pop(key, None)

    def _new(self, params: ChatParams, messages: tuple[Message, ...], conversation_id: str | None, *, throwaway: bool = False) -> Record:
        if conversation_id is None or conversation_id in self._records:
            conversation_id = uuid.uuid4().hex
        inherited = frozenset(c for m in messages for c in call_ids(m))
        record = Record(Conversation(conversation_id, params.agent, committed=root(params.agent), inputs=list(messages)), throwaway=throwaway, inherited=inherited)
        self._records[conversation_id] = record
        if not throwaway:
            # A fork (or a chat primed with one's history) carries our ids of the conversation it
            # came from: they name it too, where its own turns add none (`_by_evidence`).
            for call_id in inherited:
                if call_id in self._calls or call_id in self._heirs:
                    self._heirs.setdefault(call_id, []).append(conversation_id)
        return record

    def _earlier_reads(self, raw: Sequence[Any], found: MarkerAt | None) -> Iterator[Read]:
        """The readings of earlier requests this one may share its leading messages with: the
        conversation its marker names, and those that began with the same messages."""
        if found is not None and (named := self._records.get(found.marker.conversation)) is not None and named.read is not None:
            yield named.read
        for conversation_id in self._by_opening.get(opening(raw), ()):
            if (record := self._records.get(conversation_id)) is not None and record.read is not None:
                yield record.read

    def _match(self, params: ChatParams, read: Read, found: MarkerAt | None) -> tuple[Match, str | None, ForkPoint | None]:
        """The conversation a request continues: by our newest marker if it has one (`found`),
        else by content.

        Returns the match, for a new conversation the id it should take (a marker from an
        earlier backend run names a conversation this process does not hold: keep its name),
        and for a fork of a conversation held, where its agent session can be forked
        (`protocol/history/forking.py`).
        """
        for conversation_id in self._dirty:
            if conversation_id in self._records:
                self._index.update(self._records[conversation_id].state)
        self._dirty.clear()
        messages = read.messages
        new_conversation = Match(None, 0, False, read.after[0])
        if found is not None and not found.marker.follows(read.seen[found.index][0], partial(_summarised_digest, messages, found.index)):
            # Copied from another conversation (or the history before it was edited): only
            # the content can tell which conversation this is.
            log.info("a marker of conversation %s follows another history: matching by content", found.marker.conversation)
            found = None
        if found is None:
            if (summarised := self._by_summary(params, read)) is not None:
                return summarised, None, None
            match = self._index.match(params.agent, messages, read.prefixes())
            if match.conversation is None and (by_evidence := self._by_evidence(params, read)) is not None:
                return by_evidence, None, None
            return match, None, None
        marker = found.marker
        record = self._records.get(marker.conversation)
        if record is None:
            log.info("marker names conversation %s, which this backend does not hold: starting it afresh", marker.conversation)
            return new_conversation, marker.conversation, None
        if record.state.agent != params.agent:
            log.info("marker names conversation %s of another agent: a new conversation", marker.conversation)
            return new_conversation, None, None
        continued = match_after_marker(record.state, messages, found.index, marker.turn, record.conversation_turn, read.after)
        if continued is None:
            # Turns without a marker since this one (stopped replies, or a consumer that drops
            # markers): the content decides, within the conversation the marker names.
            by_content = self._index.match(params.agent, messages, read.prefixes())
            if by_content.conversation is record.state:
                return by_content, None, None
            if (by_evidence := self._by_evidence(params, read, record)) is not None:
                return by_evidence, None, None
            point = record.fork_points.get(marker.turn) if forks_after_marker(messages, found.index) else None
            log.info(
                "request forks conversation %s at turn %d (head %d): a new conversation, %s",
                marker.conversation,
                marker.turn,
                record.conversation_turn,
                "in a fork of its agent session where the agent can" if point is not None else "primed",
            )
            return new_conversation, None, point
        return continued, None, None

    def _by_summary(self, params: ChatParams, read: Read) -> Match | None:
        """The conversation whose summary the request carries in place of its turns (we answered
        the consumer's summarisation from its agent session): what follows the summary, after the
        last answer there, is new to that session (docs/how-it-works.md, "Compaction")."""
        messages = read.messages
        found = next(((i, k) for i, m in enumerate(messages) if (k := sent_summary_key(m)) is not None), None)
        if found is None:
            return None
        index, key = found
        record = self._records.get(self._summaries.get(key, ""))
        if record is None or record.state.agent != params.agent:
            return None
        start = index + 1 + last_assistant(messages[index + 1 :])
        log.info("the request carries the summary conversation %s answered: it goes on in its agent session", record.state.id)
        return Match(record.state, start, False, read.after[start])

    def _by_evidence(self, params: ChatParams, read: Read, only: Record | None = None) -> Match | None:
        """The conversation the newest of our tool-call ids in the request names, if the request
        goes on from where that conversation is (docs/DESIGN.md, "History and matching").

        For consumers that render history their own way: they drop the marker (parts they do not
        know), leave out a context message they sent before, render earlier tool rounds without
        their final text or with a note. Every consumer must echo our calls' ids, which are
        random and reach only the chat our reply went to. An id names the conversation whose reply
        made the call, and the forks that began with it in their history (an edited message whose
        turns made no call of their own yet): the newest fork first, as the chat shows the fork in
        place of what it replaced. Of these, the one is taken whose questions, turn by turn
        (`user_turns.user_turns`), are what the request asked before its newest turn, so an edited
        or retried message is still a fork. Ids of another conversation (but those in the history
        this one began with) are a mix of two chats: nobody's.
        """
        messages = read.messages
        named: list[str] = []
        where = len(messages)
        for index in range(len(messages) - 1, -1, -1):
            named = [c for i in call_ids(messages[index]) for c in self._named_by(i)]
            if named:
                where = index
                break
        for conversation_id in dict.fromkeys(named):
            record = self._records.get(conversation_id)
            if record is None or record.read is None or record.state.agent != params.agent or (only is not None and record is not only):
                continue
            if (match := self._goes_on(record, read, where)) is not None:
                return match
        return None

    def _named_by(self, call_id: str) -> list[str]:
        """The conversations one of our call ids may name: its forks, newest first, then the one
        whose reply made the call."""
        owner = self._calls.get(call_id)
        return [*reversed(self._heirs.get(call_id, ())), *([owner] if owner is not None else [])]

    def _goes_on(self, record: Record, read: Read, where: int) -> Match | None:
        """The request as the next step of `record`'s conversation, named by our call id at
        message `where`: its tool loop going on (the last model message carries the calls it
        waits on: what follows is new), or a new turn of the user's after everything it holds."""
        messages, owner = read.messages, record.state.id
        if any(self._calls.get(c, owner) != owner and c not in record.inherited for m in messages for c in call_ids(m)):
            log.info("a request mixes tool calls of conversation %s with another's: not that conversation", owner)
            return None
        assert record.read is not None
        turns = user_turns(messages, read.digests, record.notes)
        expected = asked(user_turns(record.read.messages, record.read.digests, record.notes))
        last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
        if last >= 0 and record.pending() & set(call_ids(messages[last])):
            start = last + 1
            if asked(t for t in turns if t.start < last) == expected and has_content(messages[start:]):
                log.info("request continues conversation %s's tool loop by its call ids", owner)
                return Match(record.state, start, False, read.after[start])
        if turns and turns[-1].start > max(where, last) and asked(turns[:-1]) == expected:
            start = turns[-1].start
            log.info("request continues conversation %s by its call ids, with a new turn", owner)
            return Match(record.state, start, False, read.after[start])
        return None


def _digest(message: Message) -> Digest:
    form = canonical(message)
    return message_digest(form) if form is not None else 0


NOTHING_TO_ANSWER = "Invalid params: messages: no user message to answer"
NOTHING_NEW_ASKED = "Nothing new to answer: this request continues a turn that has ended. Send a new message to go on."


def _answerable(context: tuple[Message, ...], new: tuple[Message, ...]) -> bool:
    return any(m.role == "user" for m in new) or bool(context)


def _summarised_digest(messages: Sequence[Message], marker_index: int) -> Digest | None:
    """What a marker in a summarised history follows: the digest of the messages before it.
    Worked out only when asked (`Marker.follows`): most requests never need it."""
    return trailing_digest(messages[:marker_index]) if is_summarised(messages) else None
