"""Where a conversation's agent session comes from when the chat's history is not the session's:
the agent's own session forked at the last turn the chat keeps, or a new session primed with the
history as text (the fallback). Pure: the Session actor (`actors/conversation/session.py`) carries it out.

An edited message, Retry, "Fork conversation", a restored checkpoint or a model switched back
send a history that leaves a conversation at an older marker (docs/DESIGN.md, "Identity and
markers"). A new session primed with that history as text loses the agent's own tool calls,
results and reasoning of the turns the chat keeps. An agent that can fork its session at a
message keeps them: the fork holds exactly the turns up to that marker's, natively, and the
original session goes on untouched for whichever chat still holds it. See "Forks" in
docs/DESIGN.md.

- A **fork point** is recorded for each turn whose prompt ended (`end_turn`): the session and
  the `messageId` of the last message the agent streamed in it (ACP's `agent_message_chunk`
  and `agent_thought_chunk` carry it). A turn that ended with a call VS Code runs (a card, a
  tool), or whose agent stamps no message ids, has none: after it the session holds more than
  the chat's turn, or nothing names the place.
- A request forks at the marker's turn only when that marker is on the request's last
  assistant message: everything after it is the new turn. Turns of another model after it
  (a model switched back), or replies that lost their markers, are not in the agent's session
  and would be lost: those are primed.
- Whether the agent forks at a message is decided from what it declares: ACP's
  `sessionCapabilities.fork` (`session/fork`, which copies a whole session), and for the
  message, a way the agent is known to read. ACP names none, and no agent declares one:
  claude-agent-acp (0.100) reads JetBrains AIR's `_meta.jetbrains.air.fork` `{version: 1,
  messageId}` and says so nowhere, so the agents that do are data (`forksAtMessage` in the
  agent facts, by the `agentInfo` of their `initialize`: protocol/acp/agent_facts.py). An agent that forks
  only whole sessions (or not at all) is primed.
- After a restart (`opening_after_restart`): the saved session resumes only at a marker of its
  last turn; a marker older than that forks at that turn's saved fork point, else is primed;
  never resumed past it.
- Continuing an agent's own session (`protocol/acp/continuing.py`): an agent that declares
  `session/fork` is continued in a fork of it (the whole session), so its own session stays as
  the user left it, and a second chat continuing it (the same one twice, or the first question
  edited) gets a fork of its own; an agent that cannot fork resumes it, one chat at a time.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from protocol.acp.agent_facts import AgentFacts, MessageFork, version
from protocol.acp.capabilities import Initialized
from protocol.acp.update_kinds import MESSAGE_KINDS
from protocol.history.user_turns import last_assistant
from protocol.vscode.lm import Message


@attrs.frozen
class ForkPoint:
    """A place in an agent session a conversation can go on from: just after message `message_id`."""

    session_id: str
    message_id: str


MAX_MESSAGE_ID = 256  # characters: a longer id is not kept (an agent's ids are opaque, not unbounded)


def last_message_id(updates: Iterable[Mapping[str, Any]], previous: str | None) -> str | None:
    """The id of the agent's latest message after these updates (`previous` if they name none)."""
    for update in updates:
        if update.get("sessionUpdate") in MESSAGE_KINDS:  # its `messageId` names a message of the agent's in its session
            message_id = update.get("messageId")
            if isinstance(message_id, str) and 0 < len(message_id) <= MAX_MESSAGE_ID:
                previous = message_id
    return previous


def fork_point(session_id: str, message_id: str | None, ended_turn: bool) -> ForkPoint | None:
    """The fork point a turn leaves, if any: only a turn whose prompt ended (`ended_turn`) with a
    message the agent named."""
    return ForkPoint(session_id, message_id) if ended_turn and message_id is not None else None


def forks_after_marker(messages: tuple[Message, ...] | list[Message], marker_index: int) -> bool:
    """Whether a request whose newest marker is on `messages[marker_index]` can go on in a fork at
    that marker's turn: nothing the agent said after it (the marker's message is the last
    assistant message), so what follows is exactly the new turn."""
    return last_assistant(messages) == marker_index + 1


def message_fork(initialized: Initialized, facts: AgentFacts) -> MessageFork | None:
    """How this agent forks a session at a message, from its `initialize` answer and what is known
    of it (`facts`, protocol/acp/agent_facts.py); None: it cannot (it declares no `session/fork`, or it
    is not known to read a fork point, or its version is older than the one known to)."""
    known = facts.forks_at_message
    if known is None or not initialized.capabilities.sessions.fork:
        return None
    found = version(initialized.info.version) if initialized.info is not None else None
    return known if found is not None and found >= known.since else None


@attrs.frozen
class Fork:
    """A `session/fork` to open a conversation's session with."""

    session_id: str  # the session forked
    meta: Mapping[str, Any] = attrs.field(factory=dict)  # what names the message it ends with; empty: the whole session
    must: bool = False  # fail rather than start a new session when the agent refuses (continuing a named session)


def fork_at(initialized: Initialized, facts: AgentFacts, point: ForkPoint | None) -> Fork | None:
    """The fork that goes on from `point`, if this agent forks at a message; None: prime."""
    how = message_fork(initialized, facts) if point is not None else None
    return Fork(point.session_id, how.meta(point.message_id)) if how is not None and point is not None else None


def continue_in_fork(initialized: Initialized, session_id: str) -> Fork | None:
    """How a chat continues the agent's own session `session_id` (protocol/acp/continuing.py): in a
    fork of it, the whole session, where the agent declares `session/fork`; None: it resumes it."""
    return Fork(session_id, must=True) if initialized.capabilities.sessions.fork else None


class Opening(enum.Enum):
    """How a conversation named by a marker of an earlier backend run gets its agent session."""

    RESUME = "resume"  # the saved session, as it is
    FORK = "fork"  # a fork of the saved session at the marker's turn
    PRIME = "prime"  # a new session, primed with the history


def opening_after_restart(conversation_turn: int, saved_turn: int | None, point: ForkPoint | None) -> Opening:
    """`conversation_turn`: the conversation's first turn in this run (the marker's turn + 1); `saved_turn`: the
    last turn handed to the saved session (None: not known, a store written before it was kept);
    `point`: the saved fork point of the marker's turn, if any.

    Only a marker of the saved session's last turn resumes it. An older one (the chat lost later
    turns, or the user edited or retried one) forks the session at the marker's turn where a fork
    point was saved, else primes; it never resumes past it. A newer one (the store lost its last
    saves) would hide turns the user sees: primed. See "Identity and markers" in docs/DESIGN.md.
    """
    marker_turn = conversation_turn - 1
    if saved_turn is None or saved_turn == marker_turn:
        return Opening.RESUME
    if marker_turn < saved_turn and point is not None:
        return Opening.FORK
    return Opening.PRIME
