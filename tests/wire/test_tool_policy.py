"""Which consumer tools an agent gets (protocol/bridge/tool_policy.py; docs/DESIGN.md, "Tool bridge").

The decisions are pure and checked on Copilot 0.67's real tool lists; then over the real wire:
Eliza, offered Copilot's Agent-mode list, lists and calls the editor-only tools and never sees
`runSubagent`; the `bridgedTools` setting chooses; a prepared spare session made while the chat
was in Agent mode offers Ask mode's tools to Ask mode's first request.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from protocol.acp.agent_facts import facts_for
from protocol.acp.capabilities import read_initialize
from protocol.bridge.tool_policy import DUPLICATES, EDITOR, EDITS, NEVER, bridged_tools, merge_meta, wants_edits_handed_off
from protocol.shared.structuring import WireError
from protocol.vscode.lm import BridgedTools, ChatParams, parse
from symposium.agent_facts import load_agent_facts
from symposium.client import AGENT_ACTION_TOOL_DEF, ELIZA, BackendClient, tool_result, user
from tests.actors.test_tool_schema import GUARD, as_tools, copilot_tools

DEFAULT, ALL = BridgedTools(), BridgedTools("all")


def names(mode: str, choice: BridgedTools = DEFAULT, handed_off: bool = False) -> list[str]:
    return [t.name for t in bridged_tools(as_tools(copilot_tools(mode)), choice, handed_off)]


def test_every_tool_of_copilots_real_lists_is_decided_once() -> None:
    """A tool Copilot sends falls in exactly one class: no decision by accident."""
    classes = [EDITOR, EDITS, DUPLICATES, NEVER]
    for mode in ("agent", "ask"):
        for tool in copilot_tools(mode):
            if tool["name"] != AGENT_ACTION_TOOL_DEF["name"]:  # ours: the permission card, never bridged
                assert sum(tool["name"] in c for c in classes) == 1, tool["name"]


def test_by_default_the_agent_gets_what_only_the_editor_can_do() -> None:
    agent = names("agent")
    assert set(agent) - {AGENT_ACTION_TOOL_DEF["name"]} == {t["name"] for t in copilot_tools("agent")} & EDITOR
    assert {"get_errors", "vscode_listCodeUsages", "vscode_renameSymbol", "testFailure", "create_and_run_task", "run_vscode_command", "terminal_selection"} <= set(agent)
    assert not set(agent) & (DUPLICATES | EDITS | NEVER)
    # With its own editing off, VS Code's edit tools too.
    assert {"replace_string_in_file", "create_file", "insert_edit_into_file", "edit_notebook_file"} <= set(names("agent", handed_off=True))
    # Another extension's tool, or an MCP server's the user set up in VS Code: theirs to use.
    assert [t.name for t in bridged_tools(as_tools([{"name": "mcp_db_query", "description": "", "inputSchema": {}}]), DEFAULT, False)] == ["mcp_db_query"]


def test_the_setting_chooses_but_never_runsubagent() -> None:
    everything = [t["name"] for t in copilot_tools("agent")]
    assert names("agent", ALL) == [n for n in everything if n != "runSubagent"]
    assert names("agent", BridgedTools("list", ("read_file", "runSubagent", "nope"))) == ["read_file"]


def test_editing_is_handed_to_vscode_only_when_it_offers_tools_to_change_and_create_files() -> None:
    assert wants_edits_handed_off(as_tools(copilot_tools("agent")), DEFAULT)
    assert not wants_edits_handed_off(as_tools(copilot_tools("ask")), DEFAULT)
    assert not wants_edits_handed_off(as_tools(copilot_tools("agent")), BridgedTools("list", ("replace_string_in_file",)))
    assert wants_edits_handed_off(as_tools(copilot_tools("agent")), BridgedTools("list", ("replace_string_in_file", "create_file")))


def test_claude_codes_own_editing_is_known_by_its_agent_info_and_merged_into_session_meta() -> None:
    facts = load_agent_facts()  # the shipped table, extension/catalogue/overrides.json
    claude = facts_for(facts, read_initialize({"agentInfo": {"name": "@agentclientprotocol/claude-agent-acp", "version": "0.100.0"}})).own_edits
    assert claude is not None
    assert facts_for(facts, read_initialize({"agentInfo": {"name": "codex-acp"}})).own_edits is None and facts_for(facts, read_initialize({})).own_edits is None
    base = {"claudeCode": {"options": {"promptSuggestions": False}}}
    assert merge_meta(base, claude.meta) == {"claudeCode": {"options": {"promptSuggestions": False, "disallowedTools": ["Edit", "Write", "MultiEdit", "NotebookEdit"]}}}


def test_the_setting_on_the_wire() -> None:
    chat = {"modelId": "m", "messages": []}
    assert parse(chat, ChatParams).bridged_tools == DEFAULT
    assert parse({**chat, "bridgedTools": "all"}, ChatParams).bridged_tools == ALL
    assert parse({**chat, "bridgedTools": ["get_errors"]}, ChatParams).bridged_tools == BridgedTools("list", ("get_errors",))
    with pytest.raises(WireError, match="bridgedTools: expected 'default', 'all' or a list of tool names"):
        parse({**chat, "bridgedTools": "some"}, ChatParams)


# Over the wire ----------------------------------------------------------------------------------------


def listing(mode: str, choice: BridgedTools = DEFAULT) -> str:
    tools = [t for t in bridged_tools(as_tools(copilot_tools(mode)), choice, False) if t.name != AGENT_ACTION_TOOL_DEF["name"]]
    return "Available tools:\n" + "\n".join(f"  - {t.name}: {t.description}" for t in tools)


async def test_eliza_lists_and_calls_the_editor_only_tools_of_copilots_real_list(backend: BackendClient) -> None:
    tools = copilot_tools("agent")
    with trio.fail_after(GUARD):
        listed = await backend.chat([user("list tools from vscode_tools")], agent=ELIZA, tools=tools)
        history = [user('use tools vscode_tools::get_errors with {"filePaths": ["app.py"]} and vscode_tools::terminal_last_command with {}')]
        calls = await backend.chat(history, agent=ELIZA, tools=tools)
        assert sorted((c["toolName"], json_of(c["parameters"])) for c in calls.tool_calls()) == [
            ("get_errors", '{"filePaths": ["app.py"]}'),
            ("terminal_last_command", "{}"),
        ]
        outputs = {"get_errors": "app.py:1: E999", "terminal_last_command": "make test"}
        history += [calls.assistant_message(), *(tool_result(c["toolCallId"], outputs[c["toolName"]]) for c in calls.tool_calls())]
        done = await backend.chat(history, agent=ELIZA, tools=tools)
        duplicate = await backend.chat([user('use tool vscode_tools::runSubagent with {"prompt": "hi"}')], agent=ELIZA, tools=tools)
    assert listed.error is None and listed.text() == listing("agent")
    assert "  - runSubagent:" not in listed.text() and "  - read_file:" not in listed.text()
    assert done.text() == "get_errors: OK: app.py:1: E999\nterminal_last_command: OK: make test"
    assert duplicate.tool_calls() == [] and "not found" in duplicate.text()


def json_of(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


async def test_the_setting_passes_through_the_request(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        listed = await backend.chat([user("list tools from vscode_tools")], agent=ELIZA, tools=copilot_tools("ask"), bridged_tools=["read_file", "get_errors"])
    assert listed.text() == listing("ask", BridgedTools("list", ("read_file", "get_errors")))


async def test_asks_first_request_offers_ask_modes_tools_from_a_spare_made_in_agent_mode(backend: BackendClient) -> None:
    """The spare session of a prepared agent carries the last tool list (Agent mode's); Ask mode's
    first request must see its own."""
    with trio.fail_after(GUARD):
        await backend.prepare(ELIZA)
        await backend.chat([user("Hello")], agent=ELIZA, tools=copilot_tools("agent"))  # takes the spare; the next is made with these tools
        await backend.prepare(ELIZA)  # returns once the next spare is ready
        listed = await backend.chat([user("list tools from vscode_tools")], agent=ELIZA, tools=copilot_tools("ask"))
    assert listed.text() == listing("ask")


async def test_no_model_claims_an_edit_tools_hint_vs_code_never_reads(backend: BackendClient) -> None:
    """VS Code 1.139's extension host passes a provider's `capabilities.editTools` on only through the
    proposed `chatProvider` API and never reads `editToolsHint`: Copilot picks a model's edit tools by
    its name (in the real view it offers ours `replace_string_in_file` and `insert_edit_into_file`:
    extension/src/test/agentView.ts). So the models carry what VS Code reads, no more."""
    with trio.fail_after(GUARD):
        models = await backend.models()
    assert models and all(set(m["capabilities"]) == {"toolCalling", "imageInput"} for m in models)
