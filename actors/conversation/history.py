"""The History actor: every conversation's state, and the only router of replies.

It matches each chat request to the conversation it continues (`protocol/history/conversations.py`,
its transitions without trio, over `matching`), commits or discards the previous reply
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

import attrs
import trio

from actors.agent.pool import AgentPool
from actors.bridge.listener import BridgeListener
from actors.conversation.session import Delivery, SessionActor
from actors.conversation.spares import Spares
from actors.shared.flow import REPLY_WINDOW, Window
from actors.shared.mailbox import queued
from actors.store.catalog import AgentCatalog
from actors.store.sessions import SessionStore
from actors.store.transcript import Recorder
from protocol.history.channels import CompleteEvent, FailedEvent, PartEvent, Reply, SessionEvent, Turn
from protocol.history.conversations import Conversations, MarkerAt, Record, Route
from protocol.history.markers import MarkerCodec
from protocol.history.release import ReleasePolicy, Use
from protocol.shared.failures import Failure, FailureKind, failure
from protocol.shared.jsonrpc import id_key
from protocol.shared.settings import Settings
from protocol.turn.fs_edits import ROUTED as ROUTED_EDITS
from protocol.vscode.lm import AGENT_ACTION_TOOL, ASK_TOOL, TODO_TOOL, ChatParams, MarkerPart, ToolCallPart

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 2.0  # seconds the Sessions get, at shutdown, to tell their agents the turn is over


@attrs.frozen
class ChatRequest:
    request_id: object
    params: ChatParams
    reply: trio.MemorySendChannel[Reply] = attrs.field(eq=False)
    window: Window = attrs.field(factory=lambda: Window(REPLY_WINDOW), eq=False)  # its writer's backpressure (its turn's Delivery)


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
    delivery: Delivery

    @property
    def turn(self) -> Turn:
        return self.delivery.turn

    @property
    def request_id(self) -> object:
        return self.request.request_id

    @property
    def reply(self) -> trio.MemorySendChannel[Reply]:
        return self.request.reply


def shutting_down() -> Failure:
    return failure(FailureKind.SHUTDOWN, "The backend is shutting down")


def refuse(reply: trio.MemorySendChannel[Reply], error: Failure) -> None:
    """Answer a chat request `error` and end its replies."""
    try:
        reply.send_nowait(Reply(error=error))
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    reply.close()


@attrs.define(eq=False)
class _Live:
    """A conversation held now: its record, its Session's mailbox, and the request being answered."""

    record: Record
    mailbox: trio.MemorySendChannel[Delivery]
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
        *,
        bridges: BridgeListener,
        store: SessionStore | None = None,  # none: conversations are not remembered across runs
        spares: Spares | None = None,
        catalog: AgentCatalog | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        self._pool = pool
        self._spares = spares  # handed to each new conversation's Session, with the catalog
        self._catalog = catalog
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
        if isinstance(route, Failure):
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
        resumable = live.record.resumable
        self._conversations.begin(live.record, route.read)
        turn = Turn(
            number=next(self._turns),
            messages=route.new,
            context=route.context,
            cancelled=route.cancelled,
            tools=tuple(t for t in tools if t.name != AGENT_ACTION_TOOL),
            offers_agent_action=any(t.name == AGENT_ACTION_TOOL for t in tools),
            offers_todo_list=any(t.name == TODO_TOOL for t in tools),
            offers_questions=any(t.name == ASK_TOOL for t in tools),
            edit_tools=frozenset(t.name for t in tools if t.name in ROUTED_EDITS),
            cwd=params.cwd,
            resumable=resumable,
            conversation_turn=live.record.conversation_turn,
            model_id=params.model_id,
            options=params.agent_options.items,
            bridged=params.bridged_tools,
            fork=route.fork if route.started else None,
            after_marker=route.after_marker,
            compaction=route.compaction,
            folders=params.folders,
        )
        delivery = Delivery(turn, window=request.window)
        live.streaming = _Streaming(request, delivery)
        if not live.record.throwaway:
            self._releases.used(live.id, trio.current_time(), Use.STREAMING)
        self._by_request[id_key(request.request_id)] = live.id
        live.mailbox.send_nowait(delivery)

    def _start_session(self, record: Record, params: ChatParams, nursery: trio.Nursery) -> _Live:
        conversation_id = record.state.id
        mailbox_send, mailbox = trio.open_memory_channel[Delivery](math.inf)
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
            spares=self._spares,
            catalog=self._catalog,
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
        streaming.delivery.cancel()
        self._finish(live, Reply(error=failure(FailureKind.CANCELLED, "Request cancelled")))
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
            case CompleteEvent(fork_point=point):
                if not live.record.throwaway:
                    self._conversations.completed(live.record, point)
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
                live.streaming.delivery.cancel()
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

