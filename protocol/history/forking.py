"""Fork points: the places in an agent session a conversation can go on from, as History keeps them.
Pure. Whether and how a session is forked there is the opening's plan (protocol/turn/opening.py).

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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

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
