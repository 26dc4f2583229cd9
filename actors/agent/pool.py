"""The AgentPool: one AgentProcess per agent definition, started on demand, stopped when idle."""

from __future__ import annotations

import logging

import attrs
import trio

from actors.agent.connection import Connector
from actors.agent.process import AgentProcess
from actors.bridge.mcp_stream import import_mcp
from actors.shared import threads
from actors.store.transcript import Recorder
from protocol.acp.agent_facts import AgentFactsTable
from protocol.shared.failures import AgentError
from protocol.shared.redact import Redactor
from protocol.shared.settings import Settings
from protocol.vscode.agent_identity import agent_key
from protocol.vscode.lm import Agent, ProcessAgent

log = logging.getLogger(__name__)


async def _warm_up_mcp() -> None:
    """Import the MCP SDK in a thread, ahead of need. Only an optimisation: when it cannot
    run (no thread to be had), the bridge imports the SDK when an agent connects."""
    try:
        await threads.run_sync(import_mcp, abandon_on_cancel=True)
    except Exception as exc:
        log.warning("could not import the MCP SDK ahead of time: %s", exc)


@attrs.define(eq=False)
class _Start:
    """One agent start under way, which whoever asks for that agent meanwhile awaits."""

    done: trio.Event = attrs.Factory(trio.Event)
    process: AgentProcess | None = None
    error: AgentError | None = None


@attrs.define(eq=False)
class AgentPool:
    """Starts one AgentProcess per agent definition, on demand, in the pool's nursery."""

    _nursery: trio.Nursery
    cwd: str = attrs.field(kw_only=True)  # where agents work when a request names no folder
    _connector: Connector = attrs.field(kw_only=True)
    _idle: float = attrs.field(default=Settings().agent_idle, kw_only=True)
    _request_timeout: float = attrs.field(default=Settings().agent_timeout, kw_only=True)  # for requests but prompts
    _recorder: Recorder | None = attrs.field(default=None, kw_only=True)
    secrets: Redactor = attrs.field(factory=Redactor, kw_only=True)  # every agent's env values (protocol/shared/redact.py)
    # What is known of agents by their `agentInfo.name` (protocol/acp/agent_facts.py); none by default.
    facts: AgentFactsTable = attrs.field(factory=dict, kw_only=True)
    started: int = attrs.field(default=0, init=False)  # agent processes started so far
    _agents: dict[str, AgentProcess] = attrs.field(factory=dict, init=False)
    _starting: dict[str, _Start] = attrs.field(factory=dict, init=False)
    _warmed: bool = attrs.field(default=False, init=False)
    _idle_watch: trio.CancelScope | None = attrs.field(default=None, init=False)  # the idle loop's, while it runs

    async def start(self, agent: Agent, cwd: str | None) -> AgentProcess:
        """The running process of `agent`, started (and initialized) if need be; raises AgentError
        when it cannot start. The start is the pool's: a caller cancelled while it waits (lm/cancel
        of a first turn) stops waiting, and the start goes on for whoever asks next."""
        key = agent_key(agent)
        process = self._agents.get(key)
        if process is not None and process.usable:
            return process
        starting = self._starting.get(key)
        if starting is None:
            starting = self._starting[key] = _Start()
            self._nursery.start_soon(self._start, key, agent, cwd, starting)
        await starting.done.wait()
        if starting.error is not None:
            raise AgentError(starting.error.error)  # each waiter its own exception
        assert starting.process is not None
        return starting.process

    def restart(self, agent: Agent) -> bool:
        """Stop `agent`'s running process, if any, so that the next request starts it afresh (after
        a sign-in in a terminal: ACP v1 has the client start the agent again). Its sessions end as
        for an exit; their chats start afresh too. False when it was not running."""
        process = self._agents.pop(agent_key(agent), None)
        if process is None:
            return False
        log.info("restarting agent %s", process.name)
        process.stop()
        return True

    async def _start(self, key: str, agent: Agent, cwd: str | None, starting: _Start) -> None:
        try:
            if isinstance(agent, ProcessAgent) and not self._warmed:
                # Real agents connect to the tool bridge at once; have the MCP SDK ready.
                self._warmed = True
                self._nursery.start_soon(_warm_up_mcp)
            process = AgentProcess(
                agent, cwd=cwd or self.cwd, recorder=self._recorder, connector=self._connector, secrets=self.secrets, request_timeout=self._request_timeout,
                facts=self.facts,
            )
            try:
                await self._nursery.start(process.run)
            except AgentError as exc:
                starting.error = exc
                return
            if not self._agents:
                self._nursery.start_soon(self._stop_idle_agents)
            self._agents[key] = process
            self.started += 1
            starting.process = process
        finally:
            del self._starting[key]
            starting.done.set()

    async def _stop_idle_agents(self) -> None:
        """Stop agents no session has used for `idle` seconds; runs while any agent does, until
        `shutdown` (which would otherwise wait for its sleep to end)."""
        with trio.CancelScope() as self._idle_watch:
            while self._agents:
                await trio.sleep(max(self._idle / 4, 0.01))
                now = trio.current_time()
                for key, process in list(self._agents.items()):
                    if process.exited.is_set():
                        del self._agents[key]
                    elif process.prompts_in_flight == 0 and now - process.last_active >= self._idle:
                        log.info("stopping agent %s: unused for %.0f s", process.name, now - process.last_active)
                        del self._agents[key]
                        process.stop()

    async def shutdown(self) -> None:
        """Stop every agent gracefully (bounded) and wait for them."""
        if self._idle_watch is not None:
            self._idle_watch.cancel()
        agents = list(self._agents.values())
        self._agents.clear()
        for process in agents:
            process.stop()
        for process in agents:
            await process.exited.wait()
