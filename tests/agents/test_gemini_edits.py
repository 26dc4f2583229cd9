"""Gemini CLI writes through the client (ACP `fs/write_text_file`): where the request offers Copilot's edit
tools, its edits become their calls, for VS Code's review; where it does not, the backend writes them on
disk. The real Gemini CLI of the catalogue, against the fake Gemini API (docs/DESIGN.md, "Edits through the client").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.vscode.lm import AGENT_ACTION_APPROVED, AGENT_ACTION_TOOL
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, ChatResult, process_agent, tool_result, user
from tests.actors.test_tool_schema import copilot_tools
from tests.support.fake_gemini import FakeGemini, function_call, reply, text
from tests.support.gemini import Gemini, installed_gemini
from tests.support.real_agent import GUARD

APP = "".join(f"line {n}\n" for n in range(1, 13))


@pytest.fixture
async def gemini(nursery: trio.Nursery, tmp_path: Path) -> Gemini:
    found = await trio.to_thread.run_sync(installed_gemini)
    if isinstance(found, str):
        pytest.skip(found)
    api = FakeGemini()
    await nursery.start(api.serve)
    return Gemini(api, tmp_path)


async def chat_through(backend: BackendClient, gemini: Gemini, prompt: str, tools: list[dict[str, Any]], run_edit: Any) -> tuple[ChatResult, list[dict[str, Any]]]:
    """A chat carried to its end as Copilot would: cards approved, edit tools run by `run_edit`
    (which returns the tool's result text). Returns the last result and every edit call."""
    history: list[Any] = [user(prompt)]
    edits: list[dict[str, Any]] = []
    with trio.fail_after(GUARD * 2):
        result = await backend.chat(history, agent=gemini.agent, tools=tools, cwd=str(gemini.cwd))
        for _ in range(6):
            calls = result.tool_calls()
            if result.error is not None or not calls:
                return result, edits
            history.append(result.assistant_message())
            for call in calls:
                if call["toolName"] == AGENT_ACTION_TOOL:
                    history.append(tool_result(call["toolCallId"], AGENT_ACTION_APPROVED))
                else:
                    edits.append(call)
                    history.append(tool_result(call["toolCallId"], run_edit(call)))
            result = await backend.chat(history, agent=gemini.agent, tools=tools, cwd=str(gemini.cwd))
    raise AssertionError("the chat did not end")


def copilot_runs(call: dict[str, Any]) -> str:
    """What Copilot's edit tools do, on disk (VS Code saves them): one unique match replaced."""
    p = call["parameters"]
    path = Path(p["filePath"])
    if call["toolName"] == "create_file":
        if path.exists():
            return "ERROR while calling tool: File already exists"
        path.write_text(p["content"])
    else:
        content = path.read_text()
        if content.count(p["oldString"]) != 1:
            return "ERROR while calling tool: Could not find matching text to replace"
        path.write_text(content.replace(p["oldString"], p["newString"], 1))
    return f"The following files were successfully edited:\n{path}"


async def test_gemini_cli_edits_go_through_vscodes_edit_tools_in_agent_mode(backend: BackendClient, gemini: Gemini) -> None:
    app = gemini.cwd / "app.py"
    app.write_text(APP)
    new = gemini.cwd / "notes.md"
    gemini.api.script(
        reply(text("Editing."), function_call("replace", {"file_path": str(app), "old_string": "line 7\n", "new_string": "line seven\n", "instruction": "Spell out 7"})),
        reply(text("Writing."), function_call("write_file", {"file_path": str(new), "content": "# Notes\n"})),
        reply(text("Both done.")),
    )
    result, edits = await chat_through(backend, gemini, "Spell out 7 in app.py and start notes.md", copilot_tools("agent"), copilot_runs)
    assert result.error is None and "Both done." in result.text()
    assert [(e["toolName"], e["parameters"].get("oldString")) for e in edits] == [("replace_string_in_file", "line 7\n"), ("create_file", None)]
    assert edits[0]["parameters"]["newString"] == "line seven\n" and edits[0]["parameters"]["filePath"] == str(app)
    assert app.read_text() == APP.replace("line 7\n", "line seven\n") and new.read_text() == "# Notes\n"
    # Gemini CLI asked to write through the client, and heard it succeeded.
    writes = [m for m in gemini_messages(gemini) if m.get("method") == "fs/write_text_file"]
    assert len(writes) == 2
    outputs = " ".join(o["text"] for r in gemini.api.main for o in r.tool_outputs())
    assert "Successfully" in outputs or "success" in outputs.lower()


async def test_an_edit_vscode_refuses_reaches_the_agent_as_a_failed_write(backend: BackendClient, gemini: Gemini) -> None:
    app = gemini.cwd / "app.py"
    app.write_text(APP)
    gemini.api.script(
        reply(function_call("replace", {"file_path": str(app), "old_string": "line 3\n", "new_string": "line three\n", "instruction": "Spell out 3"})),
        reply(text("It failed.")),
    )
    result, edits = await chat_through(backend, gemini, "Spell out 3", copilot_tools("agent"), lambda call: "ERROR while calling tool: The user rejected the edit")
    assert [e["toolName"] for e in edits] == ["replace_string_in_file"] and app.read_text() == APP
    [write] = [m for m in gemini_messages(gemini) if m.get("method") == "fs/write_text_file"]
    [answer] = [m for m in gemini_messages(gemini, "c2a") if m.get("id") == write["id"] and "method" not in m]
    assert "The user rejected the edit" in answer["error"]["message"]
    # Gemini CLI 0.56 tells its model only that the write failed ("[object Object]": it prints the error object).
    outputs = " ".join(o["text"] for r in gemini.api.main for o in r.tool_outputs())
    assert "error" in outputs.lower() and "It failed." in result.text()


async def test_without_copilots_edit_tools_the_backend_writes_on_disk(backend: BackendClient, gemini: Gemini) -> None:
    app = gemini.cwd / "app.py"
    app.write_text(APP)
    app.chmod(0o640)
    gemini.api.script(
        reply(function_call("replace", {"file_path": str(app), "old_string": "line 2\n", "new_string": "line two\n", "instruction": "Spell out 2"})),
        reply(text("Done on disk.")),
    )
    # Another consumer: a confirmation card, no edit tools.
    result, edits = await chat_through(backend, gemini, "Spell out 2", [AGENT_ACTION_TOOL_DEF], copilot_runs)
    assert "Done on disk." in result.text() and edits == []
    assert app.read_text() == APP.replace("line 2\n", "line two\n") and app.stat().st_mode & 0o777 == 0o640


def gemini_messages(gemini: Gemini, direction: str | None = None) -> list[dict[str, Any]]:
    """Its ACP traffic (`c2a`: what we sent it)."""
    records = [json.loads(line) for line in gemini.log.read_text().splitlines() if line.strip()]
    return [r["msg"] for r in records if "msg" in r and (direction is None or r.get("dir") == direction)]


@pytest.mark.parametrize("trusted_by", ["the agent facts", "nothing"])
async def test_gemini_cli_configured_by_hand_gets_vscodes_tools(backend: BackendClient, gemini: Gemini, trusted_by: str) -> None:
    """The README's hand-made entry sets nothing of what Gemini CLI needs to start MCP servers
    (GEMINI_CLI_TRUST_WORKSPACE): the backend adds it, known by what the entry runs (docs/usage.md, "Keys").
    Without it (the agent's own env saying no), Gemini's model is offered none of VS Code's tools."""
    env = {k: v for k, v in gemini.env.items() if k != "GEMINI_CLI_TRUST_WORKSPACE"}
    if trusted_by == "nothing":
        env["GEMINI_CLI_TRUST_WORKSPACE"] = "false"  # what its own env sets wins
    agent = process_agent("Gemini CLI", gemini.command[0], gemini.command[1:], env=env)
    gemini.api.script(reply(text("Listed.")))
    with trio.fail_after(GUARD * 2):
        result = await backend.chat([user("Which tools?")], agent=agent, tools=copilot_tools("agent"), cwd=str(gemini.cwd))
    assert result.completed and result.text().endswith("Listed."), result
    [request] = gemini.api.main
    offered = [name for name in request.tool_names() if "get_errors" in name]
    assert bool(offered) == (trusted_by == "the agent facts"), request.tool_names()
