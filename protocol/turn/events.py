"""The turn machine's vocabulary: the events it is fed and the effects it returns (docs/DESIGN.md,
"The turn machine": "Events in", "Effects out").

Plain data, in the manner of h11's `_events.py`: the agent (`actors/agent/process.py`), the bridge
(`actors/bridge/tool_bridge.py`) and the Session's loop (`actors/conversation/session.py`) speak to the machine
(`protocol/turn/machine.py`) in these words, and carry out what it returns. What only the trio side holds
rides along as opaque handles the machine never reads (an `Answering` handle, a window's `Receipt`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from protocol.shared.failures import Failure
from protocol.shared.jsonrpc import RpcError
from protocol.turn import fs_edits
from protocol.turn.rules import EMPTY_REPLY
from protocol.vscode.lm import Part, Tool, ToolResultPart

if TYPE_CHECKING:
    from protocol.history.channels import Turn


# Events in ------------------------------------------------------------------------------------


@attrs.frozen
class TurnArrived:
    """History handed the conversation its next turn."""

    turn: Turn


@attrs.frozen
class MailboxClosed:
    """History closed the conversation (released, retired, shutting down)."""


@attrs.frozen
class TurnCancelled:
    """VS Code cancelled the turn (`lm/cancel`, or a newer turn superseded it); History answered it."""

    number: int


@attrs.frozen
class Prepared:
    """The agent's options are set and the prompt is built; empty: nothing new to send."""

    blocks: tuple[dict[str, Any], ...]


@attrs.frozen
class PrepareFailed:
    """The turn cannot be prompted (a model the agent refused; `retire`: the agent exited)."""

    error: Failure
    retire: bool


@attrs.frozen
class AgentUpdates:
    """`session/update`s, in order (the loop passes those already queued together).

    `receipt`: the loop's own (what they count in the agent's backpressure window, given back
    once the loop took them); the machine never reads it."""

    updates: tuple[dict[str, Any], ...]
    receipt: Any = attrs.field(default=None, eq=False)


@attrs.frozen
class PermissionRequested:
    """The agent asks permission; `handle` is whatever the loop answers it through."""

    handle: Any = attrs.field(eq=False)
    params: dict[str, Any]


@attrs.frozen
class QuestionAsked:
    """The agent asks the user (ACP `elicitation/create`); `handle` takes the elicitation's result."""

    handle: Any = attrs.field(eq=False)
    params: dict[str, Any]


@attrs.frozen
class FileWriteRequested:
    """The agent writes a file through the client (ACP `fs/write_text_file`); `before`: what the
    file holds (None: no such file), as the agent connection read it; `diffable`: it could read
    it whole as text; `runs_it`: what runs or loads the file by itself (`protocol/host/autorun.py`),
    so it goes only through VS Code's edit tools. `handle` takes `{}`, an error string, or
    `fs_edits.ON_DISK` (write it there)."""

    handle: Any = attrs.field(eq=False)
    path: str
    content: str
    before: str | None
    diffable: bool = True
    runs_it: str | None = None


@attrs.frozen
class ToolRequested:
    """The agent called one of VS Code's tools through the bridge."""

    handle: Any = attrs.field(eq=False)
    name: str
    arguments: dict[str, Any] | None


@attrs.frozen
class PromptEnded:
    """The prompt's answer; `usage`: the prompt response's, where the agent sends one."""

    stop_reason: str
    usage: dict[str, Any] | None = None


@attrs.frozen
class PromptErrored:
    error: RpcError  # the agent's own error response to session/prompt (its message redacted)
    failure: Failure | None = None  # what the turn fails with instead, when the agent made it clear (a sign-in)


@attrs.frozen
class AgentGone:
    error: Failure


@attrs.frozen
class TimedOut:
    """The timer last set (`SetTimer`) ran out."""


Event = (
    TurnArrived
    | MailboxClosed
    | TurnCancelled
    | Prepared
    | PrepareFailed
    | AgentUpdates
    | PermissionRequested
    | QuestionAsked
    | FileWriteRequested
    | ToolRequested
    | PromptEnded
    | PromptErrored
    | AgentGone
    | TimedOut
)
AgentEvent = AgentUpdates | PermissionRequested | QuestionAsked | FileWriteRequested | ToolRequested | PromptEnded | PromptErrored | AgentGone


# Effects out ----------------------------------------------------------------------------------


@attrs.frozen
class UseTools:
    """The bridge offers the agent these VS Code tools from now on."""

    tools: tuple[Tool, ...]


@attrs.frozen
class AcceptToolCalls:
    """Whether the bridge takes the agent's `tools/call`s from now on: only while a prompt runs.
    Refused ones are answered `NO_PROMPT_CALL` by the bridge itself, at once."""

    accept: bool


@attrs.frozen
class SendPrompt:
    blocks: tuple[dict[str, Any], ...]


@attrs.frozen
class ShowUpdates:
    """Render the agent's updates as parts of the turn."""

    turn: int
    updates: tuple[dict[str, Any], ...]


@attrs.frozen
class CountUpdates:
    """Updates of a cancelled prompt: nobody sees them, but what they report it cost counts."""

    updates: tuple[dict[str, Any], ...]


@attrs.frozen
class DropUpdates:
    """Updates that came with no prompt running (idle, or preparing the next): about a prompt
    that ended. Never shown, never carried into the next turn; only what they change of the
    session's options is kept."""

    updates: tuple[dict[str, Any], ...]


@attrs.frozen
class EmitPart:
    turn: int
    part: Part


@attrs.frozen
class Complete:
    """The turn's response ends; the loop adds `empty_note` when it showed nothing (consumers
    report a bare end as "no response")."""

    turn: int
    empty_note: str = EMPTY_REPLY
    # The agent's prompt ended here with `end_turn`: its session holds exactly this turn (a fork
    # point, protocol/history/forking.py). Not compared: it says nothing of what the response is.
    ended_turn: bool = attrs.field(default=False, eq=False)


@attrs.frozen
class Fail:
    """The turn fails with `error`; `retire`: the conversation cannot go on.

    `turn` None: nothing of the turn History is waiting on was started, so History starts
    it afresh as a new conversation (the agent exited while the conversation was idle, or
    while a cancelled prompt was winding down).
    """

    turn: int | None
    error: Failure
    retire: bool


@attrs.frozen
class ReportUsage:
    turn: int
    model_id: str
    usage: dict[str, Any] | None


@attrs.frozen
class Answer:
    """Answer what the agent waits for through its handle: a permission with the outcome (one
    of its options, or `cancelled`); a tool call with VS Code's result, or a string (the error
    the agent gets instead)."""

    handle: Any = attrs.field(eq=False)
    reply: dict[str, Any] | ToolResultPart | str | fs_edits.WriteOnDisk | RpcError


@attrs.frozen
class CancelPrompt:
    """`session/cancel`, and only once it is out, `then` (the answers the agent still waits
    for: answered before the cancel, a denied permission reads to an agent as a failed tool,
    and it goes on working until the cancel lands)."""

    then: tuple[Answer, ...]


@attrs.frozen
class SetTimer:
    """Feed `TimedOut` after this many seconds without another event; None: no timer."""

    seconds: float | None


@attrs.frozen
class ForgetToolCalls:
    """A cancelled prompt ended: the status lines of its tool calls are not owed any more."""


Effect = (
    UseTools
    | AcceptToolCalls
    | SendPrompt
    | ShowUpdates
    | CountUpdates
    | DropUpdates
    | EmitPart
    | Complete
    | Fail
    | ReportUsage
    | Answer
    | CancelPrompt
    | SetTimer
    | ForgetToolCalls
)

# The agent's requests: each waits for exactly one `Answer` through its handle (protocol/turn/machine.py's
# `REQUESTS` says in which state each is acted on, refused or kept).
Request = PermissionRequested | QuestionAsked | FileWriteRequested | ToolRequested
