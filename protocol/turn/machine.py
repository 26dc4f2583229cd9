"""The turn machine: what a conversation's Session does on each event. No awaits, no clock, no I/O.

Two words, used the same way everywhere in `actors/`:

- a **turn** is one VS Code chat request as its conversation sees it (`messages.Turn`). Every
  turn is answered exactly once: completed, failed, or cancelled by VS Code (History answers
  that one itself, and the machine says nothing more about the turn);
- a **prompt** is one ACP `session/prompt`: the agent's work on what it was sent. A prompt
  spans several turns when the agent needs VS Code in between (a permission card, VS Code's
  own tools): the turn that asked is completed with tool calls, and the next turn, if it is
  exactly their results, carries the same prompt on.

The Session actor (`actors/conversation/session.py`) is the machine's trio loop, in the manner of h11: it
waits for what `TurnMachine.wants` (the next turn from History, the agent's next event, or
the prompt prepared), feeds it to `TurnMachine.handle`, and carries out the effects it
returns, in order. The machine never reads anything else, so tests drive it through any
order of events without trio (`tests/unit/test_turn.py`). Its words are `protocol/turn/events.py`'s,
the rules it applies `protocol/turn/rules.py`'s and `protocol/turn/permissions.py`'s; which of the agent's
requests it acts on, refuses or keeps in which state is one table, `REQUESTS`. See "The turn
machine" in `docs/DESIGN.md`.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from protocol.acp import schema as acp
from protocol.acp.update_kinds import UpdateKind
from protocol.bridge.tool_names import ToolNames, elicited_bridged_tool
from protocol.host.autorun import refusal
from protocol.shared.failures import FailureKind, failure
from protocol.turn import elicitation, fs_edits
from protocol.turn.events import (
    AcceptToolCalls,
    AgentEvent,
    AgentGone,
    AgentUpdates,
    Answer,
    CancelPrompt,
    Complete,
    CountUpdates,
    DropUpdates,
    Effect,
    EmitPart,
    Event,
    Fail,
    FileWriteRequested,
    ForgetToolCalls,
    MailboxClosed,
    PermissionRequested,
    Prepared,
    PrepareFailed,
    PromptEnded,
    PromptErrored,
    QuestionAsked,
    ReportUsage,
    Request,
    SendPrompt,
    SetTimer,
    ShowUpdates,
    TimedOut,
    ToolRequested,
    TurnArrived,
    TurnCancelled,
    UseTools,
)
from protocol.turn.permissions import Permit, agent_action_parameters, permission_outcome, permission_policy
from protocol.turn.rules import (
    ANNOUNCED_WAIT,
    CANCELLED_CALL,
    EMPTY_REPLY,
    ENDED_CALL,
    GATHER_WINDOW,
    NO_PROMPT_CALL,
    NO_PROMPT_REQUEST,
    NOTHING_NEW,
    REFUSED_NOTE,
    STOP_NOTES,
    UNANSWERED_CALL,
    PendingAsk,
    PendingCall,
    PendingPermission,
    PendingQuestion,
    PendingWrite,
    awaited_results,
    batch_wait,
    new_call_id,
    results_before_moving_on,
    todo_list,
    todo_note,
)
from protocol.vscode.lm import AGENT_ACTION_TOOL, ASK_TOOL, TODO_TOOL, TextPart, ToolCallPart

if TYPE_CHECKING:
    from protocol.history.channels import Turn


# States ---------------------------------------------------------------------------------------


class State(enum.Enum):
    IDLE = "idle"  # no turn in hand
    PREPARING = "preparing"  # a turn in hand: the loop sets the agent's options and builds its prompt
    STREAMING = "streaming"  # the agent works on a prompt; its updates go to the turn
    GATHERING = "gathering"  # the agent called VS Code tools; calls made within GATHER_WINDOW join them
    WAITING = "waiting"  # the turn was completed with tool calls; the next turn may be their results
    CANCELLING = "cancelling"  # `session/cancel` is out; waiting (bounded) for the prompt's end
    ENDED = "ended"  # the conversation cannot go on (its agent is gone), or History closed it


class Want(enum.Enum):
    """What the loop must wait for next."""

    TURN = "turn"  # the next turn from History (or the mailbox's end)
    PREPARED = "prepared"  # the current turn's prompt: `Prepared` or `PrepareFailed`
    EVENT = "event"  # the agent's (or the bridge's) next event, or the timer
    NOTHING = "nothing"  # ended


_WANTS = {
    State.IDLE: Want.TURN,
    State.WAITING: Want.TURN,
    State.PREPARING: Want.PREPARED,
    State.STREAMING: Want.EVENT,
    State.GATHERING: Want.EVENT,
    State.CANCELLING: Want.EVENT,
    State.ENDED: Want.NOTHING,
}

_HOLDS_TURN = frozenset({State.PREPARING, State.STREAMING, State.GATHERING})  # VS Code may still cancel it
# A prompt of the conversation runs: the agent may call VS Code's tools (`AcceptToolCalls`).
_PROMPTING = frozenset({State.STREAMING, State.GATHERING, State.WAITING, State.CANCELLING})

# The agent's requests ---------------------------------------------------------------------------


@attrs.frozen
class RequestRule:
    """How the machine takes one kind of the agent's requests, by state: acted on (its handler
    decides) in `acted_on`; answered at once with `refusals[state]` where one is given; kept
    otherwise, in order, and acted on (or refused) once the state allows (`_defer`)."""

    acted_on: frozenset[State]
    refusals: Mapping[State, Any]


# Every request is answered exactly once: so every kind has a refusal for a prompt cancelled and for
# a conversation ended (`tests/unit/test_turn.py` checks), and whatever is kept when the machine ends
# is answered from this table. A request made with no prompt running (idle, or preparing the next) is
# about no turn, and refused at once: kept, a `tools/call` would become the next prompt's tool call,
# the answer to a question it is not about (the bridge refuses such calls itself, this one was on its
# way), and a permission, a question or a write would be put to a user who is asking something else.
_NO_PROMPT: Mapping[State, Any] = {State.IDLE: NO_PROMPT_REQUEST, State.PREPARING: NO_PROMPT_REQUEST}
REQUESTS: Mapping[type[Request], RequestRule] = {
    PermissionRequested: RequestRule(
        frozenset({State.STREAMING, State.GATHERING}),
        {State.CANCELLING: acp.CANCELLED_OUTCOME, State.ENDED: acp.CANCELLED_OUTCOME, **_NO_PROMPT},
    ),
    QuestionAsked: RequestRule(
        frozenset({State.STREAMING, State.GATHERING}), {State.CANCELLING: elicitation.CANCEL, State.ENDED: elicitation.CANCEL, **_NO_PROMPT}
    ),
    FileWriteRequested: RequestRule(frozenset({State.STREAMING}), {State.CANCELLING: fs_edits.CANCELLED, State.ENDED: fs_edits.CANCELLED, **_NO_PROMPT}),
    ToolRequested: RequestRule(
        frozenset({State.STREAMING, State.GATHERING}),
        {State.CANCELLING: CANCELLED_CALL, State.ENDED: ENDED_CALL, State.IDLE: NO_PROMPT_CALL, State.PREPARING: NO_PROMPT_CALL},
    ),
}
REQUEST_TYPES = tuple(REQUESTS)  # what `isinstance` takes for "a request of the agent's"


def _answers_after_cancel(effects: list[Effect]) -> list[Effect]:
    """Answers that come after a `CancelPrompt` in one step (what the agent asked meanwhile,
    answered "cancelled") go out once `session/cancel` has: ACP wants the cancel first, and an
    agent that reads a refusal before it takes it for a failed tool and goes on working."""
    for index, effect in enumerate(effects):
        if isinstance(effect, CancelPrompt):
            after = effects[index + 1 :]
            answers = tuple(e for e in after if isinstance(e, Answer))
            if not answers:
                return effects
            return [*effects[:index], CancelPrompt((*effect.then, *answers)), *(e for e in after if not isinstance(e, Answer))]
    return effects


class TurnMachineError(Exception):
    """The loop fed an event the machine does not want now (see `TurnMachine.wants`)."""


class TurnMachine:
    """One conversation's turns and prompts; see the module's docstring and `docs/DESIGN.md`."""

    def __init__(self, *, cancel_timeout: float, gather_window: float = GATHER_WINDOW, new_id: Callable[[], str] = new_call_id) -> None:
        self.cancel_timeout = cancel_timeout
        self.gather_window = gather_window
        self._new_id = new_id
        self.state = State.IDLE
        self._turn: Turn | None = None  # the turn being answered; in WAITING, the one that asked
        self._calls: list[PendingCall] = []  # GATHERING, WAITING: VS Code tool calls emitted
        self._asked: PendingAsk | None = None  # WAITING: the card or question shown
        self._refused = False  # the user said no to the prompt's latest permission
        self._todo: dict[str, Any] | None = None  # the prompt's plan as last mirrored into Copilot's todo widget
        self._after_todo: int | None = None  # the turn that carries the prompt on after only that widget's round
        self._next: Turn | None = None  # CANCELLING: the turn to prepare once the prompt has ended
        self._announced = 0  # bridged calls the agent was permitted and has not made yet (`batch_wait`)
        self._closing = False  # CANCELLING: History closed the conversation meanwhile
        # Agent events that came when they could not be acted on (while idle, preparing,
        # waiting on VS Code, or ending a gathering): acted on, in order, once they can be.
        self._deferred: collections.deque[AgentEvent] = collections.deque()

    @property
    def wants(self) -> Want:
        return _WANTS[self.state]

    @property
    def current(self) -> Turn | None:
        """The turn VS Code may still cancel (its cancel scope is the loop's to watch)."""
        return self._turn if self.state in _HOLDS_TURN else None

    @property
    def prompting(self) -> bool:
        """A prompt of this conversation runs: the agent's `tools/call`s are taken."""
        return self.state in _PROMPTING

    def handle(self, event: Event) -> list[Effect]:
        out: list[Effect] = []
        prompting = self.prompting
        self._handle(event, out)
        if self.state in (State.STREAMING, State.GATHERING, State.CANCELLING):
            while self._deferred and self.state in (State.STREAMING, State.GATHERING, State.CANCELLING):
                self._handle(self._deferred.popleft(), out)
        if self._deferred and any(self.state in rule.refusals for rule in REQUESTS.values()):
            # Kept while the prompt waited on VS Code, and that prompt ended first: what the state
            # refuses is refused now (`REQUESTS`).
            refused = [e for e in self._deferred if isinstance(e, REQUEST_TYPES) and self.state in REQUESTS[type(e)].refusals]
            if refused:
                self._deferred = collections.deque(e for e in self._deferred if not any(e is r for r in refused))
                out.extend(self._refusal(e) for e in refused)
        if self.prompting != prompting:
            out.append(AcceptToolCalls(self.prompting))
        return _answers_after_cancel(out)

    # Dispatch ---------------------------------------------------------------------------------

    def _handle(self, event: Event, out: list[Effect]) -> None:
        match event:
            case AgentUpdates():
                self._on_updates(event, out)
            case PermissionRequested() | QuestionAsked() | FileWriteRequested() | ToolRequested():
                self._on_request(event, out)
            case PromptEnded() | PromptErrored():
                self._on_prompt_end(event, out)
            case AgentGone():
                self._on_agent_gone(event, out)
            case TimedOut():
                self._on_timeout(out)
            case TurnArrived(turn=turn):
                self._on_turn(turn, out)
            case MailboxClosed():
                self._on_closed(out)
            case TurnCancelled(number=number):
                self._on_cancelled(number, out)
            case Prepared(blocks=blocks):
                self._on_prepared(blocks, out)
            case PrepareFailed(error=error, retire=retire):
                self._expect(State.PREPARING, event)
                out.append(Fail(self._number(), error, retire))
                self._end(out) if retire else self._idle()

    def _expect(self, state: State, event: Event) -> None:
        if self.state is not state:
            raise TurnMachineError(f"{type(event).__name__} while {self.state.value}")

    def _number(self) -> int:
        assert self._turn is not None
        return self._turn.number

    # History's side ---------------------------------------------------------------------------

    def _on_turn(self, turn: Turn, out: list[Effect]) -> None:
        if self.state is State.IDLE:
            self._start(turn, out)
            return
        self._expect(State.WAITING, TurnArrived(turn))
        ids = list(self._asked.call_ids) if self._asked is not None else [call.call_id for call in self._calls]
        results = awaited_results(turn, ids)
        if results is None:
            # The user moved on: the prompt is cancelled, then this turn is prepared afresh. A
            # call VS Code ran before the new message (Copilot does, at its request limit) is
            # answered with its real result first, so the agent hears what really happened.
            ran = results_before_moving_on(turn, ids) if self._asked is None else {}
            out.extend(Answer(call.handle, ran[call.call_id]) for call in self._calls if call.handle is not None and call.call_id in ran)
            self._calls = [call for call in self._calls if call.call_id not in ran]
            self._cancel(self._owed(), out, next_turn=turn)
            return
        if self._asked is not None:
            out.append(Answer(self._asked.handle, self._asked.reply_all(results)))
            self._refused = self._asked.refused(results[self._asked.call_id])
        else:
            out.extend(Answer(call.handle, results[call.call_id]) for call in self._calls if call.handle is not None)
            self._refused = False
            self._after_todo = turn.number if all(call.handle is None for call in self._calls) else None
        self._asked, self._calls = None, []
        self._turn = turn
        self.state = State.STREAMING
        out.append(UseTools(turn.tools))

    def _start(self, turn: Turn, out: list[Effect]) -> None:
        gone = next((e for e in self._deferred if isinstance(e, AgentGone)), None)
        if gone is not None:
            out.append(Fail(None, gone.error, retire=True))  # History starts the turn afresh
            self._end(out)
            return
        self._turn = turn
        self.state = State.PREPARING
        out.append(UseTools(turn.tools))

    def _on_prepared(self, blocks: tuple[dict[str, Any], ...], out: list[Effect]) -> None:
        self._expect(State.PREPARING, Prepared(blocks))
        number = self._number()
        if not blocks:
            out += [EmitPart(number, TextPart(NOTHING_NEW)), Complete(number)]
            self._idle()
            return
        out.append(SendPrompt(blocks))
        self._refused, self._todo, self._announced = False, None, 0
        self.state = State.STREAMING

    def _on_cancelled(self, number: int, out: list[Effect]) -> None:
        if self.state not in _HOLDS_TURN or self._number() != number:
            return  # answered already
        if self.state is State.PREPARING:
            self._idle()  # nothing was sent to the agent
            return
        # The gathered calls are answered after session/cancel has gone out, as ACP wants.
        self._cancel(tuple(Answer(call.handle, CANCELLED_CALL) for call in self._calls if call.handle is not None), out, next_turn=None)

    def _on_closed(self, out: list[Effect]) -> None:
        if self.state is State.IDLE:
            self._end(out)
            return
        self._expect(State.WAITING, MailboxClosed())
        self._cancel(self._owed(), out, next_turn=None)
        self._closing = True

    # The agent's side -------------------------------------------------------------------------

    def _on_request(self, event: Request, out: list[Effect]) -> None:
        """One of the agent's requests, as `REQUESTS` says for the state: acted on, refused, or kept."""
        rule = REQUESTS[type(event)]
        if self.state in rule.acted_on:
            self._ACTS[type(event)](self, event, out)
        elif self.state in rule.refusals:
            out.append(self._refusal(event))
        else:
            self._defer(event, out)

    def _refusal(self, event: Request) -> Answer:
        return Answer(event.handle, REQUESTS[type(event)].refusals[self.state])

    def _defer(self, event: AgentEvent, out: list[Effect]) -> None:
        if self.state is State.GATHERING:
            # The agent did something else: the calls gathered go to VS Code now, and the
            # event is acted on once their results are in (or the prompt is cancelled).
            self._deferred.appendleft(event)
            out += [SetTimer(None), Complete(self._number())]
            self.state = State.WAITING
        else:
            self._deferred.append(event)

    def _on_updates(self, event: AgentUpdates, out: list[Effect]) -> None:
        if self.state is State.STREAMING:
            self._show(event.updates, out)
        elif self.state is State.CANCELLING:
            out.append(CountUpdates(event.updates))
        elif self.state in (State.IDLE, State.PREPARING):
            out.append(DropUpdates(event.updates))
        elif self.state is not State.ENDED:
            self._defer(event, out)

    def _show(self, updates: tuple[dict[str, Any], ...], out: list[Effect]) -> None:
        """Updates as the turn's parts; where the turn offers Copilot's todo widget, a plan that
        changed goes there instead: the turn completes with a `manage_todo_list` call mirroring it,
        and what the agent sent after it waits for the next turn (the call's result, which nobody
        else waits for). The agent is not held up: it never learns of the round."""
        turn = self._turn
        assert turn is not None
        if turn.offers_todo_list:
            for index, update in enumerate(updates):
                if update.get("sessionUpdate") != UpdateKind.PLAN:
                    continue
                todo = todo_list(update)
                if todo == self._todo:
                    continue  # unchanged: nothing to show
                shown_before = tuple(u for u in updates[:index] if u.get("sessionUpdate") != UpdateKind.PLAN)
                if shown_before:
                    out.append(ShowUpdates(turn.number, shown_before))
                if rest := updates[index + 1 :]:
                    self._deferred.appendleft(AgentUpdates(rest))
                call_id = self._new_id()
                self._todo = todo
                self._calls = [PendingCall(call_id, None)]
                out += [EmitPart(turn.number, ToolCallPart(call_id, TODO_TOOL, todo)), Complete(turn.number)]
                self.state = State.WAITING
                return
            updates = tuple(u for u in updates if u.get("sessionUpdate") != UpdateKind.PLAN)  # each unchanged
        if updates:
            out.append(ShowUpdates(turn.number, updates))

    def _on_permission(self, event: PermissionRequested, out: list[Effect]) -> None:
        """Approved for one of the turn's bridged tools; while gathering, any other is kept until
        the batch is answered; else asked on a card, or rejected (`permission_policy`)."""
        turn = self._turn
        assert turn is not None
        permit = permission_policy(event.params, ToolNames.of(t.name for t in turn.tools).to_consumer, turn.offers_agent_action)
        if permit is Permit.APPROVE:
            # A call of one of our bridged tools is announced: approved (VS Code confirms it
            # when it runs it), and awaited by the batch being gathered.
            self._announced += 1
            out.append(Answer(event.handle, permission_outcome(event.params.get("options"), allow=True)))
            if self.state is State.GATHERING:
                out.append(SetTimer(ANNOUNCED_WAIT))  # a sibling of the calls gathered: wait for it
        elif self.state is State.GATHERING:
            self._defer(event, out)
        elif permit is Permit.ASK:
            call_id = self._new_id()
            self._asked = PendingPermission(call_id, event.handle, event.params)
            out += [EmitPart(turn.number, ToolCallPart(call_id, AGENT_ACTION_TOOL, agent_action_parameters(event.params))), Complete(turn.number)]
            self.state = State.WAITING
        else:
            out.append(Answer(event.handle, permission_outcome(event.params.get("options"), allow=False)))

    def _on_question(self, event: QuestionAsked, out: list[Effect]) -> None:
        """Approved when it asks approval to call one of the turn's bridged tools, as that permission
        request would be; while gathering, any other is kept until the batch is answered; else through
        Copilot's question tool where the turn offers it, in a round of its own, or shown as a note and
        declined (docs/DESIGN.md, "The agent's questions")."""
        turn = self._turn
        assert turn is not None
        if elicited_bridged_tool(event.params, set(ToolNames.of(t.name for t in turn.tools).to_consumer)) is not None:
            self._announced += 1
            out.append(Answer(event.handle, elicitation.approved(event.params)))
            if self.state is State.GATHERING:
                out.append(SetTimer(ANNOUNCED_WAIT))
            return
        if self.state is State.GATHERING:
            self._defer(event, out)
            return
        asked = elicitation.ask_input(event.params) if event.params.get("mode", "form") == "form" else None
        if asked is not None and turn.offers_questions:
            call_id = self._new_id()
            self._asked = PendingQuestion(call_id, event.handle, event.params)
            out += [EmitPart(turn.number, ToolCallPart(call_id, ASK_TOOL, asked)), Complete(turn.number)]
            self.state = State.WAITING
        else:
            out += [EmitPart(turn.number, TextPart(elicitation.unasked_note(event.params))), Answer(event.handle, elicitation.DECLINE)]

    def _on_write(self, event: FileWriteRequested, out: list[Effect]) -> None:
        """Through VS Code's edit tools where the turn offers them, in a round of its own (the
        agent waits on its write); on disk otherwise, but for a file something runs by itself, which
        is refused instead (docs/DESIGN.md, "Edits through the client")."""
        turn = self._turn
        assert turn is not None
        calls = fs_edits.plan(event.path, event.before, event.content, turn.edit_tools, diffable=event.diffable)
        if isinstance(calls, fs_edits.WriteOnDisk) and event.runs_it is not None:
            out.append(Answer(event.handle, refusal(event.path, event.runs_it, tools_offered=bool(turn.edit_tools & fs_edits.ROUTED))))
        elif isinstance(calls, fs_edits.WriteOnDisk):
            out.append(Answer(event.handle, fs_edits.ON_DISK))
        elif not calls:
            out.append(Answer(event.handle, {}))  # the file holds it already
        else:
            ids = [self._new_id() for _ in calls]
            self._asked = PendingWrite(ids[0], event.handle, {"path": event.path}, tuple(ids[1:]))
            out += [EmitPart(turn.number, ToolCallPart(call_id, call.name, call.parameters)) for call_id, call in zip(ids, calls, strict=False)]
            out.append(Complete(turn.number))
            self.state = State.WAITING

    def _on_tool(self, event: ToolRequested, out: list[Effect]) -> None:
        """A call of VS Code's tools joins the batch being gathered (`batch_wait`), which goes to VS
        Code when it is whole or its time is up (docs/DESIGN.md, "Parallel tool calls")."""
        call_id = self._new_id()
        self._calls.append(PendingCall(call_id, event.handle))
        out.append(EmitPart(self._number(), ToolCallPart(call_id, event.name, event.arguments if event.arguments is not None else {})))
        announced, self._announced = self._announced > 0, max(0, self._announced - 1)
        wait = batch_wait(announced, self._announced, self.gather_window)
        if wait is None:
            out += [SetTimer(None), Complete(self._number())]
            self.state = State.WAITING
        else:
            out.append(SetTimer(wait))
            self.state = State.GATHERING

    # How each request is acted on, where `REQUESTS` says it is.
    _ACTS: Mapping[type[Request], Callable[[TurnMachine, Any, list[Effect]], None]] = {
        PermissionRequested: _on_permission,
        QuestionAsked: _on_question,
        FileWriteRequested: _on_write,
        ToolRequested: _on_tool,
    }

    def _on_prompt_end(self, event: PromptEnded | PromptErrored, out: list[Effect]) -> None:
        if self.state is State.STREAMING:
            turn = self._turn
            assert turn is not None
            if isinstance(event, PromptErrored):
                failed = event.failure or failure(FailureKind.PROMPT_FAILED, f"The agent failed: {event.error.message}", code=event.error.code)
                out.append(Fail(turn.number, failed, retire=False))
            else:
                out.append(ReportUsage(turn.number, turn.model_id, event.usage))
                if event.stop_reason == "cancelled" and self._refused:
                    out.append(EmitPart(turn.number, TextPart(REFUSED_NOTE)))  # some agents' only "no" ends their prompt
                elif event.stop_reason in STOP_NOTES:
                    out.append(EmitPart(turn.number, TextPart(STOP_NOTES[event.stop_reason])))
                # A reply shown before the widget's round is not "no reply": the plan's state is the news.
                carried = self._after_todo == turn.number and self._todo is not None
                out.append(Complete(turn.number, todo_note(self._todo) if carried and self._todo else EMPTY_REPLY, event.stop_reason == "end_turn"))
            self._idle()
        elif self.state is State.CANCELLING:
            out += [SetTimer(None), ForgetToolCalls()]
            following, self._next = self._next, None
            if self._closing:
                self._end(out)
                return
            self._idle()
            if following is not None:
                self._start(following, out)
        elif self.state is not State.ENDED:
            self._defer(event, out)

    def _on_agent_gone(self, event: AgentGone, out: list[Effect]) -> None:
        if self.state is State.STREAMING:
            out.append(Fail(self._number(), event.error, retire=True))
            self._end(out)
        elif self.state in (State.PREPARING, State.CANCELLING):
            # Nothing of the turn History waits on was sent (preparing), or it is answered
            # already and a newer one waits (cancelling): History starts that one afresh.
            out.append(Fail(None, event.error, retire=True))
            self._end(out)
        elif self.state is not State.ENDED:
            self._defer(event, out)

    def _on_timeout(self, out: list[Effect]) -> None:
        if self.state is State.GATHERING:
            out.append(Complete(self._number()))
            self.state = State.WAITING
            self._announced = 0  # an announced call not made by now is not part of this batch
        elif self.state is State.CANCELLING:
            out.append(Fail(None, failure(FailureKind.CANCEL_TIMEOUT, "The agent did not stop after a cancel"), retire=True))
            self._end(out)
        # else: a timer that ran out as its state ended

    # Transitions ------------------------------------------------------------------------------

    def _owed(self) -> tuple[Answer, ...]:
        """What the agent waits for while we wait on VS Code, answered as "no"."""
        if self._asked is not None:
            return (Answer(self._asked.handle, self._asked.unanswered()),)
        return tuple(Answer(call.handle, UNANSWERED_CALL) for call in self._calls if call.handle is not None)

    def _cancel(self, owed: tuple[Answer, ...], out: list[Effect], *, next_turn: Turn | None) -> None:
        out += [CancelPrompt(owed), SetTimer(self.cancel_timeout)]
        self._turn, self._asked, self._calls, self._next, self._announced = None, None, [], next_turn, 0
        self.state = State.CANCELLING

    def _idle(self) -> None:
        self._turn, self._asked, self._calls, self._announced = None, None, [], 0
        self.state = State.IDLE

    def _end(self, out: list[Effect]) -> None:
        """Nothing more will happen; whatever the agent still waits for is answered "no"."""
        self._idle()
        self.state = State.ENDED
        deferred, self._deferred = self._deferred, collections.deque()
        out.extend(self._refusal(event) for event in deferred if isinstance(event, REQUEST_TYPES))
