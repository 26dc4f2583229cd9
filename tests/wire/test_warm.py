"""Warm agents through the real backend: `lm/prepareModel` starts an agent and keeps a spare session,
so a new conversation does not wait for the agent's process or its `session/new`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from protocol.shared.jsonrpc import RpcError
from symposium.client import BackendClient, process_agent, user
from tests.conftest import Tap
from tests.wire.test_backend_wire import GUARD, HELLO_REPLY, assert_well_formed
from tests.wire.test_identity import with_marker

ECHO = {"name": "echo", "description": "Echoes its text", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


def session_ids(tap: Tap) -> list[str]:
    """The ids the agent gave its sessions, in order."""
    new_ids = {m["id"] for m in tap.requests("session/new")}
    return [m["result"]["sessionId"] for m in tap.messages("a2c") if m.get("id") in new_ids and "result" in m]


async def test_prepare_starts_the_agent_and_a_new_conversation_takes_its_spare_session(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        prepared = await backend.prepare(tap.agent, model_id="eliza-tap")
    assert prepared["ready"] is True
    assert prepared["authMethods"] == []
    assert len(tap.pids()) == 1 and len(tap.requests("session/new")) == 1 and not tap.requests("session/prompt")
    [spare] = session_ids(tap)

    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hello")], agent=tap.agent)
        assert_well_formed(result)
        assert result.text() == HELLO_REPLY
        # The prompt went to the spare, asked for no session of its own first.
        [prompt] = tap.requests("session/prompt")
        assert prompt["params"]["sessionId"] == spare
        # Once the request is answered, the next spare is made; prepare answers when it is ready.
        again = await backend.prepare(tap.agent, model_id="eliza-tap")
    assert again["ready"] is True
    assert len(tap.requests("session/new")) == 2 and len(tap.pids()) == 1

    with trio.fail_after(GUARD):
        second = await backend.chat([user("I am sad")], agent=tap.agent)
    assert_well_formed(second)
    assert tap.requests("session/prompt")[-1]["params"]["sessionId"] == session_ids(tap)[1]


async def test_a_conversation_on_a_spare_session_gets_the_tools_of_its_own_request(backend: BackendClient, tap: Tap) -> None:
    """The spare was made before any request offered tools; its bridge follows the conversation's."""
    with trio.fail_after(GUARD):
        await backend.prepare(tap.agent, model_id="eliza-tap")
        result = await backend.chat([user("list tools from vscode_tools")], agent=tap.agent, tools=[ECHO])
    assert_well_formed(result)
    assert "echo" in result.text()
    # It ran on the spare (the next spare may be on its way already, once the request was answered).
    assert tap.requests("session/prompt")[0]["params"]["sessionId"] == session_ids(tap)[0]


async def test_an_agent_that_cannot_start_fails_prepare_as_it_would_fail_a_chat(backend: BackendClient) -> None:
    missing = process_agent("missing", "/nonexistent/agent")
    with trio.fail_after(GUARD), pytest.raises(RpcError) as failed:
        await backend.prepare(missing, model_id="missing")
    assert failed.value.code == -32000
    assert "/nonexistent/agent" in failed.value.message


async def test_an_agent_that_refuses_sessions_is_prepared_but_not_ready(backend: BackendClient, tmp_path: Path) -> None:
    """What an agent that wants a sign-in first looks like: it starts, but `session/new` fails."""
    agent_script = tmp_path / "refuses.py"
    agent_script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        "        r = {'protocolVersion': 1, 'agentCapabilities': {}, 'authMethods': [{'id': 'login', 'name': 'Log in', 'description': 'Sign in first'}]}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
        "    elif 'id' in m:\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': -32000, 'message': 'Authentication required'}}), flush=True)\n"
    )
    agent = process_agent("refuses", sys.executable, [str(agent_script)])
    with trio.fail_after(GUARD):
        prepared = await backend.prepare(agent, model_id="refuses")
    assert prepared["ready"] is False
    assert "Authentication required" in prepared["error"]
    assert prepared["authMethods"] == [{"id": "login", "name": "Log in", "kind": "agent", "description": "Sign in first"}]



FORK_POINTS = process_agent("hostile", sys.executable, [str(Path(__file__).parents[1] / "support" / "hostile_agent.py"), "fork-points"])


async def test_an_edit_of_history_the_agent_cannot_fork_at_takes_the_spare_session(backend: BackendClient) -> None:
    """The edited chat goes on in a new session primed with what it keeps: the spare made ahead
    serves it as it serves a new chat (docs/DESIGN.md, "Opening a session")."""
    with trio.fail_after(GUARD):
        await backend.prepare(FORK_POINTS, model_id="hostile")  # session-1, the spare
        first = await backend.chat([user("one")], agent=FORK_POINTS)
        assert first.text() == "session-1 echo: one"
        await backend.prepare(FORK_POINTS, model_id="hostile")  # session-2, made once the request was answered
        history = [user("one"), with_marker(first)]
        second = await backend.chat([*history, user("two")], agent=FORK_POINTS)
        assert second.text() == "session-1 echo: two"  # the same conversation
        # The second message edited: turn 1 left a fork point, but the agent declares no session/fork.
        edited = await backend.chat([*history, user("two, edited")], agent=FORK_POINTS)
    assert_well_formed(edited)
    assert edited.text().startswith("session-2 echo: Earlier in this conversation")  # the spare, primed
    assert edited.text().endswith("two, edited")
