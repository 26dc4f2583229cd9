"""The agent's options as its models' own controls in VS Code (protocol/acp/model_configuration.py),
from the shapes Claude Code, Codex and Gemini CLI send. In the real view: extension/src/test/agentView.ts."""

from __future__ import annotations

import json

from protocol.acp.agent_options import pending_options, read_choices
from protocol.acp.model_configuration import MAX_SCHEMA_CHARS, configuration_schema, wanted_options
from protocol.vscode.lm import agent_detail, agent_tooltip
from tests.unit.test_agent_options import CLAUDE_NEW, LEGACY_NEW

# What Codex's adapter answers to session/new, trimmed: no mode, its approval preset and reasoning effort.
CODEX_NEW = {
    "sessionId": "c1",
    "configOptions": [
        {"id": "approval", "name": "Approval Preset", "category": "approval", "type": "select", "currentValue": "auto", "options": [
            {"value": "read-only", "name": "Read Only"}, {"value": "auto", "name": "Default", "description": "Asks before leaving the workspace"},
            {"value": "full-access", "name": "Full Access"}]},
        {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "gpt-5", "options": [{"value": "gpt-5", "name": "GPT-5"}]},
        {"id": "reasoning_effort", "name": "Reasoning Effort", "category": "thought_level", "type": "select", "currentValue": "medium", "options": [
            {"value": "low", "name": "Low"}, {"value": "medium", "name": "Medium"}, {"value": "high", "name": "High"}]},
        {"id": "web", "name": "Web search", "type": "boolean", "currentValue": False},
    ],
}


def test_each_select_option_but_the_model_is_a_property_with_the_agents_labels_and_its_current_value_as_default() -> None:
    schema = configuration_schema(read_choices(CLAUDE_NEW))
    assert schema is not None and list(schema["properties"]) == ["mode", "effort"], "the model is an entry of its own, not a property"
    mode = schema["properties"]["mode"]
    assert mode["title"] == "Mode" and mode["enum"] == ["default", "plan", "bypassPermissions"]
    assert mode["enumItemLabels"] == ["Manual", "Plan", "Bypass permissions (bypasses permissions)"], "a bypassing value says so in its label"
    assert mode["enumDescriptions"][2].startswith("bypasses permissions") and mode["enumDescriptions"][2].endswith("Accepts all permissions")
    assert mode["default"] == "default" and mode["group"] == "navigation", "the mode goes in the chat input"
    assert "group" not in schema["properties"]["effort"], "the rest in Manage Language Models"


def test_without_a_mode_the_thought_level_goes_in_the_chat_input_and_booleans_get_no_property() -> None:
    schema = configuration_schema(read_choices(CODEX_NEW))
    assert schema is not None
    props = schema["properties"]
    assert list(props) == ["reasoning_effort", "approval"], "the chat input's first"
    assert props["reasoning_effort"]["group"] == "navigation" and props["reasoning_effort"]["default"] == "medium"
    assert "group" not in props["approval"] and props["approval"]["default"] == "auto"


def test_the_older_modes_are_a_property_too_and_an_agent_without_options_has_no_schema() -> None:
    schema = configuration_schema(read_choices(LEGACY_NEW))
    assert schema is not None and list(schema["properties"]) == ["mode"]
    assert schema["properties"]["mode"]["enumItemLabels"] == ["Default", "YOLO (bypasses permissions)"]
    assert configuration_schema(()) is None
    assert configuration_schema(read_choices({"sessionId": "e"})) is None


def test_the_settings_value_is_the_default_unless_it_bypasses_permissions() -> None:
    choices = read_choices(CLAUDE_NEW)
    assert configuration_schema(choices, {"mode": "plan"})["properties"]["mode"]["default"] == "plan"  # type: ignore[index]
    assert configuration_schema(choices, {"effort": "high"})["properties"]["effort"]["default"] == "high"  # type: ignore[index]
    assert configuration_schema(choices, {"mode": "bypassPermissions"})["properties"]["mode"]["default"] == "default"  # type: ignore[index]
    started_bypassing = read_choices({**CLAUDE_NEW, "configOptions": [{**CLAUDE_NEW["configOptions"][0], "currentValue": "bypassPermissions"}]})  # type: ignore[dict-item]
    assert configuration_schema(started_bypassing)["properties"]["mode"]["default"] == "default", "never the default, even when the agent starts in it"  # type: ignore[index]


def test_a_choice_in_the_controls_wins_over_the_settings_and_the_default_is_no_choice() -> None:
    choices = read_choices(CLAUDE_NEW)
    # VS Code fills in the defaults: a user who never chose leaves the settings as they were.
    assert wanted_options({"mode": "plan"}, {"mode": "plan", "effort": "default"}, choices) == {"mode": "plan"}
    assert wanted_options({}, {"mode": "default", "effort": "default"}, choices) == {}
    assert wanted_options({"mode": "plan"}, {"mode": "default"}, choices) == {"mode": "default"}, "the picker's choice wins"
    assert wanted_options({"model": "sonnet"}, {"mode": "plan", "effort": "high"}, choices) == {"model": "sonnet", "mode": "plan", "effort": "high"}
    # A bypassing mode from the settings holds while the controls show the default.
    assert wanted_options({"mode": "bypassPermissions"}, {"mode": "default"}, choices) == {"mode": "bypassPermissions"}
    # What is no property, or no value of it, is no choice.
    assert wanted_options({}, {"mode": "nonsense", "model": "haiku", "other": "x", "effort": 3}, choices) == {}


def test_keys_naming_the_same_option_become_its_id() -> None:
    choices = read_choices(CODEX_NEW)
    assert wanted_options({"effort": "low"}, {"reasoning_effort": "high"}, choices) == {"reasoning_effort": "high"}
    assert wanted_options({"effort": "low"}, {"reasoning_effort": "low"}, choices) == {"reasoning_effort": "low"}
    assert wanted_options({"unknown": "x"}, {"approval": "read-only"}, choices) == {"unknown": "x", "approval": "read-only"}


def test_a_choice_reaches_the_session_once_and_the_agents_own_change_stands() -> None:
    """docs/usage.md: chosen Plan is set before the next prompt; the agent leaving plan mode by
    itself is not undone by the next request, which still carries Plan; choosing again is."""
    choices = read_choices(CLAUDE_NEW)
    applied: dict[str, str | bool] = {}
    before = {"mode": "default"}
    wanted = wanted_options({}, {"mode": "plan", "effort": "default"}, choices)
    assert pending_options(wanted, applied, before) == {"mode": "plan"}
    applied = dict(wanted)  # set; then the agent leaves plan mode itself
    assert pending_options(wanted_options({}, {"mode": "plan", "effort": "default"}, choices), applied, before) == {}
    assert pending_options(wanted_options({}, {"mode": "default", "effort": "default"}, choices), applied, before) == {"mode": "default"}


def test_a_schema_stays_small_whatever_the_agent_offers() -> None:
    """Each of an agent's model entries carries it: 100 options of 100 long values stay within the bound."""
    values = [{"value": f"v{i}", "name": "n" * 200, "description": "d" * 200} for i in range(100)]
    raw = [{"id": f"o{i}", "name": f"Option {i}", "category": "mode" if i == 50 else None, "type": "select", "currentValue": "v0", "options": values} for i in range(100)]
    schema = configuration_schema(read_choices({"configOptions": raw}))
    assert schema is None or len(json.dumps(schema)) <= MAX_SCHEMA_CHARS
    small = [{**o, "options": values[:3]} for o in raw]
    schema = configuration_schema(read_choices({"configOptions": small}))
    assert schema is not None and len(json.dumps(schema)) <= MAX_SCHEMA_CHARS
    assert next(iter(schema["properties"])) == "o50" and schema["properties"]["o50"]["group"] == "navigation", "the chat input's option is kept first"


def test_the_pickers_detail_and_hover_say_the_agents_version_and_that_it_wants_a_sign_in() -> None:
    assert agent_detail(None, None) == "ACP agent"
    assert agent_detail("0.100.0", False) == "ACP agent 0.100.0"
    assert agent_detail("0.100.0", True) == "ACP agent 0.100.0 · sign-in needed"
    assert agent_tooltip("Claude Code", "0.100.0", False) == "Claude Code 0.100.0, an ACP agent run by Symposium."
    assert agent_tooltip("Codex", None, True).endswith("It wants a sign-in: Symposium: Sign In to an Agent.")
