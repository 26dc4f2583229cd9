"""VS Code tools bridged to Claude Code (issue: tool bridging), offline against the fake Anthropic API."""

from __future__ import annotations

import json
import re

import trio

from protocol.bridge.tool_names import ToolNames
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, tool_result, user
from tests.support.claude import ClaudeCode
from tests.support.fake_anthropic import reply, text, tool_use
from tests.support.real_agent import GUARD, assert_well_formed

WEATHER = {"name": "get_weather", "description": "The weather in a city", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
TIME = {"name": "get_time", "description": "The time in a city", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}


async def test_two_different_tools_in_one_turn(backend: BackendClient, claude: ClaudeCode) -> None:
    """Claude Code runs the model's two tool_use blocks; each surfaces as a VS Code tool call (together
    when it makes them together, else one round trip each) and both results reach the next model request."""
    asks = reply(text("Checking both."), tool_use("mcp__vscode_tools__get_weather", {"city": "Oslo"}), tool_use("mcp__vscode_tools__get_time", {"city": "Oslo"}))
    claude.api.script(asks, reply(text("Cold, and ", "late.")))
    tools = [AGENT_ACTION_TOOL_DEF, WEATHER, TIME]
    outputs = {"get_weather": "-5 C, snow", "get_time": "23:40"}
    history = [user("Weather and time in Oslo?")]
    seen: list[dict] = []
    with trio.fail_after(GUARD):
        result = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
        for _ in range(3):
            assert_well_formed(result)
            if not result.tool_calls():
                break
            seen += result.tool_calls()
            history += [result.assistant_message(), *(tool_result(c["toolCallId"], outputs[c["toolName"]]) for c in result.tool_calls())]
            result = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    assert "Cold, and late." in result.text()
    assert sorted((c["toolName"], c["parameters"]["city"]) for c in seen) == [("get_time", "Oslo"), ("get_weather", "Oslo")]
    assert len({c["toolCallId"] for c in seen}) == 2
    # The model's next request carries both results, matched to its tool_use ids.
    results = {r["tool_use_id"]: r["content"] for r in claude.api.main[1].tool_results()}
    weather_id, time_id = asks.call_ids()
    assert results[weather_id] == [{"type": "text", "text": "-5 C, snow"}]
    assert results[time_id] == [{"type": "text", "text": "23:40"}]
    # Permissions for our own bridged tools were approved by the backend, never asked of the user.
    assert all(r["params"]["toolCall"]["title"].startswith("mcp__vscode_tools__") for r in claude.requests("session/request_permission"))


def _tool(name: str) -> dict:
    return {"name": name, "description": name, "inputSchema": {"type": "object", "properties": {"filePath": {"type": "string"}}}}


async def _rounds(backend: BackendClient, claude: ClaudeCode, names: list[str]) -> list[list[str]]:
    """The model asks for `names` in one response; the calls of each round of VS Code's tool loop."""
    asks = reply(text("Both."), *(tool_use(f"mcp__vscode_tools__{name}", {"filePath": f"/w/{name}.txt"}) for name in names))
    claude.api.script(asks, reply(text("Done.")))
    tools = [AGENT_ACTION_TOOL_DEF, *map(_tool, names)]
    history = [user("Do both")]
    rounds: list[list[str]] = []
    with trio.fail_after(GUARD):
        result = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
        while result.tool_calls() and len(rounds) < len(names):
            rounds.append(sorted(c["toolName"] for c in result.tool_calls()))
            history += [result.assistant_message(), *(tool_result(c["toolCallId"], "ok") for c in result.tool_calls())]
            result = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    assert "Done." in result.text()
    # However many rounds it took, the model's next request carried both results.
    assert sorted(r["tool_use_id"] for r in claude.api.main[1].tool_results()) == sorted(asks.call_ids())
    return rounds


async def test_read_only_calls_the_model_makes_together_cost_one_round(backend: BackendClient, claude: ClaudeCode) -> None:
    """Declared read-only (MCP `readOnlyHint`), VS Code's tools are run side by side by Claude Code:
    both calls reach VS Code in one response (docs/DESIGN.md, "Parallel tool calls")."""
    assert await _rounds(backend, claude, ["get_errors", "testFailure"]) == [["get_errors", "testFailure"]]


async def test_edits_the_model_makes_together_come_one_at_a_time(backend: BackendClient, claude: ClaudeCode) -> None:
    """Measured: Claude Code runs an MCP tool not declared read-only alone, its next call only once
    the first is answered; each such call is a round of its own, and goes to VS Code at once."""
    assert await _rounds(backend, claude, ["replace_string_in_file", "create_file"]) == [["replace_string_in_file"], ["create_file"]]


ASK_TOOL_DEF = {"name": "vscode_askQuestions", "description": "Copilot's question UI", "inputSchema": {"type": "object", "properties": {"questions": {"type": "array"}}}}


async def test_claude_codes_question_is_asked_in_copilots_question_ui_and_the_answer_reaches_its_model(backend: BackendClient, claude: ClaudeCode) -> None:
    question = {"question": "Which database should I use?", "header": "Database", "multiSelect": False,
                "options": [{"label": "Postgres", "description": "relational"}, {"label": "Redis", "description": "in memory"}]}
    claude.api.script(reply(tool_use("AskUserQuestion", {"questions": [question]})), reply(text("Postgres it is.")))
    tools = [AGENT_ACTION_TOOL_DEF, ASK_TOOL_DEF]
    history = [user("Set up a database")]
    with trio.fail_after(GUARD):
        asked = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
        [call] = asked.tool_calls()
        assert call["toolName"] == "vscode_askQuestions"
        [choice, *others] = call["parameters"]["questions"]
        assert choice["header"] == "Database" and choice["question"] == "Which database should I use?"
        assert [o["label"] for o in choice["options"]] == ["Postgres", "Redis"] and choice["allowFreeformInput"] is False
        # Copilot's result: its answers by header (VS Code's AskQuestionsTool).
        answers = {"Database": {"selected": ["Postgres"], "freeText": None, "skipped": False}}
        answers |= {o["header"]: {"selected": [], "freeText": None, "skipped": True} for o in others}
        history += [asked.assistant_message(), tool_result(call["toolCallId"], json.dumps({"answers": answers}))]
        answered = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    assert_well_formed(answered)
    assert answered.text().endswith("Postgres it is.")
    [result] = claude.api.main[-1].tool_outputs()
    assert "Postgres" in result["text"] and not result["is_error"], result
    [elicited] = claude.requests("elicitation/create")
    assert elicited["params"]["mode"] == "form"


async def test_tools_named_as_no_model_api_takes_reach_claude_by_safe_names_and_vscode_by_their_own(backend: BackendClient, claude: ClaudeCode) -> None:
    """docs/DESIGN.md, "Tool names": a dotted and an 80-character name reach Claude Code's model under
    names within ^[a-zA-Z0-9_-]{1,64}$ with its prefix (nothing rewritten or dropped on the way), and the
    model's call of one reaches VS Code by the tool's own name."""
    dotted = {**WEATHER, "name": "weather.current"}
    long = {**TIME, "name": "time_in_" + "x" * 72}
    names = ToolNames.of([dotted["name"], long["name"]])
    claude.api.script(reply(text("Checking."), tool_use("mcp__vscode_tools__weather_current", {"city": "Oslo"})), reply(text("Cold.")))
    tools = [AGENT_ACTION_TOOL_DEF, dotted, long]
    with trio.fail_after(GUARD):
        history = [user("Weather in Oslo?")]
        result = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
        assert_well_formed(result)
        [call] = result.tool_calls()
        history += [result.assistant_message(), tool_result(call["toolCallId"], "-5 C")]
        done = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd))
    assert call["toolName"] == "weather.current" and call["parameters"] == {"city": "Oslo"}
    assert "Cold." in done.text()
    said = json.dumps(claude.api.main[0].body)
    for name in ("weather_current", names.agent(long["name"])):
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", f"mcp__vscode_tools__{name}") and f"mcp__vscode_tools__{name}" in said, name
    assert "weather.current" not in said and long["name"] not in said
