"""Closing and loading an agent's sessions, against a scripted agent in-process.

The agent is a JSON-RPC peer on the far end of an in-memory stream, scripted by each test:
what it answers, what it never answers, and when it goes away.
"""

from __future__ import annotations

import math
import os
from typing import Any

import pytest
import trio
import trio.testing

from actors.agent.connection import StreamConnection
from actors.agent.pool import AgentPool
from actors.agent.process import AgentError
from actors.shared.memory_streams import memory_stream_pair
from actors.shared.peer import Peer
from protocol.shared.structuring import structure
from protocol.vscode.agent_identity import agent_key
from protocol.vscode.lm import Agent, ElizaAgent

GUARD = 10


class ScriptedAgent:
    """Offers session/load and session/close; never answers a close (an agent that hangs on it)."""

    def __init__(self) -> None:
        self.stream: trio.abc.Stream | None = None
        self.methods: list[str] = []
        self.close_asked = trio.Event()

    async def connect(self, agent: Agent, cwd: str, nursery: trio.Nursery) -> StreamConnection:
        ours, theirs = memory_stream_pair()
        self.stream = theirs
        peer = Peer(theirs, name="scripted agent")
        for method in ("initialize", "session/new", "session/load", "session/close"):
            peer.on_request(method, self._answer(method))
        nursery.start_soon(peer.serve)
        return StreamConnection(ours)

    def _answer(self, method: str) -> Any:
        async def answer(params: Any, _id: Any) -> Any:
            self.methods.append(method)
            if method == "initialize":
                return {"protocolVersion": 1, "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"close": {}}}}
            if method == "session/new":
                return {"sessionId": f"s{len(self.methods)}"}
            if method == "session/close":
                self.close_asked.set()
                await trio.sleep_forever()
            return {}

        return answer


async def test_a_session_waiting_to_load_after_a_close_learns_that_the_agent_died(nursery: trio.Nursery) -> None:
    agent = ScriptedAgent()
    pool = AgentPool(nursery, cwd=os.getcwd(), connector=agent.connect)
    events = trio.open_memory_channel[Any](math.inf)[0]
    with trio.fail_after(GUARD):
        process = await pool.start(ElizaAgent(), None)
        first = await process.new_session(os.getcwd(), [], events)
        first.close()  # the conversation was released: its session is closed...
        await agent.close_asked.wait()

        async def load_it_again() -> None:
            # ...and it comes back at once: loading waits for the close the agent never answers.
            with pytest.raises(AgentError) as failure:
                await process.new_session(os.getcwd(), [], events, resume=first.id)
            assert failure.value.error.kind == "agent_exited"

        async with trio.open_nursery() as waiting:
            waiting.start_soon(load_it_again)
            await trio.testing.wait_all_tasks_blocked()
            assert "session/load" not in agent.methods
            assert agent.stream is not None
            await agent.stream.aclose()  # the agent dies meanwhile


def test_an_agent_keeps_its_key_across_versions_even_with_non_ascii_in_its_definition() -> None:
    # What the state folder remembers of an agent (its sessions, its models, continue tokens) is
    # keyed by this text; it has always been written with non-ASCII characters escaped.
    agent = structure({"mcp_server": {"name": "zoë", "command": "/home/zoë/bin/agent", "args": ["--ü"], "env": []}}, Agent, "agent")
    assert agent_key(agent) == '{"mcp_server":{"args":["--\\u00fc"],"command":"/home/zo\\u00eb/bin/agent","env":[],"name":"zo\\u00eb"}}'
