"""Warm agents: a prepared agent runs before its first request, and a spare session waits for it.

A new conversation with a real agent pays for the agent's process (seconds through npx),
its `initialize`, and its `session/new` (Claude Code's adapter takes a second or more
there); a follow-up turn pays for none of them. `lm/prepareModel` starts the agent and
makes one spare session for it (with its own tool bridge, as a conversation would have);
from then on, a new conversation with that agent in that folder takes the spare, and
a new one is made once that conversation's request has been answered.

Only prepared agents get spares: an agent nobody asked to keep warm costs nothing.
"""

from __future__ import annotations

import logging
import math
import os
from typing import Any

import attrs
import trio

from actors.agent.opening import open_planned
from actors.agent.pool import AgentPool
from actors.agent.process import AgentProcess
from actors.agent.session_handle import AgentSession
from actors.bridge.listener import BridgeListener
from actors.bridge.tool_bridge import ToolBridge
from actors.store.catalog import AgentCatalog
from actors.store.transcript import Recorder
from protocol.acp.agent_options import read_choices
from protocol.shared.failures import AgentError
from protocol.turn.opening import Chat, Fresh, Plan, SpareFit, spare_fit
from protocol.vscode.agent_identity import agent_key, agent_label
from protocol.vscode.lm import Agent, BridgedTools, Tool

log = logging.getLogger(__name__)

_Key = tuple[str, str]  # (agent key, absolute folder)


@attrs.define(eq=False)
class Spare:
    """An ACP session made ahead, with the tool bridge it was given and the channel of its events."""

    process: AgentProcess
    plan: Plan  # how it was opened (protocol/turn/opening.py): a new session, with `plan.tools` offered
    session: AgentSession
    bridge: ToolBridge
    events_send: trio.MemorySendChannel[Any]
    events: trio.MemoryReceiveChannel[Any]

    def discard(self) -> None:
        self.session.close()
        self.bridge.close()
        self.events_send.close()


class Spares:
    """One spare session per prepared (agent, folder); the spares are made in `nursery`, and
    their bridges run where every bridge does, in the listener's (`BridgeListener.open`)."""

    def __init__(
        self,
        pool: AgentPool,
        nursery: trio.Nursery,
        bridges: BridgeListener,
        *,
        cwd: str,
        recorder: Recorder | None = None,
        catalog: AgentCatalog | None = None,
    ) -> None:
        self._pool = pool
        self._nursery = nursery
        self._bridges = bridges
        self._cwd = cwd
        self._recorder = recorder
        self._catalog = catalog  # what agents offer: a spare's models are offered once it is made
        self._kept: dict[_Key, Agent] = {}
        self._ready: dict[_Key, Spare] = {}
        self._making: dict[_Key, trio.Event] = {}
        self._failed: dict[_Key, AgentError] = {}
        # The latest conversation's tools, tool choice, and whether it wanted the agent's editing
        # handed to VS Code, per agent: the next spare is made the same way.
        self._tools: dict[str, tuple[tuple[Tool, ...], BridgedTools, bool]] = {}
        self._owed: set[_Key] = set()  # spares taken, made again once the request that took them ends

    def _key(self, agent: Agent, cwd: str | None) -> _Key:
        return agent_key(agent), os.path.abspath(cwd or self._cwd)

    async def prepare(self, agent: Agent, cwd: str | None) -> tuple[AgentProcess, AgentError | None]:
        """Start `agent` (raises AgentError if it cannot) and keep a spare session for it from now on.

        Returns once the spare is ready, with why it could not be made if it could not.
        """
        process = await self._pool.start(agent, cwd)
        key = self._key(agent, cwd)
        self._kept[key] = agent
        await self._fill(key)
        return process, None if key in self._ready else self._failed.get(key)

    async def take(self, agent: Agent, chat: Chat) -> Spare | None:
        """The spare session for `chat`'s opening, if it serves it (`opening.spare_fit`): waiting
        for one on its way, unless the chat names a session of its own; else None.

        A spare made the other way round (its agent's own editing on where this conversation
        hands it to VS Code, or off where it does not) is discarded: an ACP session's options
        are fixed when it is made. See "Tool bridge" in docs/DESIGN.md.
        """
        key = self._key(agent, chat.cwd)
        self._tools[key[0]] = (chat.tools, chat.bridged, chat.edits_wanted)
        if key not in self._kept:
            return None
        if (making := self._making.get(key)) is not None and not chat.names_session:
            await making.wait()
        spare = self._ready.get(key)
        if spare is None:
            if not chat.names_session:
                self._owed.add(key)  # none was ready (it failed): tried again once this request ends
            return None
        if spare.process.exited.is_set():
            del self._ready[key]
            self._owed.add(key)
            spare.discard()  # the agent stopped (idle, crashed) since; the caller starts it again
            return None
        wanted = spare.process.plan(chat)
        fit = spare_fit(wanted, spare.plan)
        if fit in (SpareFit.NOT_NEW, SpareFit.OTHER_FOLDERS):
            return None  # the chat goes on in a session of its own (or a workspace of several folders): the spare waits for another
        del self._ready[key]
        self._owed.add(key)
        if fit is SpareFit.OTHER_EDITING:
            log.info("spare session %s discarded: it was made for the other way of editing", spare.session.id)
            spare.discard()
            return None
        if fit is SpareFit.RETOOL:
            # The agent must have this request's tools before its first model request. One that
            # listed the spare's tools lists these once told (Claude Code does); one that does not
            # would never see them (Codex), so its spare is discarded and the session made afresh,
            # with these tools from the start (docs/DESIGN.md, "Tool bridge").
            spare.bridge.update_tools(wanted.tools)
            if not await spare.bridge.announced():
                log.info("spare session %s discarded: its agent did not list this request's tools", spare.session.id)
                spare.discard()
                return None
        return spare

    def settled(self, agent: Agent, cwd: str | None) -> None:
        """A chat request with `agent` was answered: make the spare it took, if it took one.

        Not sooner: making a session costs the agent CPU (Claude Code starts its CLI), which
        the conversation that took the spare would wait for.
        """
        key = self._key(agent, cwd)
        if key in self._owed:
            self._owed.discard(key)
            self._nursery.start_soon(self._fill, key)

    async def _fill(self, key: _Key) -> None:
        """Make the spare for `key` unless one is ready; returns once there is one, or it failed."""
        if key in self._ready:
            return
        if (making := self._making.get(key)) is not None:
            await making.wait()
            return
        done = self._making[key] = trio.Event()
        try:
            await self._make(key)
        finally:
            del self._making[key]
            done.set()

    async def _make(self, key: _Key) -> None:
        agent, cwd = self._kept[key], key[1]
        # Before any conversation: as Copilot's Agent mode, the chat view's default, would have it.
        tools, bridged, wanted = self._tools.get(key[0], ((), BridgedTools(), True))
        events_send, events = trio.open_memory_channel[Any](math.inf)
        try:
            opened = await open_planned(self._pool, agent, Chat(Fresh(), cwd, tools, bridged, wants_edits=wanted), self._bridges, events_send, recorder=self._recorder)
        except AgentError as exc:
            events_send.close()
            self._failed[key] = exc
            log.info("no spare session for %s: %s", agent_label(agent), exc.error.message)
            return
        self._failed.pop(key, None)
        session = opened.session
        if self._catalog is not None:  # its models are offered from now on, not after its first chat
            self._catalog.learn_session(key[0], read_choices(session.answer), images=session.accepts_images)
        self._ready[key] = Spare(opened.process, opened.plan, session, opened.bridge, events_send, events)
        log.debug("spare session %s ready for %s", session.id, session.agent_name)
