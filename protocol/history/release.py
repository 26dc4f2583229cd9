"""Which live conversations to release: plain bookkeeping, no trio, no I/O.

A live conversation costs its Session actor, its agent session (memory in the agent, and
for agents that keep their MCP connection open, one socket here) and its entries in
History's maps. Conversations the user has left are released, and come back through the
restart path on their next request (their marker names a conversation this process no
longer holds: `session/load` when the agent can, else a new session primed with the
history). What the user would notice decides the order:

- a conversation that is streaming is never released: someone is reading it;
- one waiting on VS Code (a permission or a tool call it emitted, whose result the next
  request brings) is released only when the count is over the limit and no idle one is
  left to release; its Session then answers everything it owes the agent as for a cancel;
- the others (idle) go least recently used first when there are more than `limit`, and
  whatever has been idle for `idle` seconds.
"""

from __future__ import annotations

import collections
import enum
import math


class Use(enum.Enum):
    STREAMING = "streaming"  # a request is being answered
    WAITING = "waiting"  # its last reply asked VS Code for a permission or a tool result
    IDLE = "idle"


class ReleasePolicy:
    """Tracks when each live conversation was last used and in what state; says which to release.

    History calls `used` when a turn starts and when its reply ends, `forget` when a
    conversation ends for any reason, and `due` after each message it handles (and when
    `deadline` passes), then releases what `due` returned.
    """

    def __init__(self, limit: int, idle: float) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self.idle = idle
        # conversation id → (last used, state), least recently used first
        self._order: collections.OrderedDict[str, tuple[float, Use]] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, conversation: str) -> bool:
        return conversation in self._order

    def used(self, conversation: str, now: float, state: Use) -> None:
        self._order[conversation] = (now, state)
        self._order.move_to_end(conversation)

    def forget(self, conversation: str) -> None:
        self._order.pop(conversation, None)

    def due(self, now: float) -> list[str]:
        """The conversations to release now, least recently used first; forgotten here.

        Costs O(released + streaming/waiting conversations older than them): it stops at the
        first idle conversation that is neither over the limit nor idle for long enough.
        """
        excess = len(self._order) - self.limit
        chosen: list[str] = []
        waiting: list[str] = []
        for conversation, (last, state) in self._order.items():
            if state is Use.STREAMING:
                continue
            if state is Use.WAITING:
                waiting.append(conversation)
                continue
            if excess > 0:
                excess -= 1
            elif last + self.idle > now:  # the same sum as `deadline`, so a deadline met is a release
                break  # every later conversation was used more recently
            chosen.append(conversation)
        chosen += waiting[: max(excess, 0)]
        for conversation in chosen:
            del self._order[conversation]
        return chosen

    def deadline(self) -> float:
        """When the least recently used idle conversation will have been idle too long (inf: none)."""
        for last, state in self._order.values():
            if state is Use.IDLE:
                return last + self.idle
        return math.inf
