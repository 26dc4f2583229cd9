"""Where an agent's messages about each of its sessions go: the Session's events channel, the
window that bounds what it has not read yet (backpressure, `actors/shared/flow.py`), the workspace folder
its writes stay in, and whether one of its prompts runs. One per agent connection (`AgentProcess`),
read by its client handlers (`actors/agent/client_handlers.py`).
"""

from __future__ import annotations

import collections
import logging
from typing import Any

import trio

from actors.shared.flow import EVENTS_WINDOW, Receipt, Window
from protocol.acp.update_kinds import BETWEEN_PROMPTS
from protocol.turn.events import AgentEvent, AgentGone, AgentUpdates

log = logging.getLogger(__name__)

# What an agent says of a session with no prompt running is kept (`session_updates.BETWEEN_PROMPTS`)
# while the session has less than IDLE_BACKLOG bytes unread, so a flood between prompts costs nothing.
IDLE_BACKLOG = 64 * 1024


class SessionRoutes:
    """The agent's sessions by id, each routed to the Session that holds it."""

    def __init__(self, agent_name: str) -> None:
        self._name = agent_name
        self._sessions: dict[str, trio.MemorySendChannel[AgentEvent]] = {}
        # Per session: the bytes of updates handed to it and not yet taken, and its prompts
        # running. The reader waits while a window is full (backpressure, `actors/shared/flow.py`).
        self._windows: dict[str, Window] = {}
        self._folders: dict[str, tuple[str, ...]] = {}  # session id -> the workspace folders its writes stay in
        self._prompting: collections.Counter[str] = collections.Counter()

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def __bool__(self) -> bool:
        return bool(self._sessions)

    def route(self, session_id: str, events: trio.MemorySendChannel[AgentEvent], folder: str, others: tuple[str, ...] = ()) -> None:
        self._sessions[session_id] = events
        self._folders[session_id] = (folder, *others)

    def folders(self, session_id: str) -> tuple[str, ...]:
        """The workspace folders a session's writes may land in: its own, then the workspace's others."""
        return self._folders.get(session_id, ())

    @property
    def prompts_in_flight(self) -> int:
        return sum(self._prompting.values())

    def prompt_started(self, session_id: str) -> None:
        self._prompting[session_id] += 1

    def prompt_ended(self, session_id: str) -> None:
        self._prompting[session_id] -= 1
        if self._prompting[session_id] <= 0:
            del self._prompting[session_id]

    def deliver(self, session_id: str, event: AgentEvent) -> bool:
        send = self._sessions.get(session_id)
        if send is None:
            log.debug("agent %s: event for unknown session %s dropped", self._name, session_id)
            return False
        try:
            send.send_nowait(event)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.unroute(session_id)
            return False
        return True

    def deliver_updates(self, session_id: str, updates: list[dict[str, Any]], size: int) -> None:
        """Updates to their session, counted in its window; between its prompts, only those
        that change its state, and only while it has little unread (see BETWEEN_PROMPTS)."""
        if session_id not in self._sessions:
            log.debug("agent %s: updates for unknown session %s dropped", self._name, session_id)
            return
        window = self._windows.get(session_id)
        if window is None:
            window = self._windows[session_id] = Window(EVENTS_WINDOW)
        if session_id not in self._prompting:
            kept = [u for u in updates if u.get("sessionUpdate") in BETWEEN_PROMPTS] if window.out < IDLE_BACKLOG else []
            if len(kept) < len(updates):
                log.debug("agent %s: %d update(s) for session %s between prompts dropped", self._name, len(updates) - len(kept), session_id)
            if not kept:
                return
            size = size * len(kept) // len(updates)
            updates = kept
        if self.deliver(session_id, AgentUpdates(tuple(updates), Receipt(size, window))):
            window.spend(size)

    async def room(self) -> None:
        """Before reading on: wait while a session has too much unread (its Session is
        waiting for VS Code to read). A session's window goes with its route (`unroute`)."""
        for window in list(self._windows.values()):
            await window.room()

    def unroute(self, session_id: str) -> trio.MemorySendChannel[AgentEvent] | None:
        """Stop routing to a session: its events channel (returned, for the caller to close)
        and its window, closed: what it left unread is nobody's, and the reader reads on."""
        if (window := self._windows.pop(session_id, None)) is not None:
            window.close()
        self._folders.pop(session_id, None)
        return self._sessions.pop(session_id, None)

    def end(self, gone: AgentGone) -> None:
        """The agent is gone: every session hears it, and nothing is routed any more."""
        for send in self._sessions.values():
            try:
                send.send_nowait(gone)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            send.close()
        self._sessions.clear()
        for window in self._windows.values():
            window.close()
        self._windows.clear()
        self._folders.clear()
