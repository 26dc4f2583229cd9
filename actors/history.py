"""The History actor: every conversation's state, and the only router of replies.

It matches each chat request to the conversation it continues (`Conversations`, its
transitions without trio, over `matching`), commits or discards the previous reply
accordingly, hands the conversation's Session actor a `Turn`, and forwards the Session's
events to the request's handler, dropping any that belong to an older turn. See "History
and matching" in `docs/DESIGN.md`. Four rules hold here, each tested:
a failed conversation is retired; a request never hijacks another conversation; stale
events are dropped by turn number; a newer request for a streaming conversation first
answers the old one -32800.
"""

from __future__ import annotations

import itertools
import logging
import math
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import trio

from actors.agent_process import AgentPool
from actors.flow import REPLY_WINDOW, Window
from actors.mailbox import queued
from actors.markers import Marker, MarkerCodec
from actors.matching import (
    Conversation,
    ConversationIndex,
    Match,
    is_summarisation,
    is_summarised,
    match_after_marker,
    root,
    trailing_digest,
)
from actors.reading import Read, opening, read_messages
from actors.release import ReleasePolicy, Use
from actors.messages import CompleteEvent, FailedEvent, PartEvent, Reply, SessionEvent, Turn, session_failure
from actors.rendering import split_context
from actors.session import SessionActor
from actors.session_store import SessionStore
from actors.settings import Settings
from actors.tool_bridge import BridgeListener
from protocol.jsonrpc import INVALID_PARAMS, REQUEST_CANCELLED, RpcError, id_key
from protocol.transcript import Recorder
from protocol.lm import AGENT_ACTION_TOOL, ChatParams, MarkerPart, Message, Part, ThinkingPart, ToolCallPart
from protocol.wire import WireError

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 2.0  # seconds the Sessions get, at shutdown, to tell their agents the turn is over
# Characters of a reply's text kept to match the request that continues it. No consumer sends a
# longer one back whole: it exceeds every model's input window (2M tokens hold about 8 MB of
# text), so the consumer trims or summarises it. Beyond it, nothing more of the reply is held.
REPLY_KEPT = 16 * 1024 * 1024


@attrs.frozen
class ChatRequest:
    request_id: object
    params: ChatParams
    reply: trio.MemorySendChannel[Reply] = attrs.field(eq=False)
    window: Window = attrs.field(factory=lambda: Window(REPLY_WINDOW), eq=False)  # its writer's backpressure (the Turn's)


@attrs.frozen
class CancelRequest:
    request_id: object


@attrs.frozen
class Shutdown:
    done: trio.Event = attrs.field(eq=False)


HistoryMessage = ChatRequest | CancelRequest | SessionEvent | Shutdown


@attrs.define(eq=False)
class _Streaming:
    request: ChatRequest
    turn: Turn
    seq: int  # the conversation's turn sequence number, named by this reply's marker

    @property
    def request_id(self) -> object:
        return self.request.request_id

    @property
    def reply(self) -> trio.MemorySendChannel[Reply]:
        return self.request.reply


@attrs.frozen
class MarkerAt:
    """The newest of our markers in a request: the message it is in, and what it names."""

    index: int
    marker: Marker


@attrs.define(eq=False)
class Record:
    """What History knows of one conversation besides its Session actor."""

    state: Conversation
    seq: int = 0  # turns this conversation has taken
    throwaway: bool = False  # a one-off session (a summary), never matched, retired when done
    resumable: bool = False  # named by a marker of a conversation this process no longer held (until its first turn)
    read: Read | None = None  # its latest request, as read: the next one reuses it


@attrs.frozen
class Route:
    """Where a chat request goes: the conversation, and what of the request is new to its agent."""

    record: Record
    read: Read
    start: int  # read.messages[start:] are new to the agent
    context: tuple[Message, ...]  # earlier history, for a conversation's first turn
    new: tuple[Message, ...]
    canceled: bool  # the previous reply was not accepted
    started: bool  # a new conversation: History starts its Session
    error: RpcError | None = None  # nothing to answer: the request fails (a new conversation is then not kept)


class Conversations:
    """History's transitions without trio: matching a request to its conversation, the turn it
    begins, the reply it grows, the marker that ends it, forgetting it.

    The History actor keeps one, and beside each record the Session actor and the request
    being answered; tests drive it directly (`tests/unit/test_matching.py`). See "History and
    matching" and "Identity and markers" in `docs/DESIGN.md`.
    """

    def __init__(self) -> None:
        self._index = ConversationIndex()
        self._records: dict[str, Record] = {}
        self._dirty: set[str] = set()  # conversations whose reply grew since they were indexed
        self._by_opening: dict[str, list[str]] = {}  # opening(messages) → conversations that began so

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self._records

    @property
    def indexed(self) -> int:
        """Conversations the index holds (every record but the throwaway ones)."""
        return len(self._index)

    def route(self, params: ChatParams, found: MarkerAt | None) -> Route | RpcError:
        """Read the request and find its conversation (by `found`, our newest marker in it,
        else by content), beginning the conversation's turn; an unreadable request's error."""
        try:
            read = read_messages(params.messages, root(params.agent), self._earlier_reads(params.messages, found))
        except WireError as exc:
            return RpcError(INVALID_PARAMS, f"Invalid params: {exc}")
        messages = read.messages
        if is_summarisation(messages):
            # Answered by a throwaway session, so the conversation's own agent session is not
            # polluted by the request or by its summary.
            record = self._new(params, messages, None, throwaway=True)
            return Route(record, read, 0, messages[:-1], messages[-1:], canceled=False, started=True)
        match, conversation_id = self._match(params, read, found)
        if match.conversation is None:
            context, new = split_context(messages)
            if not _answerable(context, new):
                return RpcError(INVALID_PARAMS, NOTHING_TO_ANSWER)
            record = self._new(params, messages, conversation_id)
            record.resumable = conversation_id is not None
            if record.resumable and found is not None:
                # Its turns go on numbering from the marker's, so an older marker of its first
                # life still reads as a fork, never as this life's head.
                record.seq = found.marker.turn
            return Route(record, read, 0, context, new, canceled=False, started=True)
        record = self._records[match.conversation.id]
        context, new = split_context(messages[match.start :])
        record.state.begin_turn(match.committed, list(messages[match.start :]), read.after[-1])
        error = None if _answerable(context, new) else RpcError(INVALID_PARAMS, NOTHING_TO_ANSWER)
        return Route(record, read, match.start, context, new, match.canceled, started=False, error=error)

    def begin(self, record: Record, read: Read) -> None:
        """The turn is handed to the conversation's Session: index what it was sent."""
        record.resumable = False  # only its first turn may load the agent's own session
        record.seq += 1
        if not record.throwaway:
            self._index.update(record.state)
            if record.read is None:
                self._by_opening.setdefault(opening(read.raw), []).append(record.state.id)
            record.read = read

    def reply(self, record: Record, part: Part) -> None:
        """A part of the reply streamed back (thinking never counts for matching)."""
        if not isinstance(part, ThinkingPart):
            record.state.add_reply(part, REPLY_KEPT)
            self._dirty.add(record.state.id)  # re-indexed lazily: parts can come by the thousand

    def marker(self, record: Record) -> Marker:
        """The marker ending the reply: it names this point of the conversation, after exactly this history."""
        return Marker(record.state.id, record.seq, record.state.seen(), trailing_digest(record.state.inputs))

    def forget(self, record: Record) -> None:
        self._index.remove(record.state)
        self._records.pop(record.state.id, None)
        self._dirty.discard(record.state.id)
        if record.read is not None:
            key = opening(record.read.raw)
            remaining = [c for c in self._by_opening.get(key, ()) if c != record.state.id]
            if remaining:
                self._by_opening[key] = remaining
            else:
                self._by_opening.pop(key, None)

    def _new(self, params: ChatParams, messages: tuple[Message, ...], conversation_id: str | None, *, throwaway: bool = False) -> Record:
        if conversation_id is None or conversation_id in self._records:
            conversation_id = uuid.uuid4().hex
        record = Record(Conversation(conversation_id, params.agent, committed=root(params.agent), inputs=list(messages)), throwaway=throwaway)
        self._records[conversation_id] = record
        return record

    def _earlier_reads(self, raw: Sequence[Any], found: MarkerAt | None) -> Iterator[Read]:
        """The readings of earlier requests this one may share its leading messages with: the
        conversation its marker names, and those that began with the same messages."""
        if found is not None and (named := self._records.get(found.marker.conversation)) is not None and named.read is not None:
            yield named.read
        for conversation_id in self._by_opening.get(opening(raw), ()):
            if (record := self._records.get(conversation_id)) is not None and record.read is not None:
                yield record.read

    def _match(self, params: ChatParams, read: Read, found: MarkerAt | None) -> tuple[Match, str | None]:
        """The conversation a request continues: by our newest marker if it has one (`found`),
        else by content.

        Returns the match, and for a new conversation the id it should take (a marker from an
        earlier backend run names a conversation this process does not hold: keep its name).
        """
        for conversation_id in self._dirty:
            if conversation_id in self._records:
                self._index.update(self._records[conversation_id].state)
        self._dirty.clear()
        messages = read.messages
        new_conversation = Match(None, 0, False, read.after[0])
        if found is not None and not found.marker.follows(
            read.after[found.index], lambda: trailing_digest(messages[: found.index]) if is_summarised(messages) else None
        ):
            # Copied from another conversation (or the history before it was edited): only
            # the content can tell which conversation this is.
            log.info("a marker of conversation %s follows another history: matching by content", found.marker.conversation)
            found = None
        if found is None:
            return self._index.match(params.agent, messages, read.prefixes()), None
        marker = found.marker
        record = self._records.get(marker.conversation)
        if record is None:
            log.info("marker names conversation %s, which this backend does not hold: starting it primed", marker.conversation)
            return new_conversation, marker.conversation
        if record.state.agent != params.agent:
            log.info("marker names conversation %s of another agent: a new conversation", marker.conversation)
            return new_conversation, None
        match = match_after_marker(record.state, messages, found.index, marker.turn, record.seq, read.after)
        if match is None:
            # Turns without a marker since this one (stopped replies, or a consumer that drops
            # markers): the content decides, within the conversation the marker names.
            by_content = self._index.match(params.agent, messages, read.prefixes())
            if by_content.conversation is record.state:
                return by_content, None
            log.info("request forks conversation %s at turn %d (head %d): a new conversation", marker.conversation, marker.turn, record.seq)
            return new_conversation, None
        return match, None


NOTHING_TO_ANSWER = "Invalid params: messages: no user message to answer"


def shutting_down() -> RpcError:
    return session_failure("The backend is shutting down", kind="shutdown")


def refuse(reply: trio.MemorySendChannel[Reply], error: RpcError) -> None:
    """Answer a chat request `error` and end its replies."""
    try:
        reply.send_nowait(Reply(error=error))
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    reply.close()


def _answerable(context: tuple[Message, ...], new: tuple[Message, ...]) -> bool:
    return any(m.role == "user" for m in new) or bool(context)


@attrs.define(eq=False)
class _Live:
    """A conversation held now: its record, its Session's mailbox, and the request being answered."""

    record: Record
    mailbox: trio.MemorySendChannel[Turn]
    outbox: trio.MemorySendChannel[SessionEvent]  # the Session's way back; closed when it is retired
    streaming: _Streaming | None = None

    @property
    def id(self) -> str:
        return self.record.state.id


class HistoryActor:
    def __init__(
        self,
        pool: AgentPool,
        settings: Settings,
        markers: MarkerCodec,
        recorder: Recorder | None = None,
        store: SessionStore | None = None,
        *,
        bridges: BridgeListener,
    ) -> None:
        self._pool = pool
        self._bridges = bridges  # every conversation's vscode_tools, on one listener
        self._store = store
        self._recorder = recorder
        self._settings = settings
        self._markers = markers
        self._send, self._receive = trio.open_memory_channel[HistoryMessage](math.inf)
        self._conversations = Conversations()
        self._live: dict[str, _Live] = {}
        self._by_request: dict[str, str] = {}  # request id key → conversation id
        self._turns = itertools.count(1)
        self._releases = ReleasePolicy(settings.max_conversations, settings.conversation_idle)
        self._ending: dict[str, trio.Event] = {}  # conversation id → set when its Session actor has ended

    @property
    def mailbox(self) -> trio.MemorySendChannel[HistoryMessage]:
        return self._send

    @property
    def conversations(self) -> int:
        """Conversations held now (each with its Session actor)."""
        return len(self._live)

    @property
    def max_conversations(self) -> int:
        return self._releases.limit

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            done = await self._serve(nursery)
            # Each Session winds down as on a release: its agent hears `session/cancel`, then
            # what it waits for (a permission, a tool call) is answered "no". An agent slow to
            # end its prompt is not waited for long: the pool stops it next.
            nursery.cancel_scope.deadline = trio.current_time() + SHUTDOWN_GRACE
        done.set()

    async def _serve(self, nursery: trio.Nursery) -> trio.Event:
        """Handle messages until Shutdown; returns its `done`, for once the Sessions have ended."""
        while True:
            message = await self._next_message()
            match message:
                case ChatRequest():
                    self._on_chat(message, nursery)
                case CancelRequest(request_id=request_id):
                    self._on_cancel(request_id)
                case SessionEvent():
                    self._on_session_event(message)
                case Shutdown(done=done):
                    self._shutdown()
                    return done
            if not (isinstance(message, SessionEvent) and isinstance(message.event, PartEvent)):
                self._release_due()  # parts (by the thousand) change no conversation's use

    async def _next_message(self) -> HistoryMessage | None:
        """The next message; None if a conversation's idle time runs out first.

        A message already queued is taken without arming a timer: while an agent streams,
        that is every part, and a cancel scope per part would cost a fifth of the throughput.
        """
        try:
            message = self._receive.receive_nowait()
        except trio.WouldBlock:
            with trio.move_on_at(self._releases.deadline()):
                return await self._receive.receive()
            return None
        await trio.lowlevel.cancel_shielded_checkpoint()  # others run between messages, as receive() lets them
        return message

    # Chat requests ---------------------------------------------------------------------------

    def _on_chat(self, request: ChatRequest, nursery: trio.Nursery) -> None:
        newest = self._markers.newest(request.params.messages)  # read before normalising drops markers
        found = MarkerAt(*newest) if newest is not None else None
        route = self._conversations.route(request.params, found)
        if isinstance(route, RpcError):
            request.reply.send_nowait(Reply(error=route))
            return
        if route.started:
            live = self._start_session(route.record, request.params, nursery)
        else:
            live = self._live[route.record.state.id]
            if live.streaming is not None:
                self._answer_cancelled(live)
        if route.error is not None:
            request.reply.send_nowait(Reply(error=route.error))
            return
        self._dispatch(live, request, route)

    def _dispatch(self, live: _Live, request: ChatRequest, route: Route) -> None:
        params = request.params
        tools = params.options.tools
        turn = Turn(
            number=next(self._turns),
            messages=route.new,
            context=route.context,
            canceled=route.canceled,
            tools=tuple(t for t in tools if t.name != AGENT_ACTION_TOOL),
            offers_agent_action=any(t.name == AGENT_ACTION_TOOL for t in tools),
            scope=trio.CancelScope(),
            cwd=params.cwd,
            resumable=live.record.resumable,
            model_id=params.model_id,
            options=params.agent_options.items,
            window=request.window,
            bridged=params.bridged_tools,
        )
        self._conversations.begin(live.record, route.read)
        live.streaming = _Streaming(request, turn, live.record.seq)
        if not live.record.throwaway:
            self._releases.used(live.id, trio.current_time(), Use.STREAMING)
        self._by_request[id_key(request.request_id)] = live.id
        live.mailbox.send_nowait(turn)

    def _start_session(self, record: Record, params: ChatParams, nursery: trio.Nursery) -> _Live:
        conversation_id = record.state.id
        mailbox_send, mailbox = trio.open_memory_channel[Turn](math.inf)
        live = _Live(record, mailbox_send, self._send.clone())
        self._live[conversation_id] = live
        # A conversation released (or retired) a moment ago may still be winding down its
        # Session; the new one waits for it, so the agent never sees the two interleaved.
        previous, self._ending[conversation_id] = self._ending.get(conversation_id), trio.Event()
        actor = SessionActor(
            conversation_id,
            params.agent,
            self._pool,
            mailbox,
            live.outbox,
            after=previous,
            bridges=self._bridges,
            settings=self._settings,
            recorder=self._recorder,
            store=self._store,
        )
        nursery.start_soon(self._run_session, actor, self._ending[conversation_id], name=f"session {conversation_id[:8]}")
        log.info("new conversation %s with %d message(s)", conversation_id, len(record.state.inputs))
        return live

    async def _run_session(self, actor: SessionActor, ended: trio.Event) -> None:
        try:
            await actor.run()
        finally:
            ended.set()
            if self._ending.get(actor.conversation) is ended:
                del self._ending[actor.conversation]

    # Cancellation ----------------------------------------------------------------------------

    def _on_cancel(self, request_id: object) -> None:
        conversation_id = self._by_request.get(id_key(request_id))
        live = self._live.get(conversation_id) if conversation_id else None
        if live is None or live.streaming is None or id_key(live.streaming.request_id) != id_key(request_id):
            log.debug("lm/cancel for unknown or finished request %r ignored", request_id)
            return
        self._answer_cancelled(live)

    def _answer_cancelled(self, live: _Live) -> None:
        """Answer the streaming request -32800 now; its Session cancels the agent's prompt."""
        streaming = live.streaming
        assert streaming is not None
        streaming.turn.cancel()
        self._finish(live, Reply(error=RpcError(REQUEST_CANCELLED, "Request cancelled")))
        if live.record.throwaway:
            self._retire(live)

    def _finish(self, live: _Live, reply: Reply) -> None:
        streaming = live.streaming
        assert streaming is not None
        live.streaming = None
        self._by_request.pop(id_key(streaming.request_id), None)
        if not live.record.throwaway and live.id in self._live:
            waiting = reply.complete and any(isinstance(p, ToolCallPart) for p in live.record.state.reply)
            self._releases.used(live.id, trio.current_time(), Use.WAITING if waiting else Use.IDLE)
        try:
            streaming.reply.send_nowait(reply)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the handler is gone (connection closing)
        streaming.reply.close()

    # Session events --------------------------------------------------------------------------

    def _on_session_event(self, message: SessionEvent) -> None:
        live = self._live.get(message.conversation)
        if live is None:
            return
        event = message.event
        if isinstance(event, FailedEvent) and event.retire:
            streaming = live.streaming
            self._retire(live)
            if streaming is not None and message.turn != streaming.turn.number:
                # The session ended before it took the waiting request's turn: between turns
                # (its agent stopped while idle, or ignored a cancel), or still on the older
                # turn this request replaced (its agent exited just then). Nothing of this
                # request reached the agent, so it starts afresh.
                live.streaming = None
                self._by_request.pop(id_key(streaming.request_id), None)
                log.info("conversation %s ended between turns (%s); starting it afresh", live.id, event.error.message)
                self._on_chat(streaming.request, self._nursery)
            elif streaming is not None:
                self._finish(live, Reply(error=event.error))
            return
        streaming = live.streaming
        if streaming is None or streaming.turn.number != message.turn:
            log.debug("dropped a stale event of turn %s for conversation %s", message.turn, message.conversation)
            return
        match event:
            case PartEvent(part=part):
                self._conversations.reply(live.record, part)
                self._forward(streaming, Reply(part=part))
            case CompleteEvent():
                if not live.record.throwaway:
                    token = self._markers.encode(self._conversations.marker(live.record))
                    self._forward(streaming, Reply(part=MarkerPart(token)))
                self._finish(live, Reply(complete=True))
            case FailedEvent(error=error):
                self._finish(live, Reply(error=error))
        if live.record.throwaway and live.streaming is None:
            self._retire(live)

    def _forward(self, streaming: _Streaming, reply: Reply) -> None:
        try:
            streaming.reply.send_nowait(reply)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    def _retire(self, live: _Live) -> None:
        log.info("conversation %s retired", live.id)
        self._conversations.forget(live.record)
        self._live.pop(live.id, None)
        self._releases.forget(live.id)
        live.mailbox.close()
        live.outbox.close()  # whatever its Session still says is about a conversation that is gone

    # Releasing idle conversations ----------------------------------------------------------

    def _release_due(self) -> None:
        for conversation_id in self._releases.due(trio.current_time()):
            if (live := self._live.get(conversation_id)) is not None:
                self._release(live)

    def _release(self, live: _Live) -> None:
        """End a conversation the user has left; its next request brings it back.

        Never one that is streaming (the policy keeps those). Its Session sees its mailbox
        close: between turns it closes its agent session and its bridge; waiting on VS Code, it
        first answers what the agent waits for, as for a cancel. The conversation's marker then
        names a conversation this process does not hold, which is the restart path.
        """
        assert live.streaming is None
        log.info("conversation %s released (%d live)", live.id, len(self._live) - 1)
        self._retire(live)

    # Shutdown --------------------------------------------------------------------------------

    def _shutdown(self) -> None:
        error = shutting_down()
        for live in list(self._live.values()):
            if live.streaming is not None:
                live.streaming.turn.cancel()
                self._finish(live, Reply(error=error))
            self._retire(live)
        # A request read just before the input ended may be queued behind Shutdown: answered too.
        # Then the mailbox closes, so one that comes later is refused at once (the backend's
        # handler answers it), never left waiting for an actor that has stopped.
        for message in queued(self._receive):
            if isinstance(message, ChatRequest):
                refuse(message.reply, error)
            elif isinstance(message, Shutdown):
                message.done.set()
        self._receive.close()

    async def shutdown(self) -> None:
        """Answer every pending request, stop every session; returns when done."""
        done = trio.Event()
        try:
            self._send.send_nowait(Shutdown(done))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return  # shut down already
        await done.wait()

