"""The agent's choices and continued sessions as plain values (protocol/acp/agent_options.py,
protocol/acp/continuing.py), with the shapes real agents send. The catalog that keeps them across
restarts: tests/actors/test_stores.py."""

from __future__ import annotations

import os

from protocol.acp import continuing
from protocol.acp.agent_options import (
    Change,
    after_set,
    bypasses_permissions,
    find,
    model_values,
    next_change,
    pending_options,
    read_choices,
    set_request,
    takes_images,
    updated,
)
from protocol.vscode.lm import Message, TextPart

# What Claude Code's adapter (0.100) answers to session/new, trimmed to two options.
CLAUDE_NEW = {
    "sessionId": "s1",
    "modes": {"currentModeId": "default", "availableModes": [{"id": "default", "name": "Manual"}, {"id": "plan", "name": "Plan"}]},
    "configOptions": [
        {"id": "mode", "name": "Mode", "category": "mode", "type": "select", "currentValue": "default", "options": [
            {"value": "default", "name": "Manual"}, {"value": "plan", "name": "Plan"},
            {"value": "bypassPermissions", "name": "Bypass permissions", "description": "Accepts all permissions"}]},
        {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "default", "options": [
            {"value": "default", "name": "Default (recommended)", "description": "Opus"},
            {"value": "sonnet", "name": "Sonnet 5.5"}, {"value": "haiku", "name": "Haiku 5.5"}]},
        {"id": "effort", "name": "Effort", "category": "thought_level", "type": "select", "currentValue": "default", "options": [
            {"value": "default", "name": "Default"}, {"value": "high", "name": "High"}]},
    ],
}
# Gemini CLI's shape: no config options, the older modes and models.
LEGACY_NEW = {
    "sessionId": "g1",
    "modes": {"currentModeId": "default", "availableModes": [{"id": "default", "name": "Default"}, {"id": "yolo", "name": "YOLO"}]},
    "models": {"currentModelId": "flash", "availableModels": [{"modelId": "flash", "name": "Flash"}, {"modelId": "pro", "name": "Pro"}]},
}


def test_config_options_are_read_and_win_over_the_older_modes() -> None:
    choices = read_choices(CLAUDE_NEW)
    assert [(c.id, c.category, c.via) for c in choices] == [("mode", "mode", "config"), ("model", "model", "config"), ("effort", "thought_level", "config")]
    assert [v.value for v in model_values(choices)] == ["sonnet", "haiku"], "the agent's default is its plain entry"
    assert find(choices, "effort") is find(choices, "thought_level") is choices[2]


def test_the_older_modes_and_models_are_read_and_set_with_their_own_methods() -> None:
    choices = read_choices(LEGACY_NEW)
    assert [(c.id, c.via, c.current) for c in choices] == [("mode", "mode", "default"), ("model", "model", "flash")]
    key, change = next_change(choices, {"model": "pro", "mode": "yolo"})  # type: ignore[misc]
    assert key == "model" and set_request("g1", change) == ("session/set_model", {"sessionId": "g1", "modelId": "pro"})
    assert set_request("g1", Change(choices[0], "yolo")) == ("session/set_mode", {"sessionId": "g1", "modeId": "yolo"})
    assert after_set(choices, choices[1], "pro", {})[1].current == "pro"


def test_grouped_and_boolean_options_are_read() -> None:
    answer = {"sessionId": "s", "configOptions": [
        {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "a", "options": [
            {"group": "fast", "name": "Fast", "options": [{"value": "a", "name": "A"}]}, {"group": "big", "name": "Big", "options": [{"value": "b", "name": "B"}]}]},
        {"id": "web", "name": "Web search", "type": "boolean", "currentValue": False},
        {"id": "odd", "name": "Odd", "type": "slider", "currentValue": 3},
    ]}
    choices = read_choices(answer)
    assert [v.value for v in choices[0].values] == ["a", "b"]
    assert choices[1].kind == "boolean" and choices[1].offers(True) and not choices[1].offers("yes")
    assert len(choices) == 2, "a kind of option we do not know is not offered"
    _, change = next_change(choices, {"web": True})  # type: ignore[misc]
    assert set_request("s", change)[1] == {"sessionId": "s", "configId": "web", "type": "boolean", "value": True}


def test_the_model_is_set_first_and_what_is_not_offered_is_a_problem() -> None:
    choices = read_choices(CLAUDE_NEW)
    wanted = {"effort": "high", "mode": "plan", "model": "sonnet"}
    order = []
    done: list[str] = []
    while (step := next_change(choices, wanted, done)) is not None:
        key, change = step
        done.append(key)
        assert isinstance(change, Change)
        order.append(key)
        choices = after_set(choices, change.choice, change.value, None)
    assert order == ["model", "effort", "mode"]
    assert next_change(choices, wanted) is None, "nothing left once the session has it all"
    assert next_change(choices, {"model": "gone"}) == ("model", "offers no 'gone' for 'Model' (it offers: default, sonnet, haiku)")
    assert next_change(choices, {"colour": "red"})[1].startswith("offers no option 'colour'")  # type: ignore[index]


def test_what_is_wanted_is_seen_to_when_it_changes_and_set_back_when_no_longer_wanted() -> None:
    assert pending_options({"mode": "plan", "model": "sonnet"}, {}, {}) == {"mode": "plan", "model": "sonnet"}
    applied = {"mode": "plan", "model": "sonnet"}
    before = {"mode": "default", "model": "default"}
    assert pending_options({"mode": "plan", "model": "sonnet"}, applied, before) == {}, "the agent may have left plan mode itself: it stands"
    assert pending_options({"mode": "plan", "model": "haiku"}, applied, before) == {"model": "haiku"}
    assert pending_options({"mode": "plan"}, applied, before) == {"model": "default"}, "the plain entry: the agent's model again"
    assert pending_options({}, {"web": True}, {"web": None}) == {}, "nothing to go back to"


def test_an_agents_own_updates_change_its_choices() -> None:
    choices = read_choices(CLAUDE_NEW)
    after_mode = updated(choices, {"sessionUpdate": "current_mode_update", "currentModeId": "plan"})
    assert after_mode is not None and find(after_mode, "mode").current == "plan"  # type: ignore[union-attr]
    replaced = updated(choices, {"sessionUpdate": "config_option_update", "configOptions": CLAUDE_NEW["configOptions"][:1]})
    assert replaced is not None and [c.id for c in replaced] == ["mode"]
    assert updated(choices, {"sessionUpdate": "agent_message_chunk"}) is None


def test_modes_that_bypass_permissions_are_recognised() -> None:
    mode = find(read_choices(CLAUDE_NEW), "mode")
    assert mode is not None
    assert [v.value for v in mode.values if bypasses_permissions(v)] == ["bypassPermissions"]
    for bypassing in ("full-access", "yolo", "bypassPermissions", "dangerously-skip-permissions"):
        assert bypasses_permissions(bypassing)
    for asking in ("default", "plan", "acceptEdits", "auto", "read-only"):
        assert not bypasses_permissions(asking)


def test_a_model_takes_images_unless_its_agent_said_it_does_not() -> None:
    assert takes_images(True)
    assert not takes_images(False)
    # Not yet known (the agent has not started): let the first image through, or VS Code drops it.
    assert takes_images(None)


def test_continue_tokens_name_one_agents_session_and_cannot_be_forged() -> None:
    key = os.urandom(32)
    token = continuing.encode(key, "agent-a", "session-1", "/work/x")
    said = (Message("user", (TextPart("Continue"),)), Message("assistant", (TextPart(f"Continuing.\n\n`{token}`"),)))
    assert continuing.continued(key, "agent-a", said) == ("session-1", "/work/x")
    assert continuing.continued(key, "agent-b", said) is None, "another agent's session"
    assert continuing.continued(os.urandom(32), "agent-a", said) is None, "another backend's key"
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert continuing.decode(key, "agent-a", forged) is None
    assert continuing.continued(key, "agent-a", (Message("user", (TextPart(token),)),)) is None, "only an answer of ours names it"
