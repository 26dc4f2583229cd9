"""What only Claude Code does, end to end, offline: the real adapter and CLI through `symposium vscodelm`,
its model a fake. What it does as Codex does is in `test_scenarios.py`, run against both.

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

import trio

from protocol.vscode.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, ChatResult, tool_result, user
from tests.support.claude import ClaudeCode
from tests.support.fake_anthropic import SUGGESTION_PREFIX, reply, text, tool_use
from tests.support.proc import process_gone, process_group, processes_in_group
from tests.support.real_agent import GUARD, assert_well_formed


def write_file(path: Path) -> dict:
    return {"command": f"echo hi > {path}", "description": f"Write {path.name}"}


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
