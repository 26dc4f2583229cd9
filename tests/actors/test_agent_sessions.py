"""Opening, closing and loading an agent's sessions, against a scripted agent in-process.

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
from actors.agent.process import AgentError, AgentProcess
from actors.agent.session_handle import AgentSession
from actors.shared.memory_streams import memory_stream_pair
from actors.shared.peer import Peer
from protocol.shared.failures import FailureKind
from protocol.shared.jsonrpc import RpcError
from protocol.shared.structuring import structure
from protocol.turn.opening import Chat, Continued, Fresh, Origin, Remembered
from protocol.vscode.agent_identity import agent_key
from protocol.vscode.lm import Agent, ElizaAgent

GUARD = 10


class ScriptedAgent:
    """Offers session/load and session/close; never answers a close (an agent that hangs on it).
    `refusing`: the methods it answers with an error (`code`), each time."""

    def __init__(self, capabilities: dict[str, Any] | None = None, refusing: frozenset[str] = frozenset(), code: int = -32603) -> None:
        self.stream: trio.abc.Stream | None = None
        self.methods: list[str] = []
        self.close_asked = trio.Event()
        self.capabilities = capabilities if capabilities is not None else {"loadSession": True, "sessionCapabilities": {"close": {}}}
        self.refusing = refusing
        self.code = code

    async def connect(self, agent: Agent, cwd: str, nursery: trio.Nursery) -> StreamConnection:
        ours, theirs = memory_stream_pair()
        self.stream = theirs
        peer = Peer(theirs, name="scripted agent")
        for method in ("initialize", "session/new", "session/load", "session/resume", "session/fork", "session/close"):
            peer.on_request(method, self._answer(method))
        nursery.start_soon(peer.serve)
        return StreamConnection(ours)

    def _answer(self, method: str) -> Any:
        async def answer(params: Any, _id: Any) -> Any:
            self.methods.append(method)
            if method in self.refusing:
                raise RpcError(self.code, f"{method} refused")
            if method == "initialize":
                return {"protocolVersion": 1, "agentCapabilities": self.capabilities, "authMethods": [{"id": "login", "name": "Log in"}]}
            if method in ("session/new", "session/fork"):
                return {"sessionId": f"s{len(self.methods)}"}
            if method == "session/close":
                self.close_asked.set()
                await trio.sleep_forever()
            return {}

        return answer


async def opened(process: AgentProcess, origin: Origin, events: trio.MemorySendChannel[Any]) -> AgentSession:
    """A session opened as its plan says (actors/agent/opening.py does this with a tool bridge)."""
    return await process.open_session(process.plan(Chat(origin, os.getcwd())), os.getcwd(), [], events)


async def test_a_session_waiting_to_load_after_a_close_learns_that_the_agent_died(nursery: trio.Nursery) -> None:
    agent = ScriptedAgent()
    pool = AgentPool(nursery, cwd=os.getcwd(), connector=agent.connect)
    events = trio.open_memory_channel[Any](math.inf)[0]
    with trio.fail_after(GUARD):
        process = await pool.start(ElizaAgent(), None)
        first = await opened(process, Fresh(), events)
        first.close()  # the conversation was released: its session is closed...
        await agent.close_asked.wait()

        async def load_it_again() -> None:
            # ...and it comes back at once: loading waits for the close the agent never answers.
            with pytest.raises(AgentError) as failure:
                await opened(process, Remembered(first.id, os.getcwd(), saved_turn=None, marker_turn=1), events)
            assert failure.value.error.kind == "agent_exited"

        async with trio.open_nursery() as waiting:
            waiting.start_soon(load_it_again)
            await trio.testing.wait_all_tasks_blocked()
            assert "session/load" not in agent.methods
            assert agent.stream is not None
            await agent.stream.aclose()  # the agent dies meanwhile


async def test_a_refused_resume_falls_through_to_a_new_session_primed(nursery: trio.Nursery) -> None:
    # A conversation of an earlier run: its remembered session, else a new one with the history.
    agent = ScriptedAgent({"sessionCapabilities": {"resume": {}}}, refusing=frozenset({"session/resume"}))
    pool = AgentPool(nursery, cwd=os.getcwd(), connector=agent.connect)
    events = trio.open_memory_channel[Any](math.inf)[0]
    with trio.fail_after(GUARD):
        process = await pool.start(ElizaAgent(), None)
        session = await opened(process, Remembered("s0", os.getcwd(), saved_turn=1, marker_turn=1), events)
    assert agent.methods == ["initialize", "session/resume", "session/new"]
    assert not session.holds_history  # its first prompt carries the history


async def continuing_fails(nursery: trio.Nursery, agent: ScriptedAgent) -> AgentError:
    """Opening a session for a chat that names the agent's session `s0`: the failure it must end in."""
    pool = AgentPool(nursery, cwd=os.getcwd(), connector=agent.connect)
    events = trio.open_memory_channel[Any](math.inf)[0]
    with trio.fail_after(GUARD):
        process = await pool.start(ElizaAgent(), None)
        with pytest.raises(AgentError) as failure:
            await opened(process, Continued("s0", os.getcwd()), events)
    return failure.value


@pytest.mark.parametrize(
    ("capabilities", "tried"),
    [
        ({"sessionCapabilities": {"resume": {}}}, "session/resume"),
        ({"sessionCapabilities": {"fork": {}, "resume": {}}}, "session/fork"),
        ({"loadSession": True}, "session/load"),
        ({}, None),  # it cannot take one back: nothing is tried
    ],
)
async def test_a_session_the_chat_names_fails_the_turn_rather_than_become_a_new_one(nursery: trio.Nursery, capabilities: dict[str, Any], tried: str | None) -> None:
    agent = ScriptedAgent(capabilities, refusing=frozenset({"session/resume", "session/fork", "session/load"}))
    failure = await continuing_fails(nursery, agent)
    assert failure.error.kind == FailureKind.RESUME_FAILED
    assert agent.methods == ["initialize", *([tried] if tried else [])]  # no session/new in its place


async def test_a_session_the_chat_names_asks_for_a_sign_in_where_the_agent_wants_one(nursery: trio.Nursery) -> None:
    # The agent refuses to take its session back until the user signs in: the turn says so, with
    # the ways to sign in, as for a new session (docs/DESIGN.md, "Sign-in").
    agent = ScriptedAgent({"sessionCapabilities": {"resume": {}}}, refusing=frozenset({"session/resume"}), code=-32000)
    assert (await continuing_fails(nursery, agent)).error.kind == FailureKind.AUTH_REQUIRED


async def test_a_session_another_chat_holds_is_not_taken_back_twice(nursery: trio.Nursery) -> None:
    agent = ScriptedAgent({"sessionCapabilities": {"resume": {}}})
    pool = AgentPool(nursery, cwd=os.getcwd(), connector=agent.connect)
    events = trio.open_memory_channel[Any](math.inf)[0]
    with trio.fail_after(GUARD):
        process = await pool.start(ElizaAgent(), None)
        first = await opened(process, Continued("s0", os.getcwd()), events)
        assert first.id == "s0" and first.holds_history
        with pytest.raises(AgentError) as failure:
            await opened(process, Continued("s0", os.getcwd()), events)
        assert failure.value.error.kind == FailureKind.SESSION_IN_USE
        remembered = await opened(process, Remembered("s0", os.getcwd(), saved_turn=None, marker_turn=1), events)
    assert remembered.id != "s0" and not remembered.holds_history  # a new session, primed
    assert agent.methods == ["initialize", "session/resume", "session/new"]


def test_an_agent_keeps_its_key_across_versions_even_with_non_ascii_in_its_definition() -> None:
    # What the state folder remembers of an agent (its sessions, its models, continue tokens) is
    # keyed by this text; it has always been written with non-ASCII characters escaped.
    agent = structure({"mcp_server": {"name": "zoë", "command": "/home/zoë/bin/agent", "args": ["--ü"], "env": []}}, Agent, "agent")
    assert agent_key(agent) == '{"mcp_server":{"args":["--\\u00fc"],"command":"/home/zo\\u00eb/bin/agent","env":[],"name":"zo\\u00eb"}}'
