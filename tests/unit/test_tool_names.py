"""The names agents get for the consumer's tools (docs/DESIGN.md, "Tool names"): within the strictest
model API's rule with every known prefix counted, unique, stable, readable, and mapped back exactly."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from protocol.bridge.tool_names import BUDGET, KNOWN_PREFIXES, MAX_NAME, ToolNames, _tag
from protocol.bridge.tool_schema import listable
from protocol.turn.permissions import Permit, permission_policy
from protocol.vscode.lm import Tool

OPENAI = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_the_budget_counts_the_longest_prefix_an_agent_puts_before_our_names():
    assert MAX_NAME == 64 and BUDGET == 64 - len("mcp__vscode_tools__") == 45


def test_a_name_that_fits_is_kept_as_it_is():
    names = ToolNames.of(["get_errors", "run_vscode_command", "mcp_github-create_issue", "x" * BUDGET])
    assert dict(names.to_agent) == {n: n for n in names.to_agent}


def test_others_read_like_the_original_and_fit():
    long = "a" * 80
    names = ToolNames.of(["workbench.action.run", "my tool (beta)", long, "é" * 200, "..."])
    assert names.agent("workbench.action.run") == "workbench_action_run"
    assert names.agent("my tool (beta)") == "my_tool_beta"
    assert names.agent(long) == "a" * (BUDGET - 9) + "_" + _tag(long, 0)
    assert names.agent("é" * 200) == "tool_" + _tag("é" * 200, 0)
    assert re.fullmatch(r"tool_[0-9a-f]{8}", names.agent("..."))


def test_a_spelling_taken_by_another_tool_gets_its_hash():
    names = ToolNames.of(["a.b", "a_b", "a b"])
    assert names.agent("a_b") == "a_b"  # the one that fits keeps it, wherever it stands
    assert names.agent("a.b") == f"a_b_{_tag('a.b', 0)}"
    assert names.agent("a b") == f"a_b_{_tag('a b', 0)}"
    # A tool whose own name is another's hashed spelling keeps it; the other moves on.
    squatter = f"a_b_{_tag('a.b', 0)}"
    names = ToolNames.of(["a.b", "a_b", squatter])
    assert names.agent(squatter) == squatter
    assert names.agent("a.b") == f"a_b_{_tag('a.b', 1)}"


def test_calls_map_back_exactly_and_nothing_else_does():
    names = ToolNames.of(["workbench.action.run", "get_errors"])
    assert names.consumer("workbench_action_run") == "workbench.action.run"
    assert names.consumer("get_errors") == "get_errors"
    assert names.consumer("workbench.action.run") is None  # the original is not a name the agent was given
    assert names.consumer("nothing") is None


@given(st.lists(st.text(max_size=220), max_size=40))
def test_every_list_gets_unique_names_every_api_takes_stable_and_reversible(originals):
    names = ToolNames.of(originals)
    given_names = [n for n in dict.fromkeys(originals) if n]
    assert list(names.to_agent) == given_names
    agent_names = list(names.to_agent.values())
    assert len(set(agent_names)) == len(agent_names)
    assert all(OPENAI.match("mcp__vscode_tools__" + n) for n in agent_names)  # Claude Code's and Codex's
    assert all(len(prefix + n) <= MAX_NAME for prefix in KNOWN_PREFIXES for n in agent_names)
    assert all(names.consumer(names.agent(n)) == n for n in given_names)
    assert ToolNames.of(originals) == names


def test_the_bridge_lists_the_agents_names_and_the_permission_policy_knows_them():
    tools = (Tool("workbench.action.run", "Run", {}), Tool("get_errors", "Errors", {}))
    names = ToolNames.of(t.name for t in tools)
    listed, problems = listable(tools, names)
    assert problems == [] and [t["name"] for t in listed] == ["workbench_action_run", "get_errors"]
    asked = {"toolCall": {"title": "mcp__vscode_tools__workbench_action_run", "toolCallId": "t1"}}
    assert permission_policy(asked, names.to_consumer, can_ask=False) is Permit.APPROVE
