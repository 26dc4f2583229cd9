"""Opening a conversation's agent session as its plan says (protocol/turn/opening.py; docs/DESIGN.md,
"Opening a session"): the one way a Session (`actors/conversation/session.py`) and a spare session
made ahead (`actors/conversation/spares.py`) open theirs. The tries themselves are sent by
`AgentProcess` (`actors/agent/process.py`), which holds the connection and the routes.
"""

from __future__ import annotations

import os
from typing import Any

import attrs
import trio

from actors.agent.pool import AgentPool
from actors.agent.process import AgentProcess
from actors.agent.session_handle import AgentSession
from actors.bridge.listener import BridgeListener
from actors.bridge.tool_bridge import ToolBridge, open_bridge
from actors.store.transcript import Recorder
from protocol.turn.opening import Chat, Plan
from protocol.vscode.lm import Agent


@attrs.define(eq=False)
class Opened:
    """A conversation's session as its plan opened it, with the tool bridge it was given."""

    process: AgentProcess
    plan: Plan
    session: AgentSession
    bridge: ToolBridge


async def open_planned(
    pool: AgentPool, agent: Agent, chat: Chat, bridges: BridgeListener, events: trio.MemorySendChannel[Any], *, recorder: Recorder | None = None
) -> Opened:
    """Start `agent` if need be, plan `chat`'s opening from what it declared, open the
    conversation's tool bridge offering the plan's tools (the agent connects to it while its
    session opens, and lists the first turn's tools as they will be), then carry out the plan's
    tries. Raises AgentError (the bridge closed) when no session opens."""
    process = await pool.start(agent, chat.folder)
    plan = process.plan(chat)
    bridge = await open_bridge(bridges, events, plan.tools, recorder=recorder)  # raises AgentError when it cannot listen
    try:
        entry = await bridge.entry_for(plan.transport)
        session = await process.open_session(plan, _absolute(plan.folder or pool.cwd), [entry], events)
    except BaseException:
        bridge.close()
        raise
    return Opened(process, plan, session, bridge)


def _absolute(folder: str) -> str:
    """`folder` made absolute, as ACP wants it (against the backend's working directory)."""
    return os.path.abspath(folder)
