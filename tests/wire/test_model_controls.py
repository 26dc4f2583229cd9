"""The agent's options as its models' own controls, over the real wire (docs/usage.md, "The agent's
own choices"): once the agent has started, its models carry a `configurationSchema`; a choice VS Code
sends as `modelConfiguration` reaches the agent's session before the prompt, once; the agent's own
change of mode stands. Against `tests/support/legacy_options_agent.py` (Gemini CLI's shape: `modes`,
`models`), through `acp_tee.py` to see what reached it. With Claude Code and Codex in the real view:
extension/src/test/agentView.ts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from symposium.client import BackendClient, ChatResult, process_agent, user
from tests.conftest import SUPPORT, Tap

GUARD = 30


def answered(result: ChatResult) -> str:
    assert result.error is None, result.error and (result.error.message, result.error.data)
    return result.text()


async def test_a_mode_chosen_in_the_models_control_reaches_the_session_once_and_the_agents_own_change_stands(backend: BackendClient, tmp_path: Path) -> None:
    log = tmp_path / "acp.jsonl"
    agent = process_agent("legacy", sys.executable, [str(SUPPORT / "acp_tee.py"), str(log), "--", sys.executable, str(SUPPORT / "legacy_options_agent.py")])
    tap = Tap(log)
    entries = [{"id": "legacy", "name": "Legacy", "agent": agent, "options": {"model": "gemini-pro"}}]
    with trio.fail_after(GUARD):
        assert all("configurationSchema" not in m for m in await backend.models(entries)), "nothing known before the agent started"
        first = await backend.chat([user("hello")], agent=agent, model_id="legacy")
        assert answered(first) == "[default · gemini-flash] echo: hello"
        await backend.models_changed()
        models = {m["id"]: m for m in await backend.models(entries)}
        schema = models["legacy"]["configurationSchema"]
        assert models["legacy/gemini-pro"]["configurationSchema"] == schema, "every model of the agent has the controls"
        assert list(schema["properties"]) == ["mode"], "the model is an entry, not a property"
        mode = schema["properties"]["mode"]
        assert (mode["group"], mode["default"], mode["enum"]) == ("navigation", "default", ["default", "plan", "yolo"])
        assert mode["enumItemLabels"] == ["Default", "Plan", "YOLO (bypasses permissions)"]

        # A new chat, Plan chosen (VS Code sends every property, defaults filled in).
        messages = [user("make a plan")]
        planned = await backend.chat(messages, agent=agent, model_id="legacy", model_configuration={"mode": "plan"})
        assert answered(planned) == "[plan · gemini-flash] echo: make a plan"
        messages += [planned.assistant_message(), user("leave plan mode")]
        left = await backend.chat(messages, agent=agent, model_id="legacy", model_configuration={"mode": "plan"})
        assert answered(left) == "[default · gemini-flash] echo: leave plan mode"
        messages += [left.assistant_message(), user("go on")]
        after = await backend.chat(messages, agent=agent, model_id="legacy", model_configuration={"mode": "plan"})
        assert answered(after) == "[default · gemini-flash] echo: go on", "the agent's own change of mode is not undone"
        messages += [after.assistant_message(), user("back to the default")]
        back = await backend.chat(messages, agent=agent, model_id="legacy", model_configuration={"mode": "default"})
        assert answered(back) == "[default · gemini-flash] echo: back to the default"
        messages += [back.assistant_message(), user("plan again")]
        again = await backend.chat(messages, agent=agent, model_id="legacy", model_configuration={"mode": "plan"})
        assert answered(again) == "[plan · gemini-flash] echo: plan again", "choosing again sets it again"
    assert [m["params"]["modeId"] for m in tap.requests("session/set_mode")] == ["plan", "plan"]
    assert tap.requests("session/set_model") == [], "the plain entry asks for no model"


async def test_the_settings_are_the_default_and_a_choice_in_the_controls_wins(backend: BackendClient, tmp_path: Path) -> None:
    log = tmp_path / "acp.jsonl"
    agent = process_agent("legacy", sys.executable, [str(SUPPORT / "acp_tee.py"), str(log), "--", sys.executable, str(SUPPORT / "legacy_options_agent.py")])
    entries = [{"id": "legacy", "name": "Legacy", "agent": agent, "options": {"mode": "plan"}}]
    with trio.fail_after(GUARD):
        answered(await backend.chat([user("start")], agent=agent, model_id="legacy"))
        await backend.models_changed()
        [model] = [m for m in await backend.models(entries) if m["id"] == "legacy"]
        assert model["configurationSchema"]["properties"]["mode"]["default"] == "plan", "the settings' value is what the control shows"
        kept = await backend.chat([user("one")], agent=agent, model_id="legacy", agent_options={"mode": "plan"}, model_configuration={"mode": "plan"})
        assert answered(kept) == "[plan · gemini-flash] echo: one"
        chosen = await backend.chat([user("two")], agent=agent, model_id="legacy", agent_options={"mode": "plan"}, model_configuration={"mode": "default"})
        assert answered(chosen) == "[default · gemini-flash] echo: two", "the control's choice wins over the settings"
