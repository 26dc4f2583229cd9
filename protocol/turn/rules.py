"""The rules only the turn machine uses: what it tells the agent and the user, how long a batch of
tool calls waits, whether a turn is exactly the results awaited, the agent's plan as Copilot's
todo list, and what it holds while it waits on VS Code (docs/DESIGN.md, "The turn machine").

Plain values and functions beside the machine (`protocol/turn/machine.py`), as its transitions read them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from protocol.acp import schema as acp
from protocol.acp.agent_text import shown
from protocol.shared.jsonrpc import INVALID_REQUEST, RpcError
from protocol.turn import elicitation, fs_edits
from protocol.turn.permissions import approves, permission_outcome
from protocol.vscode.lm import TextPart, ToolResultPart

if TYPE_CHECKING:
    from protocol.history.channels import Turn

GATHER_WINDOW = 0.02  # unannounced tool calls the agent makes within this of each other go to VS Code together
# A call the agent announced (it asked permission for it, and we approved it: one of our bridged
# tools) is on its way: the batch waits for it at most this long, and goes to VS Code the moment
# every announced call is in (docs/DESIGN.md, "Parallel tool calls").
ANNOUNCED_WAIT = 0.5

NOTHING_NEW = "*(Nothing new to send to the agent.)*"
CANCELLED_CALL = "the turn was cancelled"
UNANSWERED_CALL = "VS Code did not run the tool: the user cancelled or moved on"
ENDED_CALL = "the conversation ended before VS Code ran the tool"
# A `tools/call` with no prompt of the conversation running: nobody asked VS Code for anything, so
# it is refused at once, never kept for the next prompt (docs/DESIGN.md, "Tool bridge").
NO_PROMPT_CALL = "no request of this conversation is running: VS Code's tools can be called only while the agent answers one"
# Anything else the agent asks (a permission, a question, a write) with none of its prompts running is
# about no turn: refused at once with this error, never kept into the next prompt, where it would be
# asked of a user who is asking something else (docs/DESIGN.md, "The turn machine").
NO_PROMPT_REQUEST = RpcError(INVALID_REQUEST, "no prompt of this session is running: the client answers requests only while the agent answers one")


def new_call_id() -> str:
    """Our own tool-call id: unique across the conversation, whatever ids the agent uses."""
    return f"sym-{uuid.uuid4()}"

STOP_NOTES = {
    "max_tokens": "\n\n*(The agent stopped: it reached its output token limit.)*",
    "max_turn_requests": "\n\n*(The agent stopped: it reached its limit of model requests for one turn.)*",
    "refusal": "\n\n*(The agent refused to continue.)*",
}

EMPTY_REPLY = "*(The agent ended its turn without a reply.)*"
REFUSED_NOTE = "*(The action was not allowed, and the agent stopped.)*"


# The agent's plan in Copilot's todo widget ------------------------------------------------------

# ACP plan entry statuses as Copilot's todo widget names them.
TODO_STATUSES = {"pending": "not-started", "in_progress": "in-progress", "completed": "completed"}


def todo_list(plan: dict[str, Any]) -> dict[str, Any]:
    """An ACP `plan` update as the input of Copilot's `manage_todo_list` (the whole list, every
    time, as ACP's plan is): numbered from 1, the entry's text cleaned, its status mapped."""
    entries = [e for e in plan.get("entries") or [] if isinstance(e, dict)]
    return {
        "todoList": [
            {"id": number, "title": shown(entry.get("content")) or "(untitled)", "status": TODO_STATUSES.get(str(entry.get("status")), "not-started")}
            for number, entry in enumerate(entries, 1)
        ]
    }


def todo_note(todo: dict[str, Any]) -> str:
    """What a response that carried a prompt on after the todo widget's round says when the
    agent showed nothing more: its answer came before the plan's last change."""
    items = todo.get("todoList") or []
    done = sum(1 for item in items if item.get("status") == "completed")
    return f"*(Plan: {done} of {len(items)} done.)*"


# Is the next turn what we wait for? -----------------------------------------------------------


def results_before_moving_on(turn: Turn, awaited: Iterable[str]) -> dict[str, ToolResultPart]:
    """The results of awaited calls that VS Code ran before the user moved on: Copilot, given a
    new message while a tool call of the agent's waits at its request limit, runs the call and
    sends its result ahead of the new message. Only tool-result messages at the turn's start count."""
    wanted = set(awaited)
    results: dict[str, ToolResultPart] = {}
    for message in turn.messages:
        if message.role != "user" or not message.content or not all(isinstance(p, ToolResultPart) for p in message.content):
            break
        for part in message.content:
            if isinstance(part, ToolResultPart) and part.tool_call_id in wanted and part.tool_call_id not in results:
                results[part.tool_call_id] = part
    return results


def awaited_results(turn: Turn, awaited: Iterable[str]) -> dict[str, ToolResultPart] | None:
    """The peek/consume rule (docs/DESIGN.md, "Permissions"): the turn's results by id, if it is exactly them.

    Anything else (a cancelled match, other content, a missing result) means the user moved
    on: the caller leaves the turn unconsumed and cancels the agent's turn.
    """
    wanted = set(awaited)
    if turn.cancelled or turn.context:
        return None
    results: dict[str, ToolResultPart] = {}
    for message in turn.messages:
        for part in message.content:
            if isinstance(part, ToolResultPart) and part.tool_call_id in wanted and message.role == "user":
                if part.tool_call_id in results:
                    return None  # two answers to one call: nothing says which stands
                results[part.tool_call_id] = part
            elif isinstance(part, TextPart) and not part.value.strip():
                continue
            else:
                return None
    return results if set(results) == wanted else None


# What the machine holds while it waits on VS Code ---------------------------------------------


@attrs.frozen
class PendingCall:
    """A tool call we emitted to VS Code, whose result answers the agent through `handle`;
    no handle: a call of our own (the agent's plan mirrored into Copilot's todo widget), whose
    result nobody waits for."""

    call_id: str
    handle: Any = attrs.field(eq=False)


@attrs.frozen
class PendingAsk:
    """Something of the agent's asked of the user through a tool call of VS Code's: what the
    tool's result answers the agent with, and what it gets when the user moves on."""

    call_id: str
    handle: Any = attrs.field(eq=False)
    params: dict[str, Any]

    @property
    def call_ids(self) -> tuple[str, ...]:
        return (self.call_id,)

    def reply(self, result: ToolResultPart) -> dict[str, Any] | str:
        raise NotImplementedError

    def reply_all(self, results: dict[str, ToolResultPart]) -> dict[str, Any] | str:
        return self.reply(results[self.call_id])

    def refused(self, result: ToolResultPart) -> bool:
        return False

    def unanswered(self) -> dict[str, Any] | str:
        raise NotImplementedError


class PendingPermission(PendingAsk):
    """A permission shown as a `symposium-agent-action` card."""

    def reply(self, result: ToolResultPart) -> dict[str, Any]:
        return permission_outcome(self.params.get("options"), allow=approves(result))

    def refused(self, result: ToolResultPart) -> bool:
        return not approves(result)

    def unanswered(self) -> dict[str, Any]:
        return acp.CANCELLED_OUTCOME


class PendingQuestion(PendingAsk):
    """An agent's question asked through Copilot's `vscode_askQuestions`."""

    def reply(self, result: ToolResultPart) -> dict[str, Any]:
        return elicitation.response(self.params, result)

    def unanswered(self) -> dict[str, Any]:
        return elicitation.CANCEL


def batch_wait(announced: bool, outstanding: int, gather_window: float = GATHER_WINDOW) -> float | None:
    """How long the batch of tool calls just joined by a call waits for more before it goes to VS
    Code (one response, one round of Copilot's tool loop); None: it goes now.

    `announced`: the call was announced (the agent asked permission for it first: Claude Code asks
    for each call as it runs it, and asks for the calls it runs side by side before it makes any);
    `outstanding`: announced calls not made yet. Every announced call in: the batch is whole, it
    goes at once (no wait at all, which is every round of an agent that makes one call at a time).
    Announced calls still to come: they are waited for, at most `ANNOUNCED_WAIT`, so an approved
    call the agent never makes costs that once and never stalls the turn. A call nobody announced
    (an agent that asks no permission for our tools): calls within `gather_window` of each other
    join it. See docs/DESIGN.md, "Parallel tool calls".
    """
    if outstanding > 0:
        return ANNOUNCED_WAIT
    return None if announced else gather_window


@attrs.frozen
class PendingWrite(PendingAsk):
    """An agent's `fs/write_text_file` carried out by VS Code's edit tools (one or more calls of
    one round): answered once all their results are in (docs/DESIGN.md, "Edits through the client")."""

    more: tuple[str, ...] = ()  # the round's other calls

    @property
    def call_ids(self) -> tuple[str, ...]:
        return (self.call_id, *self.more)

    def reply_all(self, results: dict[str, ToolResultPart]) -> dict[str, Any] | str:
        return fs_edits.response(results, self.call_ids)

    def unanswered(self) -> str:
        return fs_edits.UNANSWERED
