"""How the backend starts agents and how they reach it: the application's side of the actors' seams.

The AgentProcess actor (`actors/agent/process.py`) speaks ACP over whatever `AgentConnection`
its connector gives it; this module is the connector the backend uses (`connect`). The
built-in Eliza runs in-process over an in-memory stream pair; every other agent is a
subprocess, started and stopped with everything it started the platform's way, chosen once
(`actors/shared/platform.py`): in a process group under `symposium/guard.py` (`symposium/process_posix.py`),
or on Windows in a Job Object (`symposium/process_windows.py`).

`RELAY` is how an agent reaches its conversation's ToolBridge (`actors/bridge/tool_bridge.py`): the
stdio MCP server it starts (`symposium/mcp_relay.py`).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

import attrs
import trio

from actors.agent.connection import AgentConnection, Connector, StreamConnection
from actors.bridge.listener import Relay
from actors.shared.memory_streams import memory_stream_pair
from actors.shared.platform import ON_WINDOWS
from protocol.acp.agent_facts import AgentFactsTable, start_env
from protocol.vscode.agent_identity import agent_label
from protocol.vscode.lm import Agent, ElizaAgent, EnvVar, ProcessAgent
from symposium import mcp_relay

if TYPE_CHECKING:
    from symposium.process_posix import GuardedProcess
    from symposium.process_windows import JobProcess

log = logging.getLogger(__name__)

AgentSubprocess: type[JobProcess] | type[GuardedProcess]
if ON_WINDOWS:  # no process groups nor signals there: a Job Object instead
    from symposium.process_windows import JobProcess as AgentSubprocess
else:
    from symposium.process_posix import GuardedProcess as AgentSubprocess

# Run as a file with -I -S: the agent starts it in the workspace, whose modules must not be importable
# (docs/reliability.md), and it is standard library only, so `site` would only slow it down.
RELAY = Relay(command=(sys.executable, "-I", "-S", os.path.abspath(mcp_relay.__file__)))


async def connect(agent: Agent, cwd: str, nursery: trio.Nursery) -> AgentConnection:
    """Start `agent` (in folder `cwd`); its serving tasks run in `nursery`. Raises AgentError."""
    if isinstance(agent, ElizaAgent):
        from symposium.eliza.agent import serve_eliza

        ours, theirs = memory_stream_pair()
        nursery.start_soon(serve_eliza, theirs, agent.deterministic)
        return StreamConnection(ours)
    return await AgentSubprocess.spawn(agent, cwd)


def with_start_facts(connector: Connector, facts: AgentFactsTable) -> Connector:
    """`connector`, starting each agent with what the agent facts say it needs in its environment at
    start (`startEnv`), known by what it runs, however it was configured (docs/DESIGN.md, "Agent
    facts"): what its own `env` sets wins. The definition the pool keys the agent by is unchanged."""

    async def connect_with_facts(agent: Agent, cwd: str, nursery: trio.Nursery) -> AgentConnection:
        if isinstance(agent, ProcessAgent):
            given = {var.name for var in agent.env}
            added = tuple(EnvVar(name, value) for name, value in start_env(facts, agent.command, agent.args).items() if name not in given)
            if added:
                log.info("agent %s starts with %s (agent facts)", agent_label(agent), ", ".join(f"{var.name}={var.value}" for var in added))
                agent = attrs.evolve(agent, env=(*added, *agent.env))
        return await connector(agent, cwd, nursery)

    return connect_with_facts
