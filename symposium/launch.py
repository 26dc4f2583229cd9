"""How the backend starts agents and how they reach it: the application's side of the actors' seams.

The AgentProcess actor (`actors/agent_process.py`) speaks ACP over whatever `AgentConnection`
its connector gives it; this module is the connector the backend uses (`connect`). The
built-in Eliza runs in-process over an in-memory stream pair; every other agent is a
subprocess, started and stopped with everything it started the platform's way, chosen once
(`actors/platform.py`): in a process group under `symposium/guard.py` (`symposium/process_posix.py`),
or on Windows in a Job Object (`symposium/process_windows.py`).

`RELAY` is how an agent reaches its conversation's ToolBridge (`actors/tool_bridge.py`): the
stdio MCP server it starts (`symposium/mcp_relay.py`).
"""

from __future__ import annotations

import os
import sys

import trio

from actors.agent_connection import AgentConnection, StreamConnection
from actors.bridge_listener import Relay
from actors.platform import ON_WINDOWS
from actors.streams import memory_stream_pair
from protocol.lm import Agent, ElizaAgent
from symposium import mcp_relay

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
