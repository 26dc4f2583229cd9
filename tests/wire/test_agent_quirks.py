"""Real agents' quirks, start-up failures and cancels they ignore, through a real backend."""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from protocol.vscode.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, process_agent, tool_result, user

QUIRKY = process_agent("quirky", sys.executable, [str(Path(__file__).parents[1] / "support" / "quirky_agent.py")])
GUARD = 30


async def test_permission_with_uuid_request_id_and_unannounced_call_is_chosen_by_kind(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        ask = await backend.chat([user("permission")], agent=QUIRKY, tools=[AGENT_ACTION_TOOL_DEF])
        [call] = ask.tool_calls()
        assert call["parameters"] == {"kind": "edit", "title": "Edit config.toml"}  # no raw input: none sent
        done = await backend.chat(
            [user("permission"), ask.assistant_message(), tool_result(call["toolCallId"], AGENT_ACTION_APPROVED)], agent=QUIRKY, tools=[AGENT_ACTION_TOOL_DEF]
        )
    assert done.text() == 'outcome: {"optionId": "approved", "outcome": "selected"}'


async def test_unoffered_client_methods_get_an_error_and_noise_is_ignored(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        fs = await backend.chat([user("fs")], agent=QUIRKY)
        noise = await backend.chat([user("noise")], agent=QUIRKY)
    assert fs.text() == "fs: error -32601"
    assert noise.text() == "noise ok" and noise.completed


async def test_a_withdrawn_permission_request_is_answered_cancelled(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        result = await backend.chat([user("withdraw")], agent=QUIRKY, tools=[AGENT_ACTION_TOOL_DEF])
    # The agent withdrew its question before we surfaced it or after: either way it gets -32800
    # and the user is not left with a question nobody waits for.
    assert "withdrawn: -32800" in result.text() or result.tool_calls()


async def test_an_agent_that_ignores_cancel_is_retired_and_the_next_request_starts_clean() -> None:
    async with BackendClient.spawn(["vscodelm", "--cancel-timeout", "0.5"]) as backend:
        with trio.fail_after(GUARD):
            pending = backend.start_chat([user("stubborn")], agent=QUIRKY)
            await pending.first_part.wait()
            await backend.cancel(pending.request_id)
            await pending.done.wait()
            assert pending.error is not None and pending.error.code == -32800
            after = await backend.chat([user("stubborn"), pending.assistant_message(), user("hello again")], agent=QUIRKY)
    assert after.error is None
    # A fresh session, primed with the conversation so far, answered.
    assert after.text().startswith("echo: Earlier in this conversation:\n\nUser: stubborn\n\nAssistant: working")
    assert after.text().endswith("hello again")


async def test_an_agent_exiting_at_start_fails_with_its_stderr(backend: BackendClient) -> None:
    dying = process_agent("dying", "sh", ["-c", "echo 'fatal: no API key configured' >&2; exit 3"])
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hello")], agent=dying)
    assert result.error is not None and result.error.code == -32000
    assert "(sh -c echo 'fatal: no API key configured' >&2; exit 3) exited during start-up (exit code 3)" in result.error.message
    assert result.error.data["stderr"] == ["fatal: no API key configured"]


async def test_an_agent_refusing_initialize_fails_readably(backend: BackendClient) -> None:
    refusing = process_agent("refusing", sys.executable, [str(Path(__file__).parents[1] / "support" / "quirky_agent.py"), "--refuse-init"])
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hello")], agent=refusing)
    assert result.error is not None and result.error.code == -32000
    assert result.error.message.startswith("Agent 'refusing' (")
    assert "quirky_agent.py --refuse-init) refused initialize: Authentication required" in result.error.message
