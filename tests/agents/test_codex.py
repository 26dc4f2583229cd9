"""What only Codex does, end to end, offline: the real ACP adapter through `symposium vscodelm`, its
model a fake. What it does as Claude Code does is in `test_scenarios.py`, run against both.

The agent is the catalogue's Codex adapter, `@agentclientprotocol/codex-acp` at the catalogue's version
(extension/catalogue/registry.json; installed by `make agents` with the extension's own installer, as Add
Agent installs it: tests/support/codex.py), behind `tests/support/acp_tee.py` so the test reads its ACP
traffic, with a HOME and CODEX_HOME of its own. Its model is `tests/support/fake_openai.py`, a Responses API
server Codex's configuration names as its model provider, scripted per test. The tests skip, saying why,
only when the adapter cannot be installed from npm.

What it asks, read in its code and recorded from its ACP traffic (the tests assert these shapes):

- before a command its model wants run outside its sandbox (`sandbox_permissions: "require_escalated"`), in
  every mode but full access: a `session/request_permission` whose `toolCall.kind` is "execute",
  `rawInput.command` the command line, with options allow_once, allow_always, accept_execpolicy_amendment
  (allow_always) and reject_once, which is Codex's "decline": its model hears the command was rejected
  and the turn goes on;
- before a call to a tool of an MCP server, of a client that declares ACP form elicitation (as the backend
  does): an `elicitation/create` in form mode, `_meta.codex_approval_kind` "mcp_tool_call", the tool named
  only in its message ('Allow the vscode_tools MCP server to run tool "get_weather"?'), its one field
  `persist` ("once", "session" or "always"); for a call of VS Code's tools the backend accepts it once
  (tests/agents/test_scenarios.py);
- a patch (`apply_patch`) in the workspace, in its default mode: nothing; it shows the edit as a tool call
  titled "Editing files" whose content is the diff.
"""

from __future__ import annotations

from pathlib import Path

import trio

from protocol.turn.rules import REFUSED_NOTE
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, tool_result, user
from tests.support.codex import Codex
from tests.support.copilot import SKIPPED
from tests.support.fake_openai import custom_tool_call, function_call, output_text, reply, text
from tests.support.real_agent import GUARD, answer_to, assert_well_formed


def write_file(path: Path) -> dict:
    return {"cmd": f"echo hi > {path}"}


async def test_a_skipped_shell_command_selects_codexs_reject_and_codex_goes_on(backend: BackendClient, cautious_codex: Codex) -> None:
    codex = cautious_codex
    out = codex.cwd / "out.txt"
    codex.api.script(reply(text("I will write it."), codex.shell(f"echo hi > {out}")),
                     reply(text("Then I will ", "not write it.")))
    tools = [AGENT_ACTION_TOOL_DEF]
    history = [user("Write hi to out.txt")]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=codex.agent, tools=tools, cwd=str(codex.cwd))
        [call] = ask.tool_calls()
        assert call["parameters"]["kind"] == "execute" and call["parameters"]["raw_input"]["command"] == f"echo hi > {out}"
        history += [ask.assistant_message(), tool_result(call["toolCallId"], SKIPPED)]
        skipped = await backend.chat(history, agent=codex.agent, tools=tools, cwd=str(codex.cwd))
    assert_well_formed(skipped)
    assert skipped.tool_calls() == []
    # Codex's "no" is a decline: the command is shown as not run, and its model, told so, goes on in the
    # same turn; the chat shows what it says next, not that the agent stopped.
    assert skipped.text().startswith(f"\n\n✗ echo hi > {out}\n") and skipped.text().endswith("\nThen I will not write it.")
    assert REFUSED_NOTE not in skipped.text()
    [permission] = codex.requests("session/request_permission")
    assert [o["optionId"] for o in permission["params"]["options"] if o["kind"] == "reject_once"] == ["reject_once"]
    assert answer_to(codex, permission)["result"]["outcome"] == {"outcome": "selected", "optionId": "reject_once"}
    assert not out.exists()
    assert len(codex.requests("session/new")) == 1 and len(codex.prompts()) == 1  # one turn of one session
    [call_id] = codex.api.main[0].reply.call_ids()
    [output] = [o for o in codex.api.main[-1].function_outputs() if o["call_id"] == call_id]
    assert "rejected by user" in output_text(output["output"]), output
    assert not codex.api.unscripted


PATCH = """*** Begin Patch
*** Update File: app.py
@@
 a = 1
-b = 2
+b = 20
 c = 3
*** End Patch
"""


async def test_an_edit_on_disk_shows_its_diff_in_the_response(backend: BackendClient, codex: Codex) -> None:
    # Codex writes files itself (its freeform `apply_patch` tool): the chat shows what changed.
    app = codex.cwd / "app.py"
    app.write_text("a = 1\nb = 2\nc = 3\n")
    codex.api.script(reply(text("Editing."), custom_tool_call("apply_patch", PATCH)), reply(text("Done.")))
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Set b to 20 in app.py")], agent=codex.agent, tools=[AGENT_ACTION_TOOL_DEF], cwd=str(codex.cwd))
    assert_well_formed(result)
    assert app.read_text() == "a = 1\nb = 20\nc = 3\n"
    # The adapter titles every patch "Editing files"; the diff names the file.
    assert f"✓ Editing files\n```diff\n--- {app}\n+++ {app}\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n```\n" in result.text()
    assert result.text().endswith("Done.")
    # The whole file before and after, for the extension's review and revert of the conversation's edits.
    [edit] = [p for p in result.parts if p["type"] == "edit"]
    assert edit == {"type": "edit", "path": str(app), "oldText": "a = 1\nb = 2\nc = 3\n", "newText": "a = 1\nb = 20\nc = 3\n", "conversation": edit["conversation"]}
    assert edit["conversation"] and edit["conversation"] in result.parts[-1]["value"]  # the one its marker names
    assert codex.api.other == []  # Codex asked its provider for nothing but model responses
    assert not codex.api.unscripted




TODO_TOOL_DEF = {"name": "manage_todo_list", "description": "Copilot's todo widget", "inputSchema": {"type": "object", "properties": {"todoList": {"type": "array"}}}}


async def test_codexs_plan_goes_to_copilots_todo_widget_and_costs_its_turn_nothing(backend: BackendClient, codex: Codex) -> None:
    steps = [{"step": "Read the code", "status": "completed"}, {"step": "Fix the bug", "status": "in_progress"}, {"step": "Run the tests", "status": "pending"}]
    codex.api.script(reply(function_call("update_plan", {"plan": steps}), answers="Fix it"), reply(text("Fixed."), answers="Fix it"))
    tools = [TODO_TOOL_DEF]
    history = [user("Fix it")]
    with trio.fail_after(GUARD):
        first = await codex.chat(backend, history, tools=tools)
        [call] = first.tool_calls()
        assert call["toolName"] == "manage_todo_list"
        assert call["parameters"] == {"todoList": [
            {"id": 1, "title": "Read the code", "status": "completed"},
            {"id": 2, "title": "Fix the bug", "status": "in-progress"},
            {"id": 3, "title": "Run the tests", "status": "not-started"},
        ]}
        history += [first.assistant_message(), tool_result(call["toolCallId"], "Successfully wrote todo list")]
        second = await codex.chat(backend, history, tools=tools)
    assert_well_formed(second)
    assert second.text() == "Fixed."
    assert "Plan" not in first.text() + second.text(), "the plan is in the widget, not also as text"
    assert codex.prompts() == ["Fix it"], "the widget's round never reached the agent"
    assert "Successfully wrote todo list" not in str(codex.api.main[-1].body)


async def test_codex_is_given_the_workspaces_second_folder(backend: BackendClient, codex: Codex, tmp_path: Path) -> None:
    """docs/usage.md, "Workspace folders": the catalogue's codex-acp declares `additionalDirectories`, so a
    two-folder workspace's second folder goes in its `session/new`, and no prompt needs to name it."""
    second = tmp_path / "lib"
    second.mkdir()
    codex.api.script(reply(text("Noted.")), reply(text("Still.")))
    folders = [str(codex.cwd), str(second)]
    with trio.fail_after(GUARD):
        first = await backend.chat([user("Which folders?")], agent=codex.agent, cwd=str(codex.cwd), folders=folders)
        await backend.chat([user("Which folders?"), {"role": "assistant", "content": [{"type": "text", "value": first.text()}]}, user("Again?")], agent=codex.agent, cwd=str(codex.cwd), folders=folders)
    [opened] = codex.requests("session/new")
    assert opened["params"]["cwd"] == str(codex.cwd) and opened["params"]["additionalDirectories"] == [str(second)]
    prompts = [m["params"]["prompt"] for m in codex.requests("session/prompt")]
    assert all(str(second) not in block.get("text", "") for prompt in prompts for block in prompt)
    assert [b["text"] for b in prompts[1]] == ["Again?"]
