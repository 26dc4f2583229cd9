"""What the actors say to each other over their memory channels, as plain data.

History → Session: `Turn` (its cancel scope and reply window travel beside it, in
`actors/conversation/session.py`'s `Delivery`: a turn is data, tests of pure modules build one without
trio). Session → History: `SessionEvent`. History → the VS Code request handler: `Reply`.
Agent connection → Session: the turn machine's own events (`protocol/turn/machine.py`).
"""

from __future__ import annotations

import attrs

from protocol.history.compaction import Summarisation
from protocol.history.forking import ForkPoint
from protocol.shared.failures import Failure
from protocol.vscode.lm import BridgedTools, Message, Part, Tool


@attrs.frozen
class Turn:
    """One VS Code request, as far as its conversation's Session is concerned."""

    number: int  # unique and increasing; every SessionEvent echoes it
    # Both as the request was read (`canonical.normalise`): stripped, merged, Copilot's turns unwrapped.
    messages: tuple[Message, ...]  # new to the agent
    context: tuple[Message, ...]  # earlier history, only for a conversation's first turn
    cancelled: bool  # the previous reply was rejected or stopped
    tools: tuple[Tool, ...]  # VS Code tools, without symposium-agent-action; the Session keeps the bridged ones
    offers_agent_action: bool
    offers_todo_list: bool = False  # Copilot's `manage_todo_list`: the agent's plan goes to its widget
    offers_questions: bool = False  # Copilot's `vscode_askQuestions`: the agent's questions go to its UI
    edit_tools: frozenset[str] = frozenset()  # Copilot's edit tools offered: an agent's `fs/write_text_file` goes through them
    cwd: str | None = None
    resumable: bool = False  # a conversation from an earlier backend run: load its session if we can
    conversation_turn: int = 0  # the conversation's own number for this turn, as its markers count (`Conversations.begin`)
    model_id: str = ""  # the model entry the request was for
    options: tuple[tuple[str, str | bool], ...] = ()  # the agent's options wanted (model, mode, effort, ...)
    bridged: BridgedTools = attrs.Factory(BridgedTools)  # which of `tools` the agent may get (protocol/bridge/tool_policy.py)
    # A conversation's first turn after an edit of history: the agent session to go on from, where
    # the agent can fork it there; `context` primes a new session where it cannot (protocol/turn/opening.py).
    fork: ForkPoint | None = None
    after_marker: bool = False  # all that follows the request's newest marker is this turn's (forking.forks_after_marker)
    # The consumer asks for a summary: answered in the agent's own session (protocol/history/compaction.py).
    compaction: Summarisation | None = None
    folders: tuple[str, ...] = ()  # the workspace's folders besides `cwd` (protocol/host/workspace_folders.py)


@attrs.frozen
class PartEvent:
    part: Part


@attrs.frozen
class CompleteEvent:
    fork_point: ForkPoint | None = None  # where the agent session can be forked to go on after this turn


@attrs.frozen
class FailedEvent:
    error: Failure
    retire: bool  # the conversation cannot go on: the next request starts a new one


@attrs.frozen
class SessionEvent:
    conversation: str
    turn: int | None  # None: not about any request (e.g. the session retired while idle)
    event: PartEvent | CompleteEvent | FailedEvent


@attrs.frozen
class Reply:
    """History → the handler of one VS Code chat request: a part, the end, or an error."""

    part: Part | None = None
    error: Failure | None = None
    complete: bool = False
