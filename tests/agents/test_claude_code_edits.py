"""One set of hands: Claude Code, offered Copilot's real Agent-mode tools, edits through
VS Code's edit tools (its own Edit/Write/MultiEdit/NotebookEdit off) and gets the editor-only tools,
never the ones that duplicate its own, never `runSubagent`. Offline, against the fake Anthropic API.
"""

from __future__ import annotations

import json

import trio

from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, user
from tests.actors.test_tool_schema import copilot_tools
from tests.support.claude import ClaudeCode
from tests.support.fake_anthropic import reply, text, tool_use
from tests.support.real_agent import GUARD, assert_well_formed

OWN_EDITS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}


def offered(body: dict) -> str:
    """Everything a model request says about tools: the tools, and the system and message text
    (Claude Code names the MCP tools it defers behind ToolSearch in its messages)."""
    return json.dumps(body)


async def test_claude_code_edits_through_vscodes_edit_tools_and_gets_the_editor_only_tools(backend: BackendClient, claude: ClaudeCode) -> None:
    edit = {"filePath": str(claude.cwd / "app.py"), "oldString": "x = 1", "newString": "x = 2"}
    claude.api.script(reply(text("Editing."), tool_use("mcp__vscode_tools__replace_string_in_file", edit)))
    tools = copilot_tools("agent")
    assert any(t["name"] == AGENT_ACTION_TOOL_DEF["name"] for t in tools)
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Set x to 2 in app.py")], agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    assert_well_formed(result)
    # The edit reaches VS Code as its own tool's call, for Copilot to apply in its editing session.
    [call] = result.tool_calls()
    assert (call["toolName"], call["parameters"]) == ("replace_string_in_file", edit)
    first = claude.api.main[0].body
    own = {t["name"] for t in first["tools"]}
    assert not own & OWN_EDITS, own & OWN_EDITS
    assert {"Read", "Bash"} <= own  # the rest of its own hands stay
    said = offered(first)
    for name in ("get_errors", "vscode_listCodeUsages", "terminal_selection", "replace_string_in_file", "create_file"):
        assert f"mcp__vscode_tools__{name}" in said, name
    for name in ("runSubagent", "read_file", "run_in_terminal", "grep_search"):
        assert f"mcp__vscode_tools__{name}" not in said, name
    new = claude.requests("session/new")[0]["params"]
    assert set(new["_meta"]["claudeCode"]["options"]["disallowedTools"]) == OWN_EDITS


async def test_offered_no_edit_tools_claude_code_keeps_its_own(backend: BackendClient, claude: ClaudeCode) -> None:
    """Ask mode offers no edit tools: nothing is taken from the agent, and it gets the editor-only tools."""
    claude.api.script(reply(text("Looked.")))
    with trio.fail_after(GUARD):
        result = await backend.chat([user("What is in app.py?")], agent=claude.agent, tools=copilot_tools("ask"), cwd=str(claude.cwd))
    assert "Looked." in result.text()
    first = claude.api.main[0].body
    assert {"Edit", "Write"} <= {t["name"] for t in first["tools"]}
    said = offered(first)
    assert "mcp__vscode_tools__get_errors" in said and "mcp__vscode_tools__read_file" not in said
    assert "disallowedTools" not in json.dumps(claude.requests("session/new")[0]["params"])


async def test_a_spare_session_offers_the_first_requests_tools_not_the_last_ones(backend: BackendClient, claude: ClaudeCode) -> None:
    """The spare carries the last conversation's tools; the bridge offers the new ones before the
    prompt goes out (Claude Code lists them once it has the prompt), so its first model request
    offers this request's tools."""
    weather = {"name": "get_weather", "description": "The weather in a city", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    clock = {"name": "get_time", "description": "The time in a city", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    claude.api.script(reply(text("One.")), reply(text("Two.")))
    with trio.fail_after(GUARD):
        await backend.prepare(claude.agent, cwd=str(claude.cwd))
        await backend.chat([user("First chat")], agent=claude.agent, tools=[weather], cwd=str(claude.cwd))
        await backend.prepare(claude.agent, cwd=str(claude.cwd))  # the next spare, made with [weather]
        spares_before = len(claude.requests("session/new"))
        second = await backend.chat([user("Second chat")], agent=claude.agent, tools=[clock], cwd=str(claude.cwd))
    assert "Two." in second.text()
    # The second chat's prompt went to a session made before it was sent: the spare.
    made = [m["result"]["sessionId"] for m in claude.messages() if isinstance(m.get("result"), dict) and "sessionId" in m["result"]]
    prompted = claude.requests("session/prompt")[1]["params"]["sessionId"]
    assert prompted in made[:spares_before]
    said = offered(claude.api.main[1].body)
    assert "mcp__vscode_tools__get_time" in said and "mcp__vscode_tools__get_weather" not in said


async def test_asks_first_request_after_agent_mode_offers_no_edit_tools_and_claude_keeps_its_own(backend: BackendClient, claude: ClaudeCode) -> None:
    """The issue's case: the spare was made for Agent mode (its editing handed to VS Code); Ask
    mode's first request gets a session that keeps Claude Code's own editing, and no edit or
    terminal tool of Agent mode's."""
    claude.api.script(reply(text("One.")), reply(text("Two.")))
    with trio.fail_after(GUARD):
        await backend.prepare(claude.agent, cwd=str(claude.cwd))
        await backend.chat([user("Agent chat")], agent=claude.agent, tools=copilot_tools("agent"), cwd=str(claude.cwd))
        await backend.prepare(claude.agent, cwd=str(claude.cwd))  # the next spare: Agent mode's
        ask = await backend.chat([user("Ask chat")], agent=claude.agent, tools=copilot_tools("ask"), cwd=str(claude.cwd))
    assert "Two." in ask.text()
    body = claude.api.main[1].body
    assert {"Edit", "Write"} <= {t["name"] for t in body["tools"]}
    said = offered(body)
    assert "mcp__vscode_tools__get_errors" in said
    for name in ("replace_string_in_file", "create_file", "run_in_terminal", "run_vscode_command"):
        assert f"mcp__vscode_tools__{name}" not in said, name
