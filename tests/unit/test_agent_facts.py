"""The agent facts: one table, beside the catalogue, of what is known of agents by the `agentInfo.name`
they give at `initialize` (docs/DESIGN.md, "Agent facts"). A malformed file or entry is reported
and left out, never a crash."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from protocol.acp import schema as acp
from protocol.acp.agent_facts import NOTHING, AgentFacts, MessageFork, OwnEdits, Runs, facts_for, parse_agent_facts, start_env
from protocol.acp.capabilities import read_initialize
from symposium import agent_facts as loader

SHIPPED = Path(__file__).parents[2] / "extension" / "catalogue" / "overrides.json"
FORK_META = {"jetbrains": {"air": {"fork": {"version": 1, "messageId": "{messageId}"}}}}


def test_the_shipped_table_holds_every_entry_without_a_problem() -> None:
    table, problems = parse_agent_facts(json.loads(SHIPPED.read_text()))
    assert problems == []
    claude = table["@agentclientprotocol/claude-agent-acp"]
    assert claude.own_edits is not None and claude.forks_at_message is not None and not claude.http_mcp_only
    assert claude.forks_at_message.meta("msg_01") == {"jetbrains": {"air": {"fork": {"version": 1, "messageId": "msg_01"}}}}
    assert table["@zed-industries/claude-code-acp"].forks_at_message is None
    assert table["Copilot"] == AgentFacts(http_mcp_only=True)


def test_what_a_session_is_opened_with_is_the_agents_fact_not_every_agents() -> None:
    """Claude Code's prompt suggestions (a model call the user pays for, shown nowhere) are off in
    its sessions; no other agent is sent Claude Code's `_meta`."""
    table, _ = parse_agent_facts(json.loads(SHIPPED.read_text()))
    off = {"claudeCode": {"options": {"promptSuggestions": False}}}
    assert table["@agentclientprotocol/claude-agent-acp"].session_meta == off
    assert table["@zed-industries/claude-code-acp"].session_meta == off
    assert table["Copilot"].session_meta == {} and NOTHING.session_meta == {}
    assert "_meta" not in acp.new_session_params("/w", [], NOTHING.session_meta)
    assert acp.new_session_params("/w", [], off)["_meta"] == off


def test_an_agent_is_known_by_the_name_it_gives_at_initialize_whatever_it_was_installed_as() -> None:
    table = {"A": AgentFacts(http_mcp_only=True)}
    assert facts_for(table, read_initialize({"agentInfo": {"name": "A", "version": "1.0.0"}})).http_mcp_only
    assert facts_for(table, read_initialize({"agentInfo": {"name": "a"}})) is NOTHING  # names are exact
    assert facts_for(table, read_initialize({"agentInfo": "A"})) is NOTHING and facts_for(table, read_initialize({})) is NOTHING


def test_a_well_formed_entry() -> None:
    document = {
        "agentInfo": {
            "x": {
                "ownEdits": {"_meta": {"k": {"off": ["Edit"]}}},
                "forksAtMessage": {"since": "1.2.3", "_meta": FORK_META},
                "httpMcpOnly": False,
                "why": "tested",
            }
        }
    }
    assert parse_agent_facts(document) == ({"x": AgentFacts(OwnEdits({"k": {"off": ["Edit"]}}), MessageFork((1, 2, 3), FORK_META))}, [])
    assert parse_agent_facts({"remove": []}) == ({}, [])  # no section: nothing known


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("yes", "not an object"),
        ({"httpMcpOnly": "true"}, "'httpMcpOnly' is not true or false"),
        ({"ownEdit": {"_meta": {}}}, "unknown field 'ownEdit'"),
        ({"ownEdits": {"meta": {}}}, "'ownEdits' has no '_meta' object"),
        ({"forksAtMessage": {"since": "0.100", "_meta": FORK_META}}, "'forksAtMessage.since' is not a version"),
        ({"forksAtMessage": {"since": "0.100.0", "_meta": {"fork": {"messageId": "msg"}}}}, "no '{messageId}'"),
        ({"why": 1}, "'why' is not a string"),
        ({"keys": {"api-key": "OPENAI_API_KEY"}}, "'keys['api-key']' is not a list of variable names"),
        ({"keys": {"api-key": ["A=B"]}}, "not a list of variable names"),
        ({"startEnv": {"X": "1"}}, "'startEnv' without 'runs'"),
        ({"startEnv": {"X": 1}, "runs": {"commands": ["x"]}}, "'startEnv['X']' is not a variable name"),
        ({"startEnv": {"X": "1"}, "runs": {"pip": ["x"]}}, "'runs' is not an object"),
        ({"startEnv": {"X": "1"}, "runs": {"commands": ["../bin/x"]}}, "'runs.commands' is not a list of names"),
        ({"signInEnv": ["EDITOR=vi"]}, "'signInEnv' is not a list of variable names"),
    ],
)
def test_a_malformed_entry_is_left_out_and_said_why_the_others_kept(entry: object, problem: str) -> None:
    table, problems = parse_agent_facts({"agentInfo": {"bad": entry, "good": {"httpMcpOnly": True}}})
    assert table == {"good": AgentFacts(http_mcp_only=True)}
    [said] = problems
    assert said.startswith("agentInfo['bad']: ") and problem in said and said.endswith("; left out")


def test_a_malformed_document_leaves_nothing_known() -> None:
    assert parse_agent_facts([]) == ({}, ["the file is not a JSON object"])
    assert parse_agent_facts({"agentInfo": []}) == ({}, ["'agentInfo' is not an object"])


def test_the_backend_reads_the_repositorys_file_and_a_broken_one_only_costs_the_facts(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert loader.load_agent_facts() == parse_agent_facts(json.loads(SHIPPED.read_text()))[0]
    broken = tmp_path / "overrides.json"
    broken.write_text('{"agentInfo": {')
    with caplog.at_level(logging.ERROR):
        assert loader.load_agent_facts(broken) == {}
        assert loader.load_agent_facts(tmp_path / "missing.json") == {}
        broken.write_text('{"agentInfo": {"Copilot": {"httpMcpOnly": 1}, "A": {"httpMcpOnly": true}}}')
        assert loader.load_agent_facts(broken) == {"A": AgentFacts(http_mcp_only=True)}
    said = caplog.text
    assert "not JSON" in said and "not read" in said and "agentInfo['Copilot']: 'httpMcpOnly' is not true or false" in said


def test_the_packaged_copy_is_the_repositorys_file() -> None:
    """The wheel the vsix ships carries the file through the link symposium/agent_facts.json."""
    packaged = Path(loader.__file__).parent / loader.PACKAGED
    assert packaged.read_text() == SHIPPED.read_text()


def test_an_agent_handled_sign_in_that_reads_a_key_is_known_by_its_method_id() -> None:
    table, problems = parse_agent_facts(json.loads(SHIPPED.read_text()))
    assert problems == []
    assert table["@agentclientprotocol/codex-acp"].keys == {"api-key": ("CODEX_API_KEY", "OPENAI_API_KEY")}
    assert table["gemini-cli"].keys == {"gemini-api-key": ("GEMINI_API_KEY",)}


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("npx", ["-y", "@google/gemini-cli", "--acp"]),  # the README's entry
        ("npx", ["-y", "@google/gemini-cli@0.56.0", "--acp"]),
        ("/usr/bin/node", ["/home/u/.config/Code/agents/gemini-0.56.0/node_modules/@google/gemini-cli/bundle/gemini.js", "--acp"]),  # Add Agent's
        ("gemini", ["--acp"]),  # installed globally
        ("/usr/local/bin/gemini", ["--experimental-acp"]),
        ("C:\\npm\\gemini.cmd", ["--acp"]),
        ("node", ["C:\\Users\\u\\agents\\node_modules\\@google\\gemini-cli\\bundle\\gemini.js"]),
    ],
)
def test_what_an_agent_needs_at_start_is_given_however_it_was_configured(command: str, args: list[str]) -> None:
    table, _ = parse_agent_facts(json.loads(SHIPPED.read_text()))
    assert start_env(table, command, args) == {"GEMINI_CLI_TRUST_WORKSPACE": "true"}


def test_qwen_code_and_agents_that_run_something_else() -> None:
    table, _ = parse_agent_facts(json.loads(SHIPPED.read_text()))
    assert start_env(table, "npx", ["-y", "@qwen-code/qwen-code", "--acp"]) == {"QWEN_CODE_LEGACY_MCP_BLOCKING": "1"}
    assert start_env(table, "qwen", ["--acp"]) == {"QWEN_CODE_LEGACY_MCP_BLOCKING": "1"}
    for command, args in [("npx", ["-y", "@google/gemini-cli-core"]), ("gemini-helper", []), ("node", ["/x/not-gemini/index.js", "gemini"]), ("npx", ["-y", "@agentclientprotocol/claude-agent-acp"])]:
        assert start_env(table, command, args) == {}, (command, args)
    assert Runs(commands=("gemini",)).matches("/opt/Gemini.exe", []) is False  # names are exact


def test_what_a_sign_in_may_set_beyond_credentials_is_every_variable_the_facts_name() -> None:
    table, problems = parse_agent_facts({"agentInfo": {"a": {
        "signInEnv": ["CLAUDE_CODE_USE_BEDROCK"], "keys": {"api-key": ["OPENAI_API_KEY"]}, "startEnv": {"A_TRUST": "1"}, "runs": {"commands": ["a"]},
        "keyMethod": {"id": "k", "name": "K", "vars": ["A_KEY"]},
    }}})
    assert problems == []
    assert table["a"].documented_env == {"CLAUDE_CODE_USE_BEDROCK", "OPENAI_API_KEY", "A_TRUST", "A_KEY"}
