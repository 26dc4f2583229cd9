"""The turn machine (pure, no trio): its transitions, the permission policy, and properties
that hold whatever order events come in."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.acp import schema as acp
from protocol.history.canonical import normalise
from protocol.history.channels import Turn
from protocol.shared.failures import FailureKind, failure
from protocol.shared.jsonrpc import RpcError
from protocol.turn import fs_edits
from protocol.turn.events import (
    AcceptToolCalls,
    AgentGone,
    AgentUpdates,
    Answer,
    CancelPrompt,
    Complete,
    DropUpdates,
    EmitPart,
    Event,
    Fail,
    FileWriteRequested,
    MailboxClosed,
    PermissionRequested,
    Prepared,
    PrepareFailed,
    PromptEnded,
    PromptErrored,
    QuestionAsked,
    ReportUsage,
    SendPrompt,
    SetTimer,
    ShowUpdates,
    TimedOut,
    ToolRequested,
    TurnArrived,
    TurnCancelled,
)
from protocol.turn.machine import REQUESTS, State, TurnMachine, Want
from protocol.turn.permissions import Permit, permission_policy
from protocol.turn.rules import ANNOUNCED_WAIT, GATHER_WINDOW, NO_PROMPT_CALL, batch_wait
from protocol.vscode.lm import AGENT_ACTION_APPROVED, AGENT_ACTION_TOOL, ASK_TOOL, TODO_TOOL, Message, TextPart, Tool, ToolCallPart, ToolResultPart

OPTIONS = [{"optionId": "yes", "kind": "allow_once", "name": "Yes"}, {"optionId": "no", "kind": "reject_once", "name": "No"}]
LOOKUP = Tool("lookup", "Look something up", {"type": "object"})
BLOCKS = ({"type": "text", "text": "hello"},)
ERROR = RpcError(-32000, "boom")  # the agent's own error response
GONE = failure(FailureKind.AGENT_EXITED, "Agent 'x' exited")
EDIT_TOOLS = (LOOKUP, Tool("create_file", "Create", {"type": "object"}), Tool("replace_string_in_file", "Replace", {"type": "object"}))


def turn(
    number: int, *messages: Message, offers_agent_action: bool = True, offers_todo_list: bool = False, offers_questions: bool = False, tools: tuple[Tool, ...] = (LOOKUP,)
) -> Turn:
    """`tools`: the consumer's; those of them the agent's writes become are `edit_tools`."""
    return Turn(
        number=number,
        messages=tuple(map(normalise, messages)) or (Message("user", (TextPart(f"message {number}"),)),),
        context=(),
        cancelled=False,
        tools=tools,
        offers_agent_action=offers_agent_action,
        offers_todo_list=offers_todo_list,
        offers_questions=offers_questions,
        edit_tools=frozenset(t.name for t in tools if t.name in fs_edits.ROUTED),
    )


def results(*call_ids: str, text: str = AGENT_ACTION_APPROVED) -> Message:
    return Message("user", tuple(ToolResultPart(call_id, (TextPart(text),)) for call_id in call_ids))


def permission(title: str = "Run ls", handle: object = "ask") -> PermissionRequested:
    return PermissionRequested(handle, {"toolCall": {"title": title, "kind": "execute"}, "options": OPTIONS})


def machine() -> TurnMachine:
    ids = itertools.count(1)
    return TurnMachine(cancel_timeout=10, new_id=lambda: f"sym-{next(ids)}")


def streaming(m: TurnMachine, number: int = 1, **kwargs: Any) -> None:
    m.handle(TurnArrived(turn(number, **kwargs)))
    assert m.wants is Want.PREPARED
    assert SendPrompt(BLOCKS) in m.handle(Prepared(BLOCKS))
    assert m.state is State.STREAMING


# The permission policy --------------------------------------------------------------------------


def test_the_permission_policy_approves_our_own_tools_asks_vscode_or_rejects() -> None:
    bridged = {"toolCall": {"title": "mcp__vscode_tools__lookup"}}
    assert permission_policy(bridged, ["lookup"], can_ask=False) is Permit.APPROVE
    assert permission_policy(bridged, ["other"], can_ask=True) is Permit.ASK  # not a tool this turn offers
    assert permission_policy({"toolCall": {"title": "Run ls"}}, ["lookup"], can_ask=True) is Permit.ASK
    assert permission_policy({"toolCall": {"title": "Run ls"}}, ["lookup"], can_ask=False) is Permit.REJECT


# Transitions --------------------------------------------------------------------------------------


def test_a_prompt_streams_its_updates_and_completes_the_turn() -> None:
    m = machine()
    streaming(m)
    assert m.handle(AgentUpdates(({"sessionUpdate": "agent_message_chunk"},))) == [ShowUpdates(1, ({"sessionUpdate": "agent_message_chunk"},))]
    assert m.handle(PromptEnded("end_turn", {"inputTokens": 1})) == [ReportUsage(1, "", {"inputTokens": 1}), Complete(1), AcceptToolCalls(False)]
    assert m.state is State.IDLE and m.wants is Want.TURN


def plan(*statuses: str) -> dict[str, Any]:
    return {"sessionUpdate": "plan", "entries": [{"content": f"step {i}", "priority": "medium", "status": s} for i, s in enumerate(statuses, 1)]}


TEXT = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
QUESTION = {"sessionId": "s", "mode": "form", "message": "Which?", "requestedSchema": {"type": "object", "properties": {"pick": {"type": "string", "enum": ["a", "b"]}}}}


def test_a_call_vscode_ran_before_the_user_moved_on_is_answered_with_its_result_before_the_cancel() -> None:
    m = machine()
    streaming(m)
    m.handle(ToolRequested("call", "lookup", {"q": 1}))
    m.handle(TimedOut())
    assert m.state is State.WAITING
    ran = ToolResultPart("sym-1", (TextPart("edited"),))
    effects = m.handle(TurnArrived(turn(2, Message("user", (ran,)), Message("user", (TextPart("Stop, do this instead"),)))))
    assert effects[:2] == [Answer("call", ran), CancelPrompt(())], "the real result, then the cancel: no 'did not run'"
    assert m.state is State.CANCELLING


def test_a_question_is_asked_in_copilots_question_ui_and_the_answer_goes_back_to_the_agent() -> None:
    m = machine()
    streaming(m, offers_questions=True)
    effects = m.handle(QuestionAsked("q", QUESTION))
    assert [type(e) for e in effects] == [EmitPart, Complete] and effects[0].part.tool_name == "vscode_askQuestions"
    chosen = '{"answers": {"pick": {"selected": ["b"], "freeText": null, "skipped": false}}}'
    effects = m.handle(TurnArrived(turn(2, results("sym-1", text=chosen), offers_questions=True)))
    assert effects[0] == Answer("q", {"action": "accept", "content": {"pick": "b"}})
    assert m.state is State.STREAMING


def test_a_question_nobody_can_ask_is_shown_and_declined_and_moving_on_cancels_it() -> None:
    m = machine()
    streaming(m)
    [note, declined] = m.handle(QuestionAsked("q", QUESTION))
    assert "Which?" in note.part.value and declined == Answer("q", {"action": "decline"})
    other = machine()
    streaming(other, offers_questions=True)
    other.handle(QuestionAsked("q", QUESTION))
    [cancel, _timer] = other.handle(TurnArrived(turn(2, offers_questions=True)))
    assert cancel == CancelPrompt((Answer("q", {"action": "cancel"}),))


def test_a_write_goes_to_vscodes_edit_tools_and_the_agent_hears_once_their_results_are_in() -> None:
    m = machine()
    streaming(m, tools=EDIT_TOOLS)
    before = "a\nb\nc\nd\ne\nf\ng\n"
    effects = m.handle(FileWriteRequested("w", "/w/f.txt", before.replace("b\n", "B\n").replace("f\n", "F\n"), before))
    assert [(e.part.tool_name, e.part.parameters["oldString"]) for e in effects if isinstance(e, EmitPart)] == [("replace_string_in_file", "b\n"), ("replace_string_in_file", "f\n")]
    assert isinstance(effects[-1], Complete) and m.state is State.WAITING
    effects = m.handle(TurnArrived(turn(2, results("sym-1", "sym-2", text="edited"), tools=EDIT_TOOLS)))
    assert effects[0] == Answer("w", {}) and m.state is State.STREAMING


def test_a_write_vscode_refused_is_an_error_and_one_without_the_tools_is_written_on_disk() -> None:
    m = machine()
    streaming(m, tools=EDIT_TOOLS)
    m.handle(FileWriteRequested("w", "/w/new.txt", "hi\n", None))
    effects = m.handle(TurnArrived(turn(2, results("sym-1", text="ERROR while calling tool: File already exists"), tools=EDIT_TOOLS)))
    assert isinstance(effects[0], Answer) and "File already exists" in effects[0].reply
    ask = machine()
    streaming(ask)  # Ask mode: no edit tools
    assert ask.handle(FileWriteRequested("w", "/w/new.txt", "hi\n", None)) == [Answer("w", fs_edits.ON_DISK)]
    moved = machine()
    streaming(moved, tools=EDIT_TOOLS)
    moved.handle(FileWriteRequested("w", "/w/new.txt", "hi\n", None))
    [cancel, _timer] = moved.handle(TurnArrived(turn(2, tools=EDIT_TOOLS)))
    assert cancel == CancelPrompt((Answer("w", fs_edits.UNANSWERED),))


def test_a_file_that_runs_by_itself_goes_only_through_the_edit_tools_and_is_refused_without_them() -> None:
    runs = "VS Code runs its tasks as the folder opens"
    routed = machine()
    streaming(routed, tools=EDIT_TOOLS)
    effects = routed.handle(FileWriteRequested("w", "/w/.vscode/tasks.json", "{}\n", None, runs_it=runs))
    assert [e.part.tool_name for e in effects if isinstance(e, EmitPart)] == ["create_file"] and routed.state is State.WAITING
    ask = machine()
    streaming(ask)  # Ask mode: no edit tools
    [answer] = ask.handle(FileWriteRequested("w", "/w/.vscode/tasks.json", "{}\n", None, runs_it=runs))
    assert isinstance(answer.reply, str) and runs in answer.reply and "Ask and Plan" in answer.reply
    binary = machine()
    streaming(binary, tools=EDIT_TOOLS)  # the tools cannot change it: not on disk either
    [answer] = binary.handle(FileWriteRequested("w", "/w/.envrc", "x\n", "", diffable=False, runs_it=runs))
    assert isinstance(answer.reply, str) and "cannot make this change" in answer.reply


def test_a_plan_goes_to_copilots_todo_widget_and_what_followed_it_shows_in_the_next_turn() -> None:
    m = machine()
    streaming(m, offers_todo_list=True)
    todo = {"todoList": [{"id": 1, "title": "step 1", "status": "in-progress"}, {"id": 2, "title": "step 2", "status": "not-started"}]}
    assert m.handle(AgentUpdates((TEXT, plan("in_progress", "pending"), TEXT))) == [
        ShowUpdates(1, (TEXT,)),
        EmitPart(1, ToolCallPart("sym-1", TODO_TOOL, todo)),
        Complete(1),
    ]
    assert m.state is State.WAITING
    # The agent goes on meanwhile; its prompt ending waits for the widget's round too.
    assert m.handle(PromptEnded("end_turn")) == []
    effects = m.handle(TurnArrived(turn(2, results("sym-1", text="Todos updated"), offers_todo_list=True)))
    assert not any(isinstance(e, Answer) for e in effects), "nobody waits on the widget's result"
    # Had the agent shown nothing more, the response would end saying where the plan stands.
    assert effects[1:] == [ShowUpdates(2, (TEXT,)), ReportUsage(2, "", None), Complete(2, "*(Plan: 0 of 2 done.)*"), AcceptToolCalls(False)]


def test_an_unchanged_plan_costs_no_round_and_without_the_widget_a_plan_is_shown() -> None:
    m = machine()
    streaming(m, offers_todo_list=True)
    m.handle(AgentUpdates((plan("pending"),)))
    m.handle(TurnArrived(turn(2, results("sym-1"), offers_todo_list=True)))
    assert m.handle(AgentUpdates((plan("pending"), TEXT))) == [ShowUpdates(2, (TEXT,))]
    other = machine()
    streaming(other)
    assert other.handle(AgentUpdates((plan("pending"),))) == [ShowUpdates(1, (plan("pending"),))]


def test_an_approved_permission_selects_the_allow_option_and_the_prompt_goes_on_in_the_next_turn() -> None:
    m = machine()
    streaming(m)
    effects = m.handle(permission())
    assert effects == [EmitPart(1, ToolCallPart("sym-1", AGENT_ACTION_TOOL, {"kind": "execute", "title": "Run ls"})), Complete(1)]
    assert m.state is State.WAITING and m.wants is Want.TURN
    effects = m.handle(TurnArrived(turn(2, results("sym-1"))))
    assert effects[0] == Answer("ask", acp.selected_outcome("yes"))
    assert m.state is State.STREAMING and m.current is not None and m.current.number == 2


def test_a_skipped_permission_rejects_and_a_prompt_that_then_stops_says_why() -> None:
    m = machine()
    streaming(m)
    m.handle(permission())
    assert m.handle(TurnArrived(turn(2, results("sym-1", text="The user chose to skip"))))[0] == Answer("ask", acp.selected_outcome("no"))
    effects = m.handle(PromptEnded("cancelled"))
    assert isinstance(effects[1], EmitPart) and "not allowed" in effects[1].part.value  # type: ignore[union-attr]


def test_moving_on_cancels_the_prompt_then_answers_the_card_then_prepares_the_new_turn() -> None:
    m = machine()
    streaming(m)
    m.handle(permission())
    effects = m.handle(TurnArrived(turn(2)))
    assert isinstance(effects[0], CancelPrompt) and effects[0].then == (Answer("ask", acp.CANCELLED_OUTCOME),)
    assert m.state is State.CANCELLING and m.current is None
    assert m.handle(AgentUpdates(({"sessionUpdate": "usage_update"},)))[0].__class__.__name__ == "CountUpdates"
    m.handle(PromptEnded("cancelled"))
    assert m.state is State.PREPARING and m.current is not None and m.current.number == 2


def test_what_the_agent_asked_behind_the_card_is_answered_after_the_cancel_too() -> None:
    m = machine()
    streaming(m)
    m.handle(permission("Run ls", handle="first"))
    assert m.handle(permission("Run rm", handle="second")) == []  # held while the card is shown
    effects = m.handle(TurnArrived(turn(2)))  # the user moved on
    assert not any(isinstance(e, Answer) for e in effects)  # nothing answered before session/cancel
    [cancel] = [e for e in effects if isinstance(e, CancelPrompt)]
    assert cancel.then == (Answer("first", acp.CANCELLED_OUTCOME), Answer("second", acp.CANCELLED_OUTCOME))


def test_a_permission_with_nobody_to_ask_is_rejected_and_the_prompt_goes_on() -> None:
    m = machine()
    streaming(m, offers_agent_action=False)
    assert m.handle(permission()) == [Answer("ask", acp.selected_outcome("no"))]
    assert m.state is State.STREAMING


def test_tool_calls_made_together_go_to_vscode_in_one_response() -> None:
    m = machine()
    streaming(m)
    m.handle(ToolRequested("a", "lookup", {"q": 1}))
    m.handle(ToolRequested("b", "lookup", None))
    assert m.state is State.GATHERING
    assert m.handle(TimedOut()) == [Complete(1)]
    effects = m.handle(TurnArrived(turn(2, results("sym-1", "sym-2", text="found"))))
    assert [e for e in effects if isinstance(e, Answer)] == [
        Answer("a", ToolResultPart("sym-1", (TextPart("found"),))),
        Answer("b", ToolResultPart("sym-2", (TextPart("found"),))),
    ]


def bridged(handle: str) -> PermissionRequested:
    """The agent asks permission for a call of one of our bridged tools: it announces the call."""
    return PermissionRequested(handle, {"toolCall": {"title": "mcp__vscode_tools__lookup"}, "options": OPTIONS})


def test_calls_the_agent_announced_go_to_vscode_together_the_moment_the_last_one_is_in() -> None:
    m = machine()
    streaming(m)
    # Claude Code asks permission for each call it runs side by side before it makes any of them.
    assert m.handle(bridged("pa")) == [Answer("pa", acp.selected_outcome("yes"))]
    assert m.handle(bridged("pb")) == [Answer("pb", acp.selected_outcome("yes"))]
    effects = m.handle(ToolRequested("a", "lookup", {"q": 1}))
    assert effects[-1] == SetTimer(ANNOUNCED_WAIT) and m.state is State.GATHERING  # its sibling is on its way
    effects = m.handle(ToolRequested("b", "lookup", {"q": 2}))
    assert effects[-2:] == [SetTimer(None), Complete(1)]  # the batch is whole: no wait at all
    assert [e.part.tool_name for e in effects if isinstance(e, EmitPart)] == ["lookup"]
    effects = m.handle(TurnArrived(turn(2, results("sym-1", "sym-2", text="found"))))
    assert [e.handle for e in effects if isinstance(e, Answer)] == ["a", "b"]  # both answered from one round


def test_an_announced_call_made_alone_goes_to_vscode_at_once() -> None:
    m = machine()
    streaming(m)
    m.handle(bridged("p"))
    assert m.handle(ToolRequested("a", "lookup", {}))[-2:] == [SetTimer(None), Complete(1)]
    assert m.state is State.WAITING


def test_a_sibling_announced_while_calls_are_gathered_joins_them() -> None:
    m = machine()
    streaming(m)
    m.handle(ToolRequested("a", "lookup", {}))  # unannounced: the gather window
    assert m.state is State.GATHERING
    assert m.handle(bridged("pb")) == [Answer("pb", acp.selected_outcome("yes")), SetTimer(ANNOUNCED_WAIT)]
    assert m.handle(ToolRequested("b", "lookup", {}))[-2:] == [SetTimer(None), Complete(1)]


def test_an_announced_call_the_agent_never_makes_costs_one_bounded_wait_and_is_forgotten() -> None:
    m = machine()
    streaming(m)
    m.handle(bridged("pa"))
    m.handle(bridged("pb"))
    m.handle(ToolRequested("a", "lookup", {}))
    assert m.handle(TimedOut()) == [Complete(1)]  # never stalls: the bound ran out
    m.handle(TurnArrived(turn(2, results("sym-1"))))
    m.handle(bridged("pc"))
    assert m.handle(ToolRequested("c", "lookup", {}))[-2:] == [SetTimer(None), Complete(2)]


def approval_question(handle: str, tool: str = "lookup") -> QuestionAsked:
    """Codex's approval of an MCP tool call, asked as a form elicitation (tests/agents/test_codex.py)."""
    return QuestionAsked(handle, {
        "mode": "form", "message": f'Allow the vscode_tools MCP server to run tool "{tool}"?', "_meta": {"codex_approval_kind": "mcp_tool_call"},
        "requestedSchema": {"type": "object", "properties": {"persist": {"type": "string", "oneOf": [{"const": "once"}, {"const": "session"}], "default": "once"}},
                            "required": ["persist"]},
    })


def test_an_approval_of_a_bridged_call_asked_as_a_question_is_accepted_once_as_its_permission_would_be() -> None:
    m = machine()
    streaming(m, offers_questions=True)
    assert m.handle(approval_question("q")) == [Answer("q", {"action": "accept", "content": {"persist": "once"}})]
    assert m.handle(ToolRequested("a", "lookup", {}))[-2:] == [SetTimer(None), Complete(1)]  # announced: no wait
    # While calls are gathered, one joins them; a tool the turn does not offer is asked as any question.
    other = machine()
    streaming(other, offers_questions=True)
    other.handle(ToolRequested("a", "lookup", {}))
    assert other.handle(approval_question("q")) == [Answer("q", {"action": "accept", "content": {"persist": "once"}}), SetTimer(ANNOUNCED_WAIT)]
    third = machine()
    streaming(third, offers_questions=True)
    [asked, completed] = third.handle(approval_question("q", tool="rm_everything"))
    assert isinstance(asked, EmitPart) and asked.part.tool_name == ASK_TOOL and completed == Complete(1)


def test_every_request_has_an_answer_once_its_prompt_is_cancelled_or_the_conversation_ended() -> None:
    """What the machine keeps when it ends is answered from `REQUESTS`: a request without a refusal
    there would never be answered."""
    assert set(REQUESTS) == {PermissionRequested, QuestionAsked, FileWriteRequested, ToolRequested}
    for request, rule in REQUESTS.items():
        assert {State.CANCELLING, State.ENDED} <= set(rule.refusals), request.__name__
        assert not rule.acted_on & set(rule.refusals), request.__name__


def test_how_long_a_batch_waits_for_more_calls() -> None:
    assert batch_wait(announced=True, outstanding=0) is None
    assert batch_wait(announced=True, outstanding=1) == ANNOUNCED_WAIT
    assert batch_wait(announced=False, outstanding=2) == ANNOUNCED_WAIT
    assert batch_wait(announced=False, outstanding=0) == GATHER_WINDOW


def test_tool_calls_are_taken_only_while_a_prompt_runs() -> None:
    m = machine()
    # Between prompts (an agent's own, or anyone holding the bridge's secret): refused at once,
    # never kept to become the next prompt's tool call.
    assert m.handle(ToolRequested("idle", "lookup", {"q": 1})) == [Answer("idle", NO_PROMPT_CALL)]
    m.handle(TurnArrived(turn(1)))
    assert m.handle(ToolRequested("preparing", "lookup", {})) == [Answer("preparing", NO_PROMPT_CALL)]
    effects = m.handle(Prepared(BLOCKS))
    assert effects == [SendPrompt(BLOCKS), AcceptToolCalls(True)]
    assert not any(isinstance(e, EmitPart) for e in effects)
    m.handle(ToolRequested("streaming", "lookup", {}))
    m.handle(TimedOut())
    assert m.state is State.WAITING and m.prompting  # the prompt waits on VS Code: it still runs
    m.handle(TurnArrived(turn(2, results("sym-1"))))
    assert m.handle(PromptEnded("end_turn"))[-1] == AcceptToolCalls(False)
    assert not m.prompting


def test_a_call_kept_behind_a_card_is_refused_when_its_prompt_ends_first() -> None:
    m = machine()
    streaming(m)
    m.handle(permission())
    m.handle(PromptEnded("end_turn"))  # an agent that ended its prompt while we waited on the card
    assert m.handle(ToolRequested("late", "lookup", {})) == []  # kept: the card's prompt runs
    effects = m.handle(TurnArrived(turn(2, results("sym-1"))))
    assert Answer("late", NO_PROMPT_CALL) in effects and not any(isinstance(e, EmitPart) for e in effects)
    assert m.state is State.IDLE and effects[-1] == AcceptToolCalls(False)


def test_an_agent_that_exited_while_idle_gives_the_next_turn_back() -> None:
    m = machine()
    m.handle(AgentGone(GONE))
    assert m.handle(TurnArrived(turn(1))) == [Fail(None, GONE, retire=True)]
    assert m.state is State.ENDED


def test_what_the_agent_says_after_its_prompt_ended_is_dropped_not_shown_in_the_next_turn() -> None:
    m = machine()
    streaming(m)
    m.handle(PromptEnded("end_turn"))
    stale = ({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "late"}},)
    assert m.handle(AgentUpdates(stale)) == [DropUpdates(stale)]  # idle
    m.handle(TurnArrived(turn(2)))
    assert m.handle(AgentUpdates(stale)) == [DropUpdates(stale)]  # preparing the next prompt
    effects = m.handle(Prepared(BLOCKS))
    assert not any(isinstance(e, ShowUpdates) for e in effects)
    fresh = ({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "new"}},)
    assert m.handle(AgentUpdates(fresh)) == [ShowUpdates(2, fresh)]


def test_a_cancel_that_the_agent_ignores_retires_the_conversation() -> None:
    m = machine()
    streaming(m)
    m.handle(TurnCancelled(1))
    [fail, closed] = m.handle(TimedOut())
    assert closed == AcceptToolCalls(False)
    assert isinstance(fail, Fail) and fail.turn is None and fail.retire and fail.error.kind == "cancel_timeout"


# Properties: any order of events ----------------------------------------------------------------


class Handle:
    """What the agent waits on: counts its answers."""

    def __init__(self, kind: str, number: int) -> None:
        self.kind, self.number, self.answers = kind, number, 0

    def __repr__(self) -> str:
        return f"{self.kind}#{self.number}"


class Harness:
    """Feeds the machine only what its loop would (`wants`), with History's rules, and checks
    every effect as it comes out."""

    def __init__(self) -> None:
        self.machine = machine()
        self.turns = itertools.count(1)
        self.handles = itertools.count(1)
        self.arrived: list[int] = []
        self.answered: dict[int, int] = {}  # turn → times answered
        self.asked: list[Handle] = []
        self.emitted: dict[int, list[str]] = {}  # turn → tool-call ids it showed VS Code
        self.last_completed: int | None = None
        self.accepting = False  # as the bridge was last told (AcceptToolCalls)

    def waiting_for(self) -> int | None:
        """The turn History waits on: arrived, not answered."""
        return next((n for n in reversed(self.arrived) if n not in self.answered), None)

    def answer(self, number: int) -> None:
        assert number in self.arrived, f"turn {number} answered before it arrived"
        assert number not in self.answered, f"turn {number} answered twice"
        self.answered[number] = 1

    def feed(self, event: Event) -> None:
        if isinstance(event, TurnArrived):
            self.arrived.append(event.turn.number)
        if isinstance(event, TurnCancelled):
            self.answer(event.number)  # History answers it -32800
        idle = not self.machine.prompting
        for effect in self.machine.handle(event):
            self.check(effect)
        if isinstance(event, ToolRequested) and idle:
            assert event.handle.answers == 1, "a tool call with no prompt running is refused at once"
        assert self.accepting == self.machine.prompting, "the bridge takes tool calls exactly while a prompt runs"

    def check(self, effect: object) -> None:
        number = getattr(effect, "turn", None)
        if isinstance(effect, (ShowUpdates, EmitPart, Complete, Fail, ReportUsage)) and number is not None:
            assert number not in self.answered, f"{effect} about turn {number}, answered already"
        match effect:
            case EmitPart(turn=number, part=ToolCallPart(tool_call_id=call_id)):
                self.emitted.setdefault(number, []).append(call_id)
            case Complete(turn=number):
                self.answer(number)
                self.last_completed = number
            case Fail(turn=None, retire=retire):
                assert retire and self.machine.state is State.ENDED
                if (waiting := self.waiting_for()) is not None:
                    self.answer(waiting)  # History starts it afresh
            case Fail(turn=number):
                self.answer(number)
            case Answer(handle=handle):
                handle.answers += 1
                assert handle.answers == 1, f"{handle} answered twice"
            case CancelPrompt(then=then):
                for answer in then:
                    self.check(answer)
            case AcceptToolCalls(accept=accept):
                assert accept != self.accepting, "told what it was told already"
                self.accepting = accept

    def handle(self, kind: str) -> Handle:
        handle = Handle(kind, next(self.handles))
        self.asked.append(handle)
        return handle

    def agent_event(self, data: st.DataObject) -> Event:
        choice = data.draw(st.sampled_from(["update", "update", "plan", "question", "write", "permission", "bridged", "tool", "end", "end", "error", "gone", "timer"]))
        match choice:
            case "update":
                return AgentUpdates(({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},))
            case "plan":
                text = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
                plan = {"sessionUpdate": "plan", "entries": [{"content": "step", "status": data.draw(st.sampled_from(["pending", "completed"]))}]}
                return AgentUpdates(tuple(data.draw(st.lists(st.sampled_from([text, plan]), min_size=1, max_size=4))))
            case "permission":
                return PermissionRequested(self.handle("permission"), permission().params)
            case "question":
                return QuestionAsked(self.handle("question"), QUESTION)
            case "write":
                before = data.draw(st.sampled_from([None, "a\nb\n", "a\n"]))
                return FileWriteRequested(self.handle("write"), "/w/f", data.draw(st.sampled_from(["a\nB\n", "a\n", "x\ny\nz\n"])), before)
            case "bridged":
                return PermissionRequested(self.handle("permission"), {"toolCall": {"title": "mcp__vscode_tools__lookup"}, "options": OPTIONS})
            case "tool":
                return ToolRequested(self.handle("tool"), "lookup", {"q": 1})
            case "end":
                return PromptEnded(data.draw(st.sampled_from(["end_turn", "cancelled", "max_tokens", "refusal"])))
            case "error":
                return PromptErrored(ERROR)
            case "gone":
                return AgentGone(GONE)
        return TimedOut()

    def next_turn(self, data: st.DataObject) -> Event:
        number = next(self.turns)
        offers = data.draw(st.booleans())
        todo = data.draw(st.booleans())
        questions = data.draw(st.booleans())
        tools = EDIT_TOOLS if data.draw(st.booleans()) else (LOOKUP,)
        awaited = self.emitted.get(self.last_completed or -1, [])
        if self.machine.state is State.WAITING and awaited:
            kind = data.draw(st.sampled_from(["approved", "other", "partial", "ran, then moved on", "moved on", "closed"]))
            if kind == "ran, then moved on":
                user_turn = Message("user", (TextPart("something else"),))
                return TurnArrived(turn(number, results(*awaited, text="ran"), user_turn, offers_agent_action=offers, offers_todo_list=todo, offers_questions=questions, tools=tools))
            if kind == "approved":
                return TurnArrived(turn(number, results(*awaited), offers_agent_action=offers, offers_todo_list=todo, offers_questions=questions, tools=tools))
            if kind == "other":
                return TurnArrived(turn(number, results(*awaited, text="Skipped"), offers_agent_action=offers, offers_todo_list=todo, offers_questions=questions, tools=tools))
            if kind == "partial" and len(awaited) > 1:
                return TurnArrived(turn(number, results(*awaited[1:]), offers_agent_action=offers, offers_todo_list=todo, offers_questions=questions, tools=tools))
            if kind == "closed":
                return MailboxClosed()
        elif data.draw(st.integers(0, 9)) == 0:
            return MailboxClosed()
        return TurnArrived(turn(number, offers_agent_action=offers, offers_todo_list=todo, offers_questions=questions, tools=tools))

    def step(self, data: st.DataObject) -> None:
        m = self.machine
        current = m.current
        if current is not None and data.draw(st.integers(0, 7)) == 0:
            self.feed(TurnCancelled(current.number))
        elif m.wants is Want.TURN:
            if data.draw(st.integers(0, 4)) == 0:
                self.feed(self.agent_event(data))  # queued while idle or waiting: the machine keeps it
            else:
                self.feed(self.next_turn(data))
        elif m.wants is Want.PREPARED:
            kind = data.draw(st.sampled_from(["blocks", "blocks", "blocks", "nothing", "refused", "exited", "event"]))
            if kind == "event":
                self.feed(self.agent_event(data))
            elif kind == "nothing":
                self.feed(Prepared(()))
            elif kind in ("refused", "exited"):
                self.feed(PrepareFailed(GONE, retire=kind == "exited"))
            else:
                self.feed(Prepared(BLOCKS))
        elif m.wants is Want.EVENT:
            self.feed(self.agent_event(data))

    def finish(self) -> None:
        """Drive the machine to its end the way a conversation ends: cancel, close."""
        for _ in range(50):
            m = self.machine
            if m.wants is Want.NOTHING:
                return
            if m.current is not None:
                self.feed(TurnCancelled(m.current.number) if m.wants is Want.EVENT else Prepared(BLOCKS))
            elif m.wants is Want.TURN:
                self.feed(MailboxClosed())
            else:
                self.feed(PromptEnded("cancelled"))
        raise AssertionError(f"the machine did not end: {self.machine.state}")


@settings(max_examples=300, deadline=None)
@given(data=st.data(), steps=st.integers(min_value=1, max_value=60))
def test_any_order_of_events_answers_every_turn_and_every_agent_request_exactly_once(data: st.DataObject, steps: int) -> None:
    harness = Harness()
    for _ in range(steps):
        if harness.machine.wants is Want.NOTHING:
            break
        harness.step(data)
    harness.finish()
    unanswered = [n for n in harness.arrived if n not in harness.answered]
    assert not unanswered, f"turns never answered: {unanswered}"
    assert [h for h in harness.asked if h.answers != 1] == [], "every permission and tool call is answered exactly once"
