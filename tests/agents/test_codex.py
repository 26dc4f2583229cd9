"""Codex end to end, offline: the real ACP adapter through `symposium vscodelm`, its model a fake.

The agent is `@zed-industries/codex-acp` (pinned in scripts/install-agents.sh, which `make test`
runs), behind `tests/support/acp_tee.py` so the test reads its ACP traffic, with a HOME and CODEX_HOME of
its own. Its model is `tests/support/fake_openai.py`, a Responses API server Codex's configuration names
as its model provider, scripted per test. The tests skip, saying why, only when the adapter
cannot be installed from npm.

What Codex 0.16 asks, recorded from its ACP traffic (the tests below assert these shapes):

- before a call to a tool of an MCP server, even with its default approval policy:
  `toolCall.title` "Approve MCP tool call", `toolCall.rawInput.server_name` the server's name,
  `rawInput.request._meta.codex_approval_kind` "mcp_tool_call", the tool named only in
  `rawInput.request.message` ('Allow the vscode_tools MCP server to run tool "get_weather"?');
  options approved (allow_once), approved-for-session and approved-always (allow_always),
  cancel (reject_once);
- before a command it does not know to be harmless, with `approval_policy = "untrusted"`:
  `toolCall.kind` "execute", the command line as title, `rawInput.command` the argv; options
  approved (allow_once), approved-execpolicy-amendment (allow_always) and abort (reject_once),
  Codex's only "no", which ends its turn (stop reason `cancelled`): the model hears of it,
  as "aborted by user", with the user's next message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from actors.rendering import REFUSED_NOTE
from protocol.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, ChatResult, tool_result, user
from tests.support.codex import Codex, installed_codex
from tests.support.copilot import SKIPPED
from tests.support.fake_openai import FakeOpenAI, custom_tool_call, function_call, output_text, reasoning, reply, text

GUARD = 60  # a hang guard, not a timing budget: the tests wait on events
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@pytest.fixture
async def codex_api(nursery: trio.Nursery) -> FakeOpenAI:
    found = await trio.to_thread.run_sync(installed_codex)
    if isinstance(found, str):
        pytest.skip(found)
    api = FakeOpenAI()
    await nursery.start(api.serve)
    return api


@pytest.fixture
def codex(codex_api: FakeOpenAI, tmp_path: Path) -> Codex:
    return Codex(codex_api, tmp_path)


@pytest.fixture
def cautious_codex(codex_api: FakeOpenAI, tmp_path: Path) -> Codex:
    """Codex asking before any command it does not know to be harmless."""
    return Codex(codex_api, tmp_path, approval_policy="untrusted")


def assert_well_formed(result: ChatResult) -> None:
    assert result.error is None, result.error and (result.error.message, result.error.data)
    assert result.completed
    assert any(p["type"] in ("text", "tool_call") for p in result.parts)


def answer_to(agent: Codex, request: dict) -> dict:
    """What the backend answered to one of the agent's requests."""
    [answer] = [m for m in agent.messages("c2a") if m.get("id") == request["id"] and "method" not in m]
    return answer


async def test_plain_turn_streams_text(backend: BackendClient, codex: Codex) -> None:
    # Paced: the fake sends each delta once the previous one has come out as a part.
    codex.api.script(reply(text("Hello ", "from ", "the fake ", "model."), paced=True))
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hello")], agent=codex.agent, cwd=str(codex.cwd), on_part=lambda _: codex.api.advance())
    assert_well_formed(result)
    assert result.text() == "Hello from the fake model."
    assert [p["value"] for p in result.parts if p["type"] == "text"] == ["Hello ", "from ", "the fake ", "model."]
    [request] = codex.api.main
    assert request.user_texts() == ["Hello"]
    assert request.headers.get("authorization") == "Bearer sk-fake-codex-key"  # the key from the provider's env_key
    assert codex.api.other == []  # Codex asked the provider for nothing but model responses
    assert not codex.api.unscripted


async def test_second_turn_continues_the_same_session(backend: BackendClient, codex: Codex) -> None:
    codex.api.script(reply(text("The answer ", "is 42.")), reply(text("You asked ", "about 42.")))
    history = [user("What is the answer?")]
    with trio.fail_after(GUARD):
        first = await backend.chat(history, agent=codex.agent, cwd=str(codex.cwd))
        history += [first.assistant_message(), user("What did I ask?")]
        second = await backend.chat(history, agent=codex.agent, cwd=str(codex.cwd))
    assert_well_formed(second)
    assert second.text() == "You asked about 42."
    assert codex.prompts() == ["What is the answer?", "What did I ask?"]  # only what was new
    assert len(codex.requests("session/new")) == 1 and len(codex.agent_pids()) == 1
    later = codex.api.main[1]
    assert later.user_texts() == ["What is the answer?", "What did I ask?"]
    assert later.assistant_texts() == ["The answer is 42."]
    assert not codex.api.unscripted


async def test_reasoning_arrives_as_thinking_parts(backend: BackendClient, codex: Codex) -> None:
    codex.api.script(reply(reasoning("The user greets me. ", "I should greet back."), text("Hi ", "there.")))
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hi")], agent=codex.agent, cwd=str(codex.cwd))
    assert_well_formed(result)
    assert result.thinking().strip() == "The user greets me. I should greet back."
    assert result.text() == "Hi there."
    assert result.parts[0]["type"] == "thinking"


async def test_cancel_mid_stream_and_the_next_turn_is_clean(backend: BackendClient, codex: Codex) -> None:
    codex.api.script(reply(text("one ", "two ", "three ", "four"), stall_after=1), reply(text("Fresh ", "answer."), answers="Say something else"))
    history = [user("Count to four")]
    with trio.fail_after(GUARD):
        pending = backend.start_chat(history, agent=codex.agent, cwd=str(codex.cwd))
        await pending.first_part.wait()
        await backend.cancel(pending.request_id)
        await pending.done.wait()
        assert pending.error is not None and pending.error.code == -32800
        # (Codex ends its turn at once, but leaves the stalled model stream open: not waited for.)
        history += [pending.assistant_message(), user("Say something else")]
        after = await backend.chat(history, agent=codex.agent, cwd=str(codex.cwd))
    assert_well_formed(after)
    assert after.text() == "Fresh answer."
    assert codex.prompts() == ["Count to four", "Say something else"]
    assert len(codex.requests("session/cancel")) == 1 and len(codex.requests("session/new")) == 1
    assert [m for m in codex.messages("a2c") if (m.get("result") or {}).get("stopReason") == "cancelled"]
    assert codex.api.main[-1].user_texts()[-1] == "Say something else"
    assert not codex.api.unscripted


async def test_a_bridged_vscode_tool_runs_with_a_single_confirmation(backend: BackendClient, codex: Codex) -> None:
    # Codex offers each MCP server's tools to the model in a namespace `mcp__<server>`.
    ask = function_call("get_weather", {"city": "Paris"}, namespace="mcp__vscode_tools")
    codex.api.script(reply(text("Let me check."), ask), reply(text("It is ", "sunny.")))
    tools = [AGENT_ACTION_TOOL_DEF, WEATHER]
    history = [user("Weather in Paris?")]
    with trio.fail_after(GUARD):
        asked = await backend.chat(history, agent=codex.agent, tools=tools, cwd=str(codex.cwd))
        assert_well_formed(asked)
        [call] = asked.tool_calls()  # VS Code confirms and runs its own tool: no agent action on top
        assert call["toolName"] == "get_weather" and call["parameters"] == {"city": "Paris"}
        history += [asked.assistant_message(), tool_result(call["toolCallId"], "Sunny, 25 C")]
        done = await backend.chat(history, agent=codex.agent, tools=tools, cwd=str(codex.cwd))
    assert_well_formed(done)
    assert done.tool_calls() == []
    assert "It is sunny." in done.text()
    assert "get_weather" not in done.text() and "Sunny, 25 C" not in done.text()  # VS Code showed its own tool's call: once
    # Codex asked before calling the MCP tool; the backend approved it itself, once.
    [permission] = codex.requests("session/request_permission")
    tool_call = permission["params"]["toolCall"]
    assert tool_call["title"] == "Approve MCP tool call"
    assert tool_call["rawInput"]["server_name"] == "vscode_tools"
    assert tool_call["rawInput"]["request"]["_meta"]["codex_approval_kind"] == "mcp_tool_call"
    assert tool_call["rawInput"]["request"]["message"] == 'Allow the vscode_tools MCP server to run tool "get_weather"?'
    assert answer_to(codex, permission)["result"]["outcome"] == {"outcome": "selected", "optionId": "approved"}
    # The model got the tool's output in Codex's next request, under the call's id.
    [call_id] = codex.api.main[0].reply.call_ids()
    [output] = codex.api.main[1].function_outputs()
    assert output["call_id"] == call_id and "Sunny, 25 C" in output_text(output["output"])
    assert not codex.api.unscripted


def write_file(path: Path) -> dict:
    return {"cmd": f"echo hi > {path}"}


async def test_a_shell_command_is_one_confirmation_and_the_approval_runs_it(backend: BackendClient, cautious_codex: Codex) -> None:
    codex = cautious_codex
    out = codex.cwd / "out.txt"
    codex.api.script(reply(text("I will write it."), function_call("exec_command", write_file(out))), reply(text("Done: ", "the file is written.")))
    tools = [AGENT_ACTION_TOOL_DEF]
    history = [user("Write hi to out.txt")]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=codex.agent, tools=tools, cwd=str(codex.cwd))
        assert_well_formed(ask)
        [call] = ask.tool_calls()
        assert call["toolName"] == "symposium-agent-action"
        assert call["parameters"]["kind"] == "execute"
        assert call["parameters"]["raw_input"]["command"][-1] == f"echo hi > {out}"
        assert not out.exists()
        history += [ask.assistant_message(), tool_result(call["toolCallId"], AGENT_ACTION_APPROVED)]
        done = await backend.chat(history, agent=codex.agent, tools=tools, cwd=str(codex.cwd))
    assert_well_formed(done)
    assert done.tool_calls() == []
    assert "Done: the file is written." in done.text()
    assert out.read_text() == "hi\n"
    assert len(codex.requests("session/prompt")) == 1  # the same agent turn went on
    [permission] = codex.requests("session/request_permission")
    assert permission["params"]["toolCall"]["kind"] == "execute"
    assert answer_to(codex, permission)["result"]["outcome"] == {"outcome": "selected", "optionId": "approved"}
    [call_id] = codex.api.main[0].reply.call_ids()
    [output] = codex.api.main[1].function_outputs()
    assert output["call_id"] == call_id and "exited with code 0" in output_text(output["output"])
    assert not codex.api.unscripted


async def test_a_skipped_shell_command_selects_codexs_no_and_the_conversation_goes_on(backend: BackendClient, cautious_codex: Codex) -> None:
    codex = cautious_codex
    out = codex.cwd / "out.txt"
    codex.api.script(reply(text("I will write it."), function_call("exec_command", write_file(out))),
                     reply(text("Hello ", "instead."), answers="Never mind, say hello"))
    tools = [AGENT_ACTION_TOOL_DEF]
    history = [user("Write hi to out.txt")]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=codex.agent, tools=tools, cwd=str(codex.cwd))
        [call] = ask.tool_calls()
        history += [ask.assistant_message(), tool_result(call["toolCallId"], SKIPPED)]
        skipped = await backend.chat(history, agent=codex.agent, tools=tools, cwd=str(codex.cwd))
        assert skipped.error is None and skipped.completed
        assert skipped.tool_calls() == []
        assert skipped.text() == REFUSED_NOTE  # Codex's "no" ends its turn: we say why
        [permission] = codex.requests("session/request_permission")
        # Codex's reject option for a command, chosen by kind: it ends Codex's turn.
        assert answer_to(codex, permission)["result"]["outcome"] == {"outcome": "selected", "optionId": "abort"}
        history += [skipped.assistant_message(), user("Never mind, say hello")]
        after = await backend.chat(history, agent=codex.agent, tools=tools, cwd=str(codex.cwd))
    assert_well_formed(after)
    assert after.text() == "Hello instead."
    assert not out.exists()
    assert len(codex.requests("session/new")) == 1  # the same Codex session throughout
    assert len(codex.api.main) == 2  # no model request between the skip and the new message
    # The model hears that the command was not run, then the new message.
    [call_id] = codex.api.main[0].reply.call_ids()
    last = codex.api.main[-1]
    [output] = [o for o in last.function_outputs() if o["call_id"] == call_id]
    assert "aborted" in output_text(output["output"])
    assert last.user_texts() == ["Write hi to out.txt", "Never mind, say hello"]
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
    assert f"✓ Edit {app}\n```diff\n--- {app}\n+++ {app}\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n```\n" in result.text()
    assert result.text().endswith("Done.")
    # The whole file before and after, for the extension's review and revert of the conversation's edits.
    [edit] = [p for p in result.parts if p["type"] == "edit"]
    assert edit == {"type": "edit", "path": str(app), "oldText": "a = 1\nb = 2\nc = 3\n", "newText": "a = 1\nb = 20\nc = 3\n", "conversation": edit["conversation"]}
    assert edit["conversation"] and edit["conversation"] in result.parts[-1]["value"]  # the one its marker names
    assert not codex.api.unscripted


async def test_a_response_carries_the_context_codex_reported(backend: BackendClient, codex: Codex) -> None:
    codex.api.script(reply(text("Hi."), usage=(1234, 56)))
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hi")], agent=codex.agent, cwd=str(codex.cwd))
    assert_well_formed(result)
    # Codex reports its context (`usage_update`) and no prompt usage: the context is the prompt tokens.
    [reported] = [m["params"]["update"] for m in codex.messages("a2c") if (m.get("params") or {}).get("update", {}).get("sessionUpdate") == "usage_update"][-1:]
    [usage] = [p for p in result.parts if p["type"] == "usage"]
    assert usage == {"type": "usage", "promptTokens": reported["used"], "completionTokens": 0, "totalTokens": reported["used"], "cachedTokens": 0}
    assert reported["used"] == 1234 + 56  # what the fake API said the model call cost
    assert result.parts[-1]["type"] == "marker"  # the usage comes before the end, the marker last
