"""Claude Code end to end, offline: the real adapter and CLI through `symposium vscodelm`, its model a fake.

The agent is `@agentclientprotocol/claude-agent-acp` (pinned in scripts/install-agents.sh, which `make
test` runs), behind `tests/support/acp_tee.py` so the test reads its ACP traffic, with an isolated HOME. Its
model is `tests/support/fake_anthropic.py`, scripted per test: each main-conversation model request takes the
next scripted reply; Claude Code's own side calls (session title, next-prompt suggestion) do not.
The tests skip, saying why, only when the adapter cannot be installed from npm.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import trio

from protocol.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, ChatResult, tool_result, user
from tests.support.claude import ClaudeCode, installed_claude, process_gone, process_group, processes_in_group
from tests.support.fake_anthropic import SUGGESTION_PREFIX, FakeAnthropic, reply, text, thinking, tool_use

GUARD = 60  # a hang guard, not a timing budget: the tests wait on events


@pytest.fixture
async def claude(nursery: trio.Nursery, tmp_path: Path) -> ClaudeCode:
    found = await trio.to_thread.run_sync(installed_claude)
    if isinstance(found, str):
        pytest.skip(found)
    api = FakeAnthropic()
    await nursery.start(api.serve)
    return ClaudeCode(api, tmp_path)


def assert_well_formed(result: ChatResult) -> None:
    assert result.error is None, result.error and (result.error.message, result.error.data)
    assert result.completed
    assert any(p["type"] in ("text", "tool_call") for p in result.parts)


async def test_plain_turn_streams_text(backend: BackendClient, claude: ClaudeCode) -> None:
    # Paced: the fake sends each delta once the previous one has come out as a part, so the
    # parts show the text streamed through (the backend merges parts that queue up together).
    claude.api.script(reply(text("Hello ", "from ", "the fake ", "model."), paced=True))
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hello")], agent=claude.agent, cwd=str(claude.cwd), on_part=lambda _: claude.api.advance())
    assert_well_formed(result)
    assert result.text() == "Hello from the fake model."
    assert [p["value"] for p in result.parts if p["type"] == "text"] == ["Hello ", "from ", "the fake ", "model."]
    [request] = claude.api.main
    assert request.user_texts() == ["Hello"]
    assert not claude.api.unscripted


async def test_second_turn_continues_the_same_session(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(reply(text("The answer ", "is 42.")), reply(text("You asked ", "about 42.")))
    history = [user("What is the answer?")]
    with trio.fail_after(GUARD):
        first = await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd))
        history += [first.assistant_message(), user("What did I ask?")]
        second = await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd))
    assert_well_formed(second)
    assert second.text() == "You asked about 42."
    assert claude.prompts() == ["What is the answer?", "What did I ask?"]  # only what was new
    assert len(claude.requests("session/new")) == 1 and len(claude.agent_pids()) == 1
    later = claude.api.main[1]
    assert later.user_texts() == ["What is the answer?", "What did I ask?"]
    assert later.assistant_texts() == ["The answer is 42."]
    assert [m["role"] for m in later.messages if m["role"] != "system"][-3:] == ["user", "assistant", "user"]
    assert not claude.api.unscripted


async def test_thinking_arrives_as_thinking_parts(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(reply(thinking("The user greets me. ", "I should greet back."), text("Hi ", "there.")))
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hi")], agent=claude.agent, cwd=str(claude.cwd))
    assert_well_formed(result)
    assert result.thinking() == "The user greets me. I should greet back."
    assert result.text() == "Hi there."
    assert result.parts[0]["type"] == "thinking"


def write_file(path: Path) -> dict:
    return {"command": f"echo hi > {path}", "description": f"Write {path.name}"}


async def test_bash_write_asks_permission_and_approval_runs_it(backend: BackendClient, claude: ClaudeCode) -> None:
    out = claude.cwd / "out.txt"
    ask_reply = reply(text("I will write it."), tool_use("Bash", write_file(out)))
    claude.api.script(ask_reply, reply(text("Done: ", "the file is written.")))
    history = [user("Write hi to out.txt")]
    tools = [AGENT_ACTION_TOOL_DEF]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
        assert_well_formed(ask)
        [call] = ask.tool_calls()
        assert call["toolName"] == "symposium-agent-action"
        assert call["parameters"]["kind"] == "execute"
        assert call["parameters"]["raw_input"]["command"] == f"echo hi > {out}"
        assert not out.exists()
        history += [ask.assistant_message(), tool_result(call["toolCallId"], AGENT_ACTION_APPROVED)]
        done = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    assert_well_formed(done)
    assert "Done: the file is written." in done.text()
    assert out.read_text() == "hi\n"
    assert len(claude.requests("session/prompt")) == 1  # the same agent turn went on
    [asked] = claude.requests("session/request_permission")
    [answer] = [m for m in claude.messages("c2a") if m.get("id") == asked["id"] and "result" in m]
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow-once"}
    # The model got the tool's result in the request after the one that asked for the tool.
    [tool_id] = ask_reply.tool_use_ids()
    after = claude.api.main[1]
    assert [u["id"] for u in after.tool_uses()] == [tool_id]
    assert [r["tool_use_id"] for r in after.tool_results()] == [tool_id]
    assert not claude.api.unscripted


async def reject_a_bash_write(backend: BackendClient, claude: ClaudeCode) -> tuple[ChatResult, Path]:
    """Claude Code asks to write a file; VS Code's rejection: the next request drops the tool call."""
    out = claude.cwd / "out.txt"
    # `answers`: Claude Code may make one more model request before the cancel lands (see the
    # ordering test below); that one must not take the reply meant for the new message.
    claude.api.script(reply(tool_use("Bash", write_file(out))), reply(text("Hello ", "instead."), answers="No, just say hello"))
    tools = [AGENT_ACTION_TOOL_DEF]
    ask = await backend.chat([user("Write hi to out.txt")], agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    assert ask.tool_calls()
    after = await backend.chat([user("Write hi to out.txt"), user("No, just say hello")], agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    return after, out


async def test_bash_write_rejected_creates_nothing_and_the_new_message_is_answered(backend: BackendClient, claude: ClaudeCode) -> None:
    with trio.fail_after(GUARD):
        after, out = await reject_a_bash_write(backend, claude)
    assert_well_formed(after)
    assert after.text() == "Hello instead."
    assert not out.exists()
    assert claude.prompts() == ["Write hi to out.txt", "No, just say hello"]
    assert len(claude.requests("session/cancel")) == 1
    [asked] = claude.requests("session/request_permission")
    [answer] = [m for m in claude.messages("c2a") if m.get("id") == asked["id"] and "method" not in m]
    # `cancelled`, or -32800 if Claude Code withdrew the request first ($/cancel_request after session/cancel)
    assert answer.get("result", {}).get("outcome") == {"outcome": "cancelled"} or answer["error"]["code"] == -32800
    # Claude Code tells the model the tool was aborted, then gives it the new message.
    last = claude.api.main[-1]
    assert [r["is_error"] for r in last.tool_results()] == [True]
    assert last.user_texts()[-1] == "No, just say hello"


async def test_a_rejected_permission_is_cancelled_before_it_is_answered(backend: BackendClient, claude: ClaudeCode) -> None:
    with trio.fail_after(GUARD):
        await reject_a_bash_write(backend, claude)
    sent = claude.messages("c2a")
    [asked] = claude.requests("session/request_permission")
    answered_at = next(i for i, m in enumerate(sent) if m.get("id") == asked["id"] and "method" not in m)
    cancelled_at = next(i for i, m in enumerate(sent) if m.get("method") == "session/cancel")
    assert cancelled_at < answered_at


async def test_cancel_mid_stream_answers_cancelled_and_the_next_turn_is_clean(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(reply(text("one ", "two ", "three ", "four"), stall_after=1), reply(text("Fresh ", "answer.")))
    history = [user("Count to four")]
    with trio.fail_after(GUARD):
        pending = backend.start_chat(history, agent=claude.agent, cwd=str(claude.cwd))
        await pending.first_part.wait()
        await backend.cancel(pending.request_id)
        await pending.done.wait()
        assert pending.error is not None and pending.error.code == -32800
        assert not pending.completed
        stream = await claude.api.wait_for(lambda r: r.main and (r.aborted or r.finished))
        assert stream.aborted  # Claude Code hung up on the model
        history += [pending.assistant_message(), user("Say something else")]
        after = await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd))
    assert_well_formed(after)
    assert after.text() == "Fresh answer."
    assert claude.prompts() == ["Count to four", "Say something else"]
    assert len(claude.requests("session/cancel")) == 1
    assert len(claude.requests("session/new")) == 1
    assert [m for m in claude.messages("a2c") if (m.get("result") or {}).get("stopReason") == "cancelled"]
    # The model sees the interrupted partial answer, then the new message.
    assert claude.api.main[-1].assistant_texts() == ["one "]
    assert claude.api.main[-1].user_texts()[-1] == "Say something else"
    assert not claude.api.unscripted


async def kill_agent_mid_turn(backend: BackendClient, claude: ClaudeCode, history: list) -> tuple[ChatResult, int]:
    """Start a turn whose model stream stalls, SIGKILL Claude Code's adapter (node) once text shows.

    Returns the failed request and the agent's process group (the backend gives each agent one)."""
    pending = backend.start_chat(history, agent=claude.agent, cwd=str(claude.cwd))
    await pending.first_part.wait()
    [tee_pid] = claude.pids()
    [agent_pid] = claude.agent_pids()
    group = process_group(tee_pid)
    assert group != os.getpgrp() and agent_pid in processes_in_group(group)
    os.kill(agent_pid, signal.SIGKILL)
    await pending.done.wait()
    return pending, group


def kill_leftovers(group: int) -> None:
    """SIGKILL what is left of a process group this test started (Claude Code's CLI, see below)."""
    for pid in processes_in_group(group):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def test_agent_killed_mid_turn_fails_the_request_and_the_next_one_works(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(reply(text("one ", "two ", "three"), stall_after=1), reply(text("Back ", "again.")))
    history = [user("Count to three")]
    group = None
    try:
        with trio.fail_after(GUARD):
            pending, group = await kill_agent_mid_turn(backend, claude, history)
            assert pending.error is not None and pending.error.code == -32000
            assert pending.error.data["kind"] == "agent_exited"
            history += [pending.assistant_message(), user("Are you there?")]
            after = await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd))
    finally:
        if group is not None:
            kill_leftovers(group)
    assert_well_formed(after)
    assert after.text() == "Back again."
    assert len(claude.agent_pids()) == 2  # a fresh agent, a fresh session
    # The fresh session gets the conversation so far as context, then the new message.
    assert claude.prompts()[-1].endswith("Are you there?") and "Count to three" in claude.prompts()[-1]
    assert not claude.api.unscripted


ORPHAN_GUARD = 5  # how long the killed agent's other processes may take to go, once the backend knows


async def test_a_killed_agent_leaves_no_process_behind(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(reply(text("one ", "two ", "three"), stall_after=1))
    group = None
    try:
        with trio.fail_after(GUARD):
            pending, group = await kill_agent_mid_turn(backend, claude, [user("Count to three")])
        assert pending.error is not None and pending.error.data["kind"] == "agent_exited"
        with trio.move_on_after(ORPHAN_GUARD):
            for pid in processes_in_group(group):
                await process_gone(pid)
        assert processes_in_group(group) == []
    finally:
        if group is not None:
            kill_leftovers(group)


WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


async def test_a_vscode_tool_reaches_claude_code_as_an_mcp_tool(backend: BackendClient, claude: ClaudeCode) -> None:
    ask_reply = reply(text("Let me check."), tool_use("mcp__vscode_tools__get_weather", {"city": "Paris"}))
    claude.api.script(ask_reply, reply(text("It is ", "sunny.")))
    tools = [AGENT_ACTION_TOOL_DEF, WEATHER]
    history = [user("Weather in Paris?")]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
        assert_well_formed(ask)
        [call] = ask.tool_calls()  # VS Code runs its own tool; no agent-action confirmation on top
        assert call["toolName"] == "get_weather" and call["parameters"] == {"city": "Paris"}
        history += [ask.assistant_message(), tool_result(call["toolCallId"], "Sunny, 25 C")]
        done = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    assert_well_formed(done)
    assert "It is sunny." in done.text()
    assert "get_weather" not in done.text() and "Sunny, 25 C" not in done.text()  # VS Code showed its own tool's call: once
    # Claude Code asked permission for the MCP tool by its qualified name; the backend approved it itself.
    [asked] = claude.requests("session/request_permission")
    assert asked["params"]["toolCall"]["title"] == "mcp__vscode_tools__get_weather"
    [result] = claude.api.main[1].tool_results()
    assert result["tool_use_id"] == ask_reply.tool_use_ids()[0]
    assert result["content"] == [{"type": "text", "text": "Sunny, 25 C"}]
    assert not claude.api.unscripted


async def test_no_next_prompt_suggestion_is_asked_of_the_model(backend: BackendClient, claude: ClaudeCode) -> None:
    # Claude Code predicts the next prompt after each turn (from the second on) with a model call
    # of its own, which VS Code has nowhere to show: the backend turns it off at session/new.
    # When it is on, the call for turn 2 reaches the model before turn 3 does (it is started as
    # turn 2 ends, while the next request is still on its way).
    claude.api.script(*(reply(text(f"Answer {n}.")) for n in range(3)))
    history = [user("Question 0?")]
    with trio.fail_after(GUARD):
        for n in range(3):
            answer = await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd))
            assert_well_formed(answer)
            history += [answer.assistant_message(), user(f"Question {n + 1}?")]
    assert len(claude.api.main) == 3
    asked = [r for r in claude.api.requests if SUGGESTION_PREFIX in json.dumps(r.body)]
    assert asked == []


async def test_a_response_carries_the_usage_claude_code_reported(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(reply(text("Hi."), usage=(1200, 34)))
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hi")], agent=claude.agent, cwd=str(claude.cwd))
    assert_well_formed(result)
    updates = [m["params"]["update"] for m in claude.messages("a2c") if (m.get("params") or {}).get("update", {}).get("sessionUpdate") == "usage_update"]
    [answer] = [m for m in claude.messages("a2c") if "stopReason" in (m.get("result") or {})]
    # Its context (the last `usage_update`) is the prompt tokens; the prompt's output its completion.
    context, output = updates[-1]["used"], answer["result"]["usage"]["outputTokens"]
    [usage] = [p for p in result.parts if p["type"] == "usage"]
    assert usage == {"type": "usage", "promptTokens": context, "completionTokens": output, "totalTokens": context + output, "cachedTokens": 0}
    assert (context, output) == (1200 + 34, 34)  # what the fake API reported, as Claude Code passed it on


async def test_its_own_edit_is_a_card_with_the_diff_then_the_diff_in_the_chat(backend: BackendClient, claude: ClaudeCode) -> None:
    app = claude.cwd / "app.py"
    app.write_text("a = 1\nb = 2\nc = 3\n")
    claude.api.script(
        reply(text("Reading."), tool_use("Read", {"file_path": str(app)})),
        reply(text("Editing."), tool_use("Edit", {"file_path": str(app), "old_string": "b = 2", "new_string": "b = 20"})),
        reply(text("Done.")),
    )
    tools = [AGENT_ACTION_TOOL_DEF]
    history = [user("Set b to 20 in app.py")]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
        assert_well_formed(ask)
        [call] = ask.tool_calls()
        assert call["parameters"]["kind"] == "edit"
        assert call["parameters"]["diff"] == f"--- {app}\n+++ {app}\n@@ -1 +1 @@\n-b = 2\n+b = 20"  # the card shows this, not JSON
        assert app.read_text() == "a = 1\nb = 2\nc = 3\n"
        history += [ask.assistant_message(), tool_result(call["toolCallId"], AGENT_ACTION_APPROVED)]
        done = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    assert_well_formed(done)
    assert app.read_text() == "a = 1\nb = 20\nc = 3\n"
    # The diff Claude Code sent with context once the edit was made, where it used to say only "✓ Edit app.py".
    assert f"✓ Edit app.py\n```diff\n--- {app}\n+++ {app}\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n```\n" in done.text()
    [edit] = [p for p in done.parts if p["type"] == "edit"]
    assert (edit["path"], edit["oldText"], edit["newText"]) == (str(app), "a = 1\nb = 2\nc = 3", "a = 1\nb = 20\nc = 3")
    assert done.text().endswith("Done.")
