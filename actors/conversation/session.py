"""The Session actor: one per conversation, one ACP session.

A thin trio loop around the conversation's `TurnMachine` (`protocol/turn/machine.py`), which decides
everything a turn does: the loop waits for what the machine wants (the next turn from
History's mailbox, the agent's next event, the prompt prepared), feeds it in, and carries
out the effects that come back (parts and the end of a response to History, answers to the
agent, `session/prompt`, `session/cancel`). See "The turn machine" and "Actors and channels"
in `docs/DESIGN.md`.

Cancellation from VS Code arrives as the turn's cancel scope being cancelled by History.
Events from the agent connection and from the ToolBridge arrive on one channel the
Session owns, so one loop sees them in the order they happened.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

import attrs
import trio

from actors.agent.opening import Opened, open_planned
from actors.agent.pool import AgentPool
from actors.agent.session_handle import AgentSession
from actors.bridge.listener import BridgeListener
from actors.bridge.tool_bridge import ToolBridge
from actors.conversation.spares import Spares
from actors.shared.flow import REPLY_WINDOW, Window, part_cost
from actors.shared.mailbox import queued
from actors.shared.racing import race
from actors.store.catalog import AgentCatalog
from actors.store.sessions import SessionStore
from actors.store.transcript import Recorder
from protocol.acp import schema as acp
from protocol.acp.agent_options import (
    MODE,
    MODEL,
    Choice,
    Value,
    after_set,
    bypasses_permissions,
    find,
    is_model_key,
    next_change,
    pending_options,
    read_choices,
    set_request,
    updated,
)
from protocol.acp.commands import AgentCommand, read_commands
from protocol.acp.update_kinds import CHOICE_KINDS
from protocol.acp.usage import TurnUsage, UsageMeter
from protocol.bridge.tool_policy import bridged_tools
from protocol.history.channels import CompleteEvent, FailedEvent, PartEvent, SessionEvent, Turn
from protocol.history.compaction import compaction_prompt
from protocol.history.forking import fork_point, last_message_id
from protocol.history.prompt import build_prompt, latest_system
from protocol.host.workspace_folders import other_folders
from protocol.shared.failures import AgentError, Failure, FailureKind, failure
from protocol.shared.jsonrpc import RpcError
from protocol.shared.settings import Settings
from protocol.turn.events import (
    AcceptToolCalls,
    AgentEvent,
    AgentUpdates,
    Answer,
    CancelPrompt,
    Complete,
    CountUpdates,
    DropUpdates,
    Effect,
    EmitPart,
    Fail,
    ForgetToolCalls,
    MailboxClosed,
    Prepared,
    PrepareFailed,
    ReportUsage,
    SendPrompt,
    SetTimer,
    ShowUpdates,
    TimedOut,
    TurnArrived,
    TurnCancelled,
    UseTools,
)
from protocol.turn.events import Event as TurnEvent
from protocol.turn.machine import State, TurnMachine, Want
from protocol.turn.opening import Chat, Continued, EditedAt, Fresh, Opening, Origin, Remembered, restart_fork_turn
from protocol.turn.rendering import ToolCallTracker, render_updates, usage_part
from protocol.vscode.agent_identity import agent_key
from protocol.vscode.lm import Agent, Part, TextPart, ToolCallPart

log = logging.getLogger(__name__)


@attrs.frozen
class Delivery:
    """A turn as History hands it to its Session: the turn (plain data, what the turn machine
    sees) and beside it what only the trio loop holds."""

    turn: Turn
    # History cancels it on lm/cancel, or when a newer turn supersedes this one.
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    cancelled: trio.Event = attrs.field(factory=trio.Event)  # set with `scope`: for waits outside it
    # The text on its way to VS Code and not yet written: the Session waits while it is full
    # (`actors/shared/flow.py`); the request's writer gives back what it wrote.
    window: Window = attrs.field(factory=lambda: Window(REPLY_WINDOW))

    def cancel(self) -> None:
        """Cancel the turn (lm/cancel, a newer request, shutdown): its scope, and whatever waits on `cancelled`."""
        self.scope.cancel()
        self.cancelled.set()


class SessionActor:
    def __init__(
        self,
        conversation: str,
        agent: Agent,
        pool: AgentPool,
        mailbox: trio.MemoryReceiveChannel[Delivery],
        outbox: trio.MemorySendChannel[SessionEvent],
        *,
        after: trio.Event | None = None,
        bridges: BridgeListener,
        settings: Settings,
        recorder: Recorder | None = None,
        store: SessionStore | None = None,
        spares: Spares | None = None,
        catalog: AgentCatalog | None = None,
    ) -> None:
        """`spares`: sessions made ahead for prepared agents (`actors/conversation/spares.py`), taken by a new
        conversation; `catalog`: what agents offer and cost, learned from this session."""
        self.conversation = conversation
        self.agent = agent
        self._pool = pool
        self._mailbox = mailbox
        self._outbox = outbox
        self._bridges = bridges
        self._after = after  # the previous Session of this conversation (released), still ending
        self._settings = settings
        self._recorder = recorder
        self._store = store
        self._spares = spares
        self._catalog = catalog
        self._events_send, self._events = trio.open_memory_channel[AgentEvent](math.inf)
        self._deadline = math.inf  # when the machine's timer (SetTimer) runs out
        self._tracker = ToolCallTracker(conversation)
        self._visible: int | None = None  # the turn whose response has a text or tool-call part
        self._system_sent: str | None = None  # the system message last forwarded (if forwarding)
        self._choices: tuple[Choice, ...] = ()  # what the agent offers for this session, as it stands
        self._commands: tuple[AgentCommand, ...] | None = None  # its slash commands, as it last announced them
        self._folders_note: str | None = None  # the workspace's other folders, for an agent that takes no `additionalDirectories`
        self._applied: dict[str, str | bool] = {}  # the options' values as last wanted and seen to
        self._before: dict[str, str | bool | None] = {}  # options we set: their values before we did
        self._warned: set[tuple[str, str | bool]] = set()  # options we could not set, said once
        self._meter = UsageMeter()
        self._window: tuple[int, Window] | None = None  # the newest turn's window: its parts are counted there
        self._first: Delivery | None = None  # the first turn, from opening the session until `_serve` takes it
        self._delivered: dict[int, Delivery] = {}  # turn number → its delivery, until it is answered
        self._usage: TurnUsage | None = None  # the ended prompt's, for the response it completes
        self._message_id: str | None = None  # the agent's latest message in the running prompt (protocol/history/forking.py)
        self._conversation_turns: dict[int, int] = {}  # turn number → the conversation's own number (markers')

    async def run(self) -> None:
        if self._after is not None:
            await self._after.wait()  # it closes its agent session first: ours may load that one
        try:
            delivery = await self._mailbox.receive()
        except trio.EndOfChannel:
            return
        first = delivery.turn
        # How the session opens is one plan (protocol/turn/opening.py; docs/DESIGN.md, "Opening a
        # session"), from where the chat's session comes from and its first turn's tools.
        chat = Chat(await self._origin(first), first.cwd, first.tools, first.bridged)
        # Every folder of the workspace reaches the session (protocol/host/workspace_folders.py).
        chat = attrs.evolve(chat, others=other_folders(os.path.abspath(chat.folder or self._pool.cwd), first.folders))
        # A session made ahead (actors/conversation/spares.py) comes with its bridge and its events channel.
        spare = await self._spares.take(self.agent, chat) if self._spares is not None else None
        bridge: ToolBridge | None = None
        try:
            if spare is not None:
                self._events_send, self._events = spare.events_send, spare.events
                session, bridge = spare.session, spare.bridge
            else:
                opened = await self._opened(delivery, partial(open_planned, self._pool, self.agent, chat, self._bridges, self._events_send, recorder=self._recorder))
                session, bridge = opened.session, opened.bridge
                self._folders_note = opened.plan.folders_note  # told in its first prompt, where it takes no other folders
        except AgentError as exc:
            self._fail(first.number, exc.error, retire=True)
        else:
            if self._store is not None:
                self._store.save(self.conversation, agent_key(self.agent), session.id, os.path.abspath(first.cwd or os.getcwd()))
            self._take_choices(session)
            # A conversation may idle for days: no frame of ours holds its first turn (pasted
            # images) past its answer (docs/reliability.md, "Bounded memory"). `_serve` takes it.
            self._first = delivery
            del delivery, first, chat
            try:
                await self._serve(session, bridge)
            finally:
                session.close()
        finally:
            # The bridge is this conversation's, however it began: it ends with it.
            if bridge is not None:
                bridge.close()
                await bridge.ended.wait()

    async def _opened(self, first: Delivery, opening: Callable[[], Awaitable[Opened]]) -> Opened:
        """The session `opening` opens (starting the agent if need be), unless the first turn is
        cancelled first (lm/cancel of a turn whose agent is slow to start or to open it): then the
        conversation is over (AgentError, which retires it and its bridge; the request was
        answered -32800 already), an agent start it was waiting for is abandoned, and a session
        the agent opens later is closed (`AgentProcess._open_session`)."""
        opened: Opened | AgentError | None = None

        async def open_it() -> None:
            nonlocal opened
            try:
                opened = await opening()
            except AgentError as exc:
                opened = exc  # raised below

        await race(open_it, first.cancelled.wait)
        if opened is None:
            raise AgentError(failure(FailureKind.CANCELLED, "Request cancelled"))
        if isinstance(opened, AgentError):
            raise opened
        return opened

    async def _origin(self, first: Turn) -> Origin:
        """Where this conversation's agent session comes from (protocol/turn/opening.py): the one
        remembered for a conversation of an earlier backend run (with the fork point of the
        marker's turn, where it may fork there), the fork point an edit of history keeps
        (`Turn.fork`), the agent session the chat's opening names (a chat opened to continue one
        of the agent's own sessions), else nothing."""
        store = self._store
        found = await store.find(self.conversation, agent_key(self.agent)) if first.resumable and store else None
        if found is not None and store is not None:
            session_id, cwd, saved_turn = found
            marker_turn = first.conversation_turn - 1
            turn = restart_fork_turn(saved_turn, marker_turn, first.after_marker)
            point = await store.fork_point(self.conversation, turn) if turn is not None else None
            remembered = Remembered(session_id, cwd, saved_turn, marker_turn, point)
            if remembered.opening is not Opening.RESUME:
                # The chat lost or changed turns the saved session holds: never resumed past them.
                log.info("conversation %s goes on after turn %d, its saved session after turn %s: %s", self.conversation[:8], marker_turn, saved_turn, remembered.opening.value)
            return remembered
        if first.fork is not None:
            return EditedAt(first.fork)
        catalog = self._catalog
        named = catalog.continued(agent_key(self.agent), first.context) if catalog is not None else None
        if named is not None:
            return Continued(*named)
        return Fresh()

    async def _serve(self, session: AgentSession, bridge: ToolBridge) -> None:
        """The loop: wait for what the machine wants, feed it, carry out its effects. The first
        turn is `_first`, which it takes."""
        first, self._first = self._first, None
        assert first is not None
        machine = TurnMachine(cancel_timeout=self._settings.cancel_timeout)
        if session.holds_history:
            # `session/load` replays the conversation as updates; the user has seen it.
            for event in queued(self._events):
                if not isinstance(event, AgentUpdates):
                    self._carry_out(machine.handle(event), session, bridge)
                else:
                    _taken(event)
        self._carry_out(machine.handle(self._arrived(first, session)), session, bridge)
        del first
        while machine.wants is not Want.NOTHING:
            if machine.current is None:
                await self._step(machine, session, bridge)
            else:
                await self._answer(machine.current, machine, session, bridge)

    async def _answer(self, turn: Turn, machine: TurnMachine, session: AgentSession, bridge: ToolBridge) -> None:
        """Feed the machine while `turn` is its current one. Answered, the turn's delivery (its
        messages: pasted images) is no longer held (docs/reliability.md, "Bounded memory")."""
        delivery = self._delivered[turn.number]
        with delivery.scope:  # History cancels it on lm/cancel, or when a newer turn supersedes it
            while machine.current is turn:
                if machine.wants is Want.EVENT:
                    # Backpressure: while VS Code has not read what this turn already said,
                    # the agent's next events wait (and then the agent: `actors/shared/flow.py`).
                    await delivery.window.room()
                await self._step(machine, session, bridge)
        if machine.current is turn:
            self._carry_out(machine.handle(TurnCancelled(turn.number)), session, bridge)
        if machine.current is not turn:
            self._delivered.pop(turn.number, None)

    async def _step(self, machine: TurnMachine, session: AgentSession, bridge: ToolBridge) -> None:
        """Wait for one thing the machine wants, and carry out what it says to do."""
        match machine.wants:
            case Want.TURN if machine.state is State.IDLE:
                events = await self._turn_or_events(session)
            case Want.TURN:
                events = [await self._next_turn(session)]
            case Want.PREPARED:
                # What the agent said meanwhile goes first: an agent that exited gives the turn back.
                waiting: list[TurnEvent] = [_taken(event) for event in queued(self._events)]
                turn = machine.current
                assert turn is not None
                events = waiting or [await self._prepare(turn, session, bridge)]
            case _:
                events = await self._next_events()
                if machine.state is State.CANCELLING and isinstance(events[0], TimedOut):
                    log.warning("agent %s did not end a cancelled turn within %.1f s; retiring the conversation", session.agent_name, machine.cancel_timeout)
        for event in events:
            self._carry_out(machine.handle(event), session, bridge)

    async def _next_turn(self, session: AgentSession) -> TurnEvent:
        try:
            return self._arrived(await self._mailbox.receive(), session)
        except trio.EndOfChannel:
            return MailboxClosed()

    async def _turn_or_events(self, session: AgentSession) -> list[TurnEvent]:
        """Idle: the next turn, or what the agent says meanwhile, whichever comes first. No prompt
        runs, so what it asks is answered at once (refused), never kept until the next turn comes."""
        got: list[TurnEvent] = []

        async def turn() -> None:
            got.append(await self._next_turn(session))

        async def agent() -> None:
            try:
                got.extend(await self._next_events())
            except trio.EndOfChannel:  # the agent is gone (its AgentGone came already): only a turn now
                await trio.sleep_forever()

        await race(turn, agent)
        return got

    def _arrived(self, delivery: Delivery, session: AgentSession) -> TurnArrived:
        turn = delivery.turn
        self._window = (turn.number, delivery.window)
        self._delivered = {turn.number: delivery}  # an older turn is answered: the machine holds only this one
        self._conversation_turns = {turn.number: turn.conversation_turn}
        if self._store is not None:
            self._store.handed(self.conversation, session.id, turn.conversation_turn)  # what a restart may resume after
        return TurnArrived(self._as_sent(turn, session))

    def _as_sent(self, turn: Turn, session: AgentSession) -> Turn:
        """The turn as the machine sees it: only the tools the agent gets (the bridge offers
        them, and only their permissions are approved), and the history only to prime a new
        session: a forked, resumed or loaded one holds it (`opening.Try.primes`)."""
        tools = bridged_tools(turn.tools, turn.bridged, session.edits_handed_off)
        context = () if session.holds_history else turn.context
        return attrs.evolve(turn, tools=tools, context=context)

    def _take_choices(self, session: AgentSession) -> None:
        self._choices = read_choices(session.answer)
        if self._catalog is not None and not session.holds_history:
            self._catalog.learn_session(agent_key(self.agent), self._choices, images=session.accepts_images)
        mode = find(self._choices, MODE)
        if mode is not None and isinstance(mode.current, str) and bypasses_permissions(Value(mode.current, mode.label(mode.current))):
            log.warning("agent %s starts its sessions in mode %r: it acts without asking permission", session.agent_name, mode.label(mode.current))

    async def _apply_options(self, turn: Turn, session: AgentSession) -> Failure | None:
        """Set what the turn wants of the agent's options, where it changed, before prompting
        (the model first); options an earlier turn set and this one no longer names go back to
        what they were (`agent_options.pending_options`).

        A model the agent does not offer fails the turn (the user picked it): its error is
        returned. Another option it does not offer is logged and left as it is. Raises
        AgentError when the agent exited.
        """
        asked = dict(turn.options)
        wanted = pending_options(asked, self._applied, self._before)
        done: list[str] = []
        while (step := next_change(self._choices, wanted, done)) is not None:
            key, change = step
            done.append(key)
            if isinstance(change, str):
                if (failure := self._option_problem(key, wanted[key], f"agent {session.agent_name!r} {change}")) is not None:
                    return failure
                continue
            method, params = set_request(session.id, change)
            try:
                answer = await session.call(method, params)
            except RpcError as exc:
                problem = f"agent {session.agent_name!r} refused {change.choice.name} {change.value!r}: {exc.message}"
                if (failure := self._option_problem(key, change.value, problem)) is not None:
                    return failure
                continue
            self._before.setdefault(key, change.choice.current)
            self._choices = after_set(self._choices, change.choice, change.value, answer)
            if change.choice.category == MODEL and self._catalog is not None:
                # Before any other option is set: what this model offers, at the agent's values for it.
                self._catalog.learn_model(agent_key(self.agent), str(change.value), self._choices)
            log.info("agent %s, conversation %s: %s set to %s", session.agent_name, self.conversation[:8], change.choice.name, change.choice.label(change.value))
        for key in wanted:
            if key in asked:
                self._applied[key] = asked[key]
            else:
                self._applied.pop(key, None)  # set back
        return None

    def _option_problem(self, key: str, value: str | bool, problem: str) -> Failure | None:
        """The turn's failure for the model the user picked; any other option is logged (once)."""
        if is_model_key(key):
            return failure(FailureKind.OPTION_REFUSED, f"Cannot use this model: {problem}", option=key)
        if (key, value) not in self._warned:
            self._warned.add((key, value))
            log.warning("option %s=%r not set: %s", key, value, problem)
        return None

    # Preparing a prompt ---------------------------------------------------------------------

    async def _prepare(self, turn: Turn, session: AgentSession, bridge: ToolBridge) -> TurnEvent:
        """The turn's prompt, with the agent's options set as the turn wants them, and the
        agent told of the turn's tools (`UseTools` set them) before the prompt goes out."""
        system = latest_system(turn) if self._settings.forward_system else None
        if system == self._system_sent:
            system = None  # forwarded already; Copilot re-renders it every request
        else:
            self._system_sent = system
        names = frozenset(c.name for c in self._commands or ())
        if turn.compaction is not None:
            # Answered in the agent's own session: its compaction, else its own summary (docs/how-it-works.md, "Compaction").
            blocks = compaction_prompt(turn.compaction, names)
        else:
            blocks = build_prompt(turn, accepts_images=session.accepts_images, accepts_resources=session.accepts_resources, system=system, commands=names)
        if not blocks:
            return Prepared(())
        if self._folders_note is not None and not str(blocks[0].get("text", "")).startswith("/"):
            blocks.insert(0, acp.text_block(self._folders_note))  # its first prompt (a command goes alone): told once
            self._folders_note = None
        # The agent's options first (the model the user picked, the mode in settings).
        try:
            failure = await self._apply_options(turn, session)
        except AgentError as exc:
            return PrepareFailed(exc.error, retire=True)
        if failure is not None:
            return PrepareFailed(failure, retire=False)
        await bridge.announced()
        return Prepared(tuple(blocks))

    # Carrying out the machine's effects --------------------------------------------------------

    def _carry_out(self, effects: list[Effect], session: AgentSession, bridge: ToolBridge) -> None:
        for effect in effects:
            match effect:
                case ShowUpdates(turn=turn, updates=updates):
                    for part in self._observe(updates):
                        self._part(turn, part)
                case EmitPart(turn=turn, part=part):
                    self._part(turn, part)
                case Complete(turn=turn, empty_note=empty_note, ended_turn=ended_turn):
                    if self._visible != turn:
                        self._part(turn, TextPart(empty_note))  # consumers report a bare end as "no response"
                    # A response that ends the prompt says what the agent reported it cost. One
                    # that ends while the prompt goes on (tool calls, a card) says nothing: the
                    # agent's usage updates race its requests, and the prompt's end says it all.
                    usage, self._usage = self._usage, None
                    if usage is not None and (usage_shown := usage_part(usage)) is not None:
                        self._send(turn, PartEvent(usage_shown))
                    point = fork_point(session.id, self._message_id, ended_turn)
                    if self._store is not None and point is not None and (conversation_turn := self._conversation_turns.get(turn)) is not None:
                        self._store.left(self.conversation, conversation_turn, point)
                    self._send(turn, CompleteEvent(point))
                case Fail(turn=turn, error=error, retire=retire):
                    self._fail(turn, error, retire=retire)
                case Answer(handle=handle, reply=reply):
                    handle.answer(reply)
                case SendPrompt(blocks=blocks):
                    self._message_id = None
                    self._tracker.prompted(blocks)
                    self._meter.start_turn(list(blocks))
                    session.prompt(list(blocks))
                case CancelPrompt(then=then):
                    session.cancel(then=tuple(partial(answer.handle.answer, answer.reply) for answer in then))
                case CountUpdates(updates=updates):
                    self._meter.observe_all(updates)  # what it cost still counts
                case DropUpdates(updates=updates):
                    self._note_options(updates)
                case UseTools(tools=tools):
                    bridge.update_tools(tools)
                case AcceptToolCalls(accept=accept):
                    bridge.accept_calls(accept)
                case SetTimer(seconds=seconds):
                    self._deadline = math.inf if seconds is None else trio.current_time() + seconds
                case ReportUsage(model_id=model_id, usage=usage):
                    self._usage = self._report_usage(model_id, session, usage)
                case ForgetToolCalls():
                    self._tracker = ToolCallTracker(self.conversation)

    def _send(self, turn: int | None, event: PartEvent | CompleteEvent | FailedEvent) -> None:
        try:
            self._outbox.send_nowait(SessionEvent(self.conversation, turn, event))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # History is shutting down

    def _part(self, turn: int, part: Part) -> None:
        if isinstance(part, (TextPart, ToolCallPart)):
            self._visible = turn
        if self._window is not None and self._window[0] == turn:
            self._window[1].spend(part_cost(part))
        self._send(turn, PartEvent(part))

    def _fail(self, turn: int | None, error: Failure, *, retire: bool) -> None:
        self._send(turn, FailedEvent(error, retire))

    def _report_usage(self, model_id: str, session: AgentSession, prompt_usage: dict[str, Any] | None) -> TurnUsage:
        """The log shows what the prompt cost; the catalog learns the context window and bytes
        per token. Returns it, for the response's usage part."""
        usage = self._meter.finish(prompt_usage)
        if usage.reported:
            log.info("agent %s, conversation %s, turn usage: %s", session.agent_name, self.conversation[:8], usage.describe())
        if self._catalog is not None:
            self._catalog.learn_usage(agent_key(self.agent), model_id, usage)
        return usage

    def _observe(self, updates: Sequence[dict[str, Any]]) -> list[Part]:
        """Agent updates: what they change of the session's options and usage, and their parts
        (merged: chunks read together go out as one part)."""
        self._meter.observe_all(updates)
        self._note_options(updates)
        self._message_id = last_message_id(updates, self._message_id)
        return render_updates(updates, self._tracker)

    def _note_options(self, updates: Sequence[dict[str, Any]]) -> None:
        for update in updates:
            if update.get("sessionUpdate") in CHOICE_KINDS and (choices := updated(self._choices, update)) is not None:
                self._choices = choices
            elif (commands := read_commands(update)) is not None and commands != self._commands:
                self._commands = commands
                log.info("conversation %s: the agent announced %d command(s)", self.conversation[:8], len(commands))
                if self._catalog is not None:
                    self._catalog.learn_commands(agent_key(self.agent), commands)

    # Events ------------------------------------------------------------------------------------

    async def _next_events(self) -> list[TurnEvent]:
        """The next event, or the timer running out. Updates already queued behind an update
        come with it, so their parts go out merged."""
        if self._deadline == math.inf:
            event: AgentEvent = await self._events.receive()  # no cancel scope per event: this is the hot path
        else:
            received: AgentEvent | None = None
            with trio.move_on_at(self._deadline):
                received = await self._events.receive()
            if received is None:
                self._deadline = math.inf
                return [TimedOut()]
            event = received
        if not isinstance(event, AgentUpdates):
            return [event]
        _taken(event)
        updates = list(event.updates)
        for more in queued(self._events):
            if not isinstance(more, AgentUpdates):
                return [AgentUpdates(tuple(updates)), more]
            _taken(more)
            updates += more.updates  # bounded: what is queued is within the events window
        return [AgentUpdates(tuple(updates))]


def _taken(event: AgentEvent) -> AgentEvent:
    """The event as the Session took it off its channel: updates give back what they counted in
    the agent's window (`actors/shared/flow.py`), so its reader may read on."""
    if isinstance(event, AgentUpdates) and event.receipt is not None:
        event.receipt.taken()
    return event
