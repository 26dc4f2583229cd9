"""The agent's own choices through `symposium vscodelm`, over the real wire, with real agents offline.

Claude Code and Codex (their real ACP adapters, their model APIs faked: tests/support/claude.py,
tests/support/codex.py) and an agent with only the older `modes`/`models` (tests/support/legacy_options_agent.py,
as Gemini CLI has): the model entries VS Code lists once an agent has been used, and after a
restart; a chosen model and a mode from the settings reaching the model API; token counts
calibrated by the agent's usage; an agent's own session, started outside VS Code, continued.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import trio
from acp import schema

from protocol.vscode.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, ELIZA, BackendClient, ChatResult, process_agent, tool_result, user
from tests.conftest import SUPPORT, Tap
from tests.support.acp_direct import run_outside
from tests.support.acp_validate import validate_payload
from tests.support.claude import ClaudeCode
from tests.support.codex import Codex, planning
from tests.support.fake_anthropic import reply as claude_reply
from tests.support.fake_anthropic import text as claude_text
from tests.support.fake_openai import reply as codex_reply
from tests.support.fake_openai import text as codex_text

GUARD = 60  # a hang guard, not a timing budget: the tests wait on events


def entry(id: str, name: str, agent: dict[str, Any]) -> dict[str, Any]:
    return {"id": id, "name": name, "agent": agent}


def ids(models: list[dict[str, Any]]) -> list[str]:
    return [m["id"] for m in models]


def answered(result: ChatResult) -> str:
    assert result.error is None, result.error and (result.error.message, result.error.data)
    assert result.completed
    return result.text()


# Model entries ---------------------------------------------------------------------------------


async def test_claude_models_are_listed_after_first_use_and_after_a_restart(claude: ClaudeCode) -> None:
    agents = [entry("claude", "Claude Code", claude.agent)]
    claude.api.script(claude_reply(claude_text("Hello.")))
    async with BackendClient.spawn() as backend:
        assert ids(await backend.models(agents)) == ["symposium-eliza", "claude"], "nothing known before its first session"
        with trio.fail_after(GUARD):
            answered(await backend.chat([user("Hello")], agent=claude.agent, cwd=str(claude.cwd), model_id="claude"))
            await backend.models_changed()  # VS Code is told to ask again
        models = await backend.models(agents)
    names = {m["id"]: m["name"] for m in models}
    assert names["claude"] == "Claude Code (ACP)"
    assert names["claude/sonnet"] == "Claude Code · Sonnet 5.5"
    assert names["claude/haiku"] == "Claude Code · Haiku 5.5"
    assert names["claude/opus"] == "Claude Code · Opus 5.5"
    assert "claude/default" not in names, "the agent's default model is its plain entry"
    assert {m["maxInputTokens"] for m in models if m["id"] == "claude"} == {1_000_000}, "the context window Claude Code reported"
    started = len(claude.agent_pids())

    async with BackendClient.spawn() as restarted:
        again = await restarted.models(agents)
    assert ids(again) == ids(models), "remembered across a restart"
    assert len(claude.agent_pids()) == started, "listing them did not start the agent"


async def test_codex_models_are_listed_after_first_use(backend: BackendClient, codex: Codex) -> None:
    agents = [entry("codex", "Codex", codex.agent)]
    codex.api.script(codex_reply(codex_text("Hello.")))
    with trio.fail_after(GUARD):
        answered(await backend.chat([user("Hello")], agent=codex.agent, cwd=str(codex.cwd), model_id="codex"))
        await backend.models_changed()
    names = {m["id"]: m["name"] for m in await backend.models(agents)}
    assert names["codex/gpt-5.5"] == "Codex · GPT-5.5"
    assert names["codex/gpt-5.4-mini"] == "Codex · gpt-5.4-mini"  # the configured model, outside its list: named by its id


# Choosing a model, setting a mode --------------------------------------------------------------


async def test_a_chosen_claude_model_reaches_the_model_api_and_a_switch_keeps_the_session(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(claude_reply(claude_text("One.")), claude_reply(claude_text("Two.")), claude_reply(claude_text("Three.")))
    history = [user("First")]
    with trio.fail_after(GUARD):
        first = await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd), model_id="claude/sonnet", agent_options={"model": "sonnet"})
        answered(first)
        history += [first.assistant_message(), user("Second")]
        second = await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd), model_id="claude/haiku", agent_options={"model": "haiku"})
        answered(second)
        history += [second.assistant_message(), user("Third")]
        answered(await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd), model_id="claude"))
    models = [r.body["model"] for r in claude.api.main]
    assert "sonnet" in models[0] and "haiku" in models[1], models
    assert "opus" in models[2], f"the plain entry is the agent's default model again: {models}"
    assert len(claude.requests("session/new")) == 1, "one session throughout"
    sets = [m["params"] for m in claude.requests("session/set_config_option")]
    assert [(p["configId"], p["value"]) for p in sets] == [("model", "sonnet"), ("model", "haiku"), ("model", "default")]
    for params in sets:
        validate_payload(schema.SetSessionConfigOptionSelectRequest, params, "session/set_config_option")


async def test_a_chosen_codex_model_reaches_the_model_api(backend: BackendClient, codex: Codex) -> None:
    codex.api.script(codex_reply(codex_text("One.")))
    with trio.fail_after(GUARD):
        answered(await backend.chat([user("Hi")], agent=codex.agent, cwd=str(codex.cwd), model_id="codex/gpt-5.5", agent_options={"model": "gpt-5.5"}))
    assert [r.body["model"] for r in codex.api.main] == ["gpt-5.5"]


async def test_a_mode_from_the_settings_reaches_claude(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(claude_reply(claude_text("Here is my plan.")))
    with trio.fail_after(GUARD):
        answered(await backend.chat([user("Refactor it")], agent=claude.agent, cwd=str(claude.cwd), model_id="claude", agent_options={"mode": "plan"}))
    [request] = claude.api.main
    assert "Plan mode is active" in json.dumps(request.body), "Claude Code told its model it is planning"


async def test_a_mode_and_an_effort_from_the_settings_reach_codex(backend: BackendClient, codex: Codex) -> None:
    codex.api.script(codex_reply(codex_text("Read only.")))
    with trio.fail_after(GUARD):
        answered(await backend.chat([user("Look")], agent=codex.agent, cwd=str(codex.cwd),
                                    agent_options={"mode": "read-only", "model": "gpt-5.5", "effort": "high"}))
    [request] = codex.api.main
    assert "`sandbox_mode` is `read-only`" in json.dumps(request.body)
    # Codex offers efforts for the models of its own list (the configured gpt-5.4-mini is not among them).
    assert request.body["model"] == "gpt-5.5" and request.body["reasoning"]["effort"] == "high"


async def test_choices_in_the_models_controls_reach_claude_once(backend: BackendClient, claude: ClaudeCode) -> None:
    """docs/usage.md, "The agent's own choices": Plan and an effort chosen in VS Code's controls
    (`modelConfiguration`, every property, defaults filled in) are set before the prompt, once."""
    agents = [entry("claude", "Claude Code", claude.agent)]
    claude.api.script(claude_reply(claude_text("One.")), claude_reply(claude_text("Two.")), claude_reply(claude_text("Three.")))
    chosen = {"mode": "plan", "effort": "high", "fast": "off", "ultracode": "off"}
    history = [user("First")]
    with trio.fail_after(GUARD):
        first = await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd), model_id="claude")
        answered(first)
        await backend.models_changed()
        [model] = [m for m in await backend.models(agents) if m["id"] == "claude"]
        properties = model["configurationSchema"]["properties"]
        assert properties["mode"]["group"] == "navigation" and "model" not in properties
        history += [first.assistant_message(), user("Second")]
        second = await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd), model_id="claude", model_configuration=chosen)
        answered(second)
        history += [second.assistant_message(), user("Third")]
        answered(await backend.chat(history, agent=claude.agent, cwd=str(claude.cwd), model_id="claude", model_configuration=chosen))
    planned = claude.api.main[1]
    assert "Plan mode is active" in json.dumps(planned.body["messages"]) and planned.body["output_config"]["effort"] == "high"
    assert claude.api.main[2].body["output_config"]["effort"] == "high"
    sets = [(m["params"]["configId"], m["params"]["value"]) for m in claude.requests("session/set_config_option")]
    assert sorted(sets) == [("effort", "high"), ("mode", "plan")], f"set once, the defaults not at all: {sets}"


async def test_a_model_the_agent_does_not_offer_fails_the_request_saying_so(backend: BackendClient, claude: ClaudeCode) -> None:
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hi")], agent=claude.agent, cwd=str(claude.cwd), model_id="claude/gone", agent_options={"model": "gone"})
    assert result.error is not None and "'gone'" in result.error.message and "sonnet" in result.error.message
    assert claude.api.main == [], "nothing was prompted"


async def test_the_options_offered_are_listed_with_the_modes_that_bypass_permissions_marked(backend: BackendClient, claude: ClaudeCode) -> None:
    assert (await backend.agent_options(claude.agent))["known"] is False
    claude.api.script(claude_reply(claude_text("Hi.")))
    with trio.fail_after(GUARD):
        answered(await backend.chat([user("Hi")], agent=claude.agent, cwd=str(claude.cwd)))
    options = {o["id"]: o for o in (await backend.agent_options(claude.agent))["options"]}
    assert options["mode"]["category"] == "mode" and options["effort"]["category"] == "thought_level"
    bypassing = [v["value"] for v in options["mode"]["values"] if v["bypassesPermissions"]]
    assert bypassing == ["bypassPermissions"]
    assert options["mode"]["current"] == "default"


async def test_an_agent_with_only_modes_and_models_gets_them_set_the_older_way(backend: BackendClient, tmp_path: Path) -> None:
    log = tmp_path / "acp.jsonl"
    agent = process_agent("legacy", sys.executable, [str(SUPPORT / "acp_tee.py"), str(log), "--", sys.executable, str(SUPPORT / "legacy_options_agent.py")])
    tap = Tap(log)
    agents = [entry("legacy", "Legacy", agent)]
    with trio.fail_after(GUARD):
        first = await backend.chat([user("hello")], agent=agent, model_id="legacy/gemini-pro", agent_options={"model": "gemini-pro", "mode": "plan"})
        assert answered(first) == "[plan · gemini-pro] echo: hello"
        await backend.models_changed()
        names = {m["id"]: m["name"] for m in await backend.models(agents)}
        assert names["legacy/gemini-pro"] == "Legacy · Gemini Pro" and names["legacy/gemini-flash"] == "Legacy · Gemini Flash"
        second = await backend.chat([user("hello"), first.assistant_message(), user("again")], agent=agent, model_id="legacy")
        assert answered(second) == "[default · gemini-flash] echo: again", "the plain entry is the agent's defaults again"
    assert len(tap.requests("session/new")) == 1
    assert tap.requests("session/set_config_option") == []
    assert [m["params"]["modelId"] for m in tap.requests("session/set_model")] == ["gemini-pro", "gemini-flash"]


async def test_an_agent_without_choices_behaves_as_before(backend: BackendClient, tap: Tap) -> None:
    agents = [entry("eliza-tap", "Eliza", tap.agent)]
    before = await backend.models(agents)
    with trio.fail_after(GUARD):
        plain = await backend.chat([user("Hello")], agent=tap.agent, model_id="eliza-tap")
        asked = await backend.chat([user("Hello")], agent=tap.agent, model_id="eliza-tap", agent_options={"mode": "plan"})
    assert answered(plain) == answered(asked) == "How do you do. Please state your problem."
    # Its models are the same ones; only what a session taught is new (Eliza takes no images).
    after = await backend.models(agents)
    assert [m["capabilities"].pop("imageInput") for m in (*before, *after) if m["id"] == "eliza-tap"] == [True, False]
    assert after == before
    assert not [m for m in tap.messages("c2a") if m.get("method", "").startswith("session/set_")]
    assert bytes_per_token(after, "eliza-tap") == 4, "it reports no usage: VS Code counts four bytes a token"


# Usage --------------------------------------------------------------------------------------------
#
# VS Code asks token counts of the extension, which answers them itself (extension/src/provider.ts): a text's
# UTF-8 bytes over the `bytesPerToken` of the model entry, as `lm/models` last listed it (4 without one;
# extension/src/convert.ts, tested in extension/src/test/unit/). So what the backend owes it is that number,
# learned from what the agent reports, and an `lm/modelsChanged` when it moves: VS Code then lists the models
# again. The tests below read them as the extension does, and script an agent whose tokens are twice as dense
# as the default's (2 bytes a token, where 4 is assumed), so the counts VS Code gets must double, give or take.


def bytes_per_token(models: list[dict[str, Any]], model_id: str) -> float:
    """What the extension divides a text's bytes by for `model_id`: the entry's `bytesPerToken`, 4 without one."""
    return next(m for m in models if m["id"] == model_id).get("bytesPerToken") or 4


async def test_token_counts_follow_claude_codes_usage(backend: BackendClient, claude: ClaudeCode) -> None:
    agents = [entry("claude", "Claude Code", claude.agent)]
    assert bytes_per_token(await backend.models(agents), "claude") == 4, "four bytes a token until the agent says otherwise"
    # The second turn (a 1,200-byte prompt) grows the context the agent reports by 600 tokens.
    claude.api.script(claude_reply(claude_text("Noted."), usage=(5000, 10)), claude_reply(claude_text("Done."), usage=(5600, 10)))
    long_prompt = "word " * 240
    with trio.fail_after(GUARD):
        first = await backend.chat([user("Hello")], agent=claude.agent, cwd=str(claude.cwd), model_id="claude")
        answered(first)
        second = await backend.chat([user("Hello"), first.assistant_message(), user(long_prompt)], agent=claude.agent, cwd=str(claude.cwd), model_id="claude")
        answered(second)
        await backend.models_changed()  # the extension is told, and lists the models again
    listed = await backend.models(agents)
    ratio = bytes_per_token(listed, "claude")
    assert 1.8 <= ratio <= 2.2, f"about the 2 bytes a token Claude Code's usage showed: {ratio}"
    assert bytes_per_token(listed, "claude/sonnet") == ratio, "every model entry of the agent counts alike"


async def test_token_counts_follow_codexs_usage(backend: BackendClient, codex: Codex) -> None:
    agents = [entry("codex", "Codex", codex.agent)]
    assert bytes_per_token(await backend.models(agents), "codex") == 4
    # The second turn (a 1,200-byte prompt) grows the context Codex reports by 600 tokens.
    codex.api.script(codex_reply(codex_text("Noted."), usage=(5000, 10)), codex_reply(codex_text("Done."), usage=(5600, 10)))
    long_prompt = "word " * 240
    with trio.fail_after(GUARD):
        first = await backend.chat([user("Hello")], agent=codex.agent, cwd=str(codex.cwd), model_id="codex")
        answered(first)
        second = await backend.chat([user("Hello"), first.assistant_message(), user(long_prompt)], agent=codex.agent, cwd=str(codex.cwd), model_id="codex")
        answered(second)
        await backend.models_changed()
    ratio = bytes_per_token(await backend.models(agents), "codex")
    assert 1.8 <= ratio <= 2.2, f"about the 2 bytes a token Codex's usage showed: {ratio}"


# Earlier sessions ----------------------------------------------------------------------------------


def continuing(title: str, token: str) -> list[dict[str, Any]]:
    """The opening exchange of a chat opened by "Continue an Agent Session" (extension/src/continue.ts)."""
    return [user(f"Continue the session “{title}”"), {"role": "assistant", "content": [{"type": "text", "value": f"Continuing it here.\n\n`{token}`"}]}]


async def test_a_claude_code_session_started_outside_vs_code_is_continued(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(claude_reply(claude_text("I will remember 42.")), claude_reply(claude_text("You said 42.")))
    with trio.fail_after(GUARD):
        outside = await run_outside(claude.agent, str(claude.cwd), ["Remember the number 42"])
    mark = len(claude.messages())
    with trio.fail_after(GUARD):
        listing = await backend.list_sessions(claude.agent, cwd=str(claude.cwd))
        assert listing["supported"] is True
        [session] = [s for s in listing["sessions"] if s["sessionId"] == outside]
        assert session["title"] and session["updatedAt"] and session["cwd"] == str(claude.cwd)
        result = await backend.chat([*continuing(session["title"], session["token"]), user("What number did I say?")], agent=claude.agent, cwd=str(claude.cwd))
    assert answered(result) == "You said 42."
    sent = [m for m in claude.messages()[mark:] if "method" in m]
    # Claude Code declares session/fork: the chat goes on in a fork of the whole session, and the
    # session itself stays as the user left it (docs/DESIGN.md, "Forks").
    [fork] = [m for m in sent if m["method"] == "session/fork"]
    assert fork["params"]["sessionId"] == outside and "jetbrains" not in fork["params"]["_meta"]
    for method, model in (("session/list", schema.ListSessionsRequest), ("session/fork", schema.ForkSessionRequest)):
        for message in (m for m in sent if m["method"] == method):
            validate_payload(model, message["params"], method)
    assert not [m for m in sent if m["method"] in ("session/new", "session/resume")]
    last = claude.api.main[-1]
    assert last.user_texts()[0] == "Remember the number 42" and last.user_texts()[-1] == "What number did I say?"
    assert not any("Continue the session" in t for t in last.user_texts()), "the opening exchange is not sent to the agent"


async def test_a_continued_claude_code_session_whose_first_question_is_edited_is_answered_from_the_session_as_it_was(backend: BackendClient, claude: ClaudeCode) -> None:
    """docs/DESIGN.md, "Forks": the edited question goes on in a fork of the agent's own session, which
    holds its history and nothing of the question the edit replaced; the first chat goes on too."""
    claude.api.script(
        claude_reply(claude_text("I will remember 42.")),
        claude_reply(claude_text("You said 42.")),
        claude_reply(claude_text("Doubled: 84."), answers="What is it doubled?"),
        claude_reply(claude_text("Still 42."), answers="And again?"),
    )
    with trio.fail_after(GUARD):
        outside = await run_outside(claude.agent, str(claude.cwd), ["Remember the number 42"])
        [session] = [s for s in (await backend.list_sessions(claude.agent, cwd=str(claude.cwd)))["sessions"] if s["sessionId"] == outside]
        opening = continuing(session["title"], session["token"])
        first = await backend.chat([*opening, user("What number did I say?")], agent=claude.agent, cwd=str(claude.cwd))
        assert answered(first) == "You said 42."
        edited = await backend.chat([*opening, user("What is it doubled?")], agent=claude.agent, cwd=str(claude.cwd))
        again = await backend.chat([*opening, user("What number did I say?"), first.assistant_message(), user("And again?")], agent=claude.agent, cwd=str(claude.cwd))
    assert edited.error is None, edited.error
    assert answered(edited) == "Doubled: 84."
    at_edit = next(r for r in claude.api.main if "What is it doubled?" in r.user_texts())
    assert "Remember the number 42" in at_edit.user_texts() and "What number did I say?" not in at_edit.user_texts()
    assert answered(again) == "Still 42."
    forks = claude.requests("session/fork")
    assert [f["params"]["sessionId"] for f in forks] == [outside, outside]
    first_session, edited_session = (p["params"]["sessionId"] for p in claude.requests("session/prompt")[-3:-1])
    assert len({outside, first_session, edited_session}) == 3
    assert claude.requests("session/prompt")[-1]["params"]["sessionId"] == first_session


async def test_a_codex_session_started_outside_vs_code_is_continued(backend: BackendClient, codex: Codex) -> None:
    codex.api.script(codex_reply(codex_text("I will remember 42.")), codex_reply(codex_text("You said 42.")))
    with trio.fail_after(GUARD):
        outside = await run_outside(codex.agent, str(codex.cwd), ["Remember the number 42"])
        listing = await backend.list_sessions(codex.agent, cwd=str(codex.cwd))
        [session] = [s for s in listing["sessions"] if s["sessionId"] == outside]
        result = await backend.chat([*continuing(session["title"] or "", session["token"]), user("What number did I say?")], agent=codex.agent, cwd=str(codex.cwd))
    assert answered(result) == "You said 42."
    last = codex.api.main[-1]
    assert "Remember the number 42" in last.user_texts() and last.user_texts()[-1] == "What number did I say?"


async def test_a_token_for_another_agent_or_a_forged_one_continues_nothing(backend: BackendClient, claude: ClaudeCode, tap: Tap) -> None:
    claude.api.script(claude_reply(claude_text("Noted.")), claude_reply(claude_text("New here.")))
    with trio.fail_after(GUARD):
        outside = await run_outside(claude.agent, str(claude.cwd), ["Remember the number 42"])
        [session] = [s for s in (await backend.list_sessions(claude.agent, cwd=str(claude.cwd)))["sessions"] if s["sessionId"] == outside]
        forged = session["token"][:-3] + ("AAA" if not session["token"].endswith("AAA") else "BBB")
        result = await backend.chat([*continuing("x", forged), user("Hello")], agent=claude.agent, cwd=str(claude.cwd))
        elsewhere = await backend.chat([*continuing("x", session["token"]), user("Hello")], agent=tap.agent)
    assert answered(result) == "New here."
    assert "Remember the number 42" not in claude.api.main[-1].user_texts()
    assert not claude.requests("session/resume")
    assert answered(elsewhere) and not tap.requests("session/resume") and not tap.requests("session/load")


async def test_an_agent_that_cannot_list_its_sessions_says_so(backend: BackendClient, tap: Tap) -> None:
    listing = await backend.list_sessions(tap.agent)
    assert listing["supported"] is False and "cannot" in listing["reason"]
    assert (await backend.list_sessions(ELIZA))["supported"] is False



async def test_codexs_own_change_of_collaboration_mode_stands(backend: BackendClient, codex: Codex) -> None:
    """docs/usage.md, "The agent's own choices": Plan chosen in VS Code reaches Codex; once its plan is
    approved Codex leaves Plan by itself, and the next request does not set it back."""
    agents = [entry("codex", "Codex", codex.agent)]
    codex.api.script(
        codex_reply(codex_text("Started.")),
        codex_reply(codex_text("<proposed_plan>\n1. Rename the function.\n</proposed_plan>")),
        codex_reply(codex_text("Implemented.")),
        codex_reply(codex_text("Done.")),
    )
    tools = [AGENT_ACTION_TOOL_DEF]
    history = [user("Start")]
    with trio.fail_after(GUARD):
        first = await backend.chat(history, agent=codex.agent, cwd=str(codex.cwd), model_id="codex", tools=tools)
        answered(first)
        await backend.models_changed()
        [model] = [m for m in await backend.models(agents) if m["id"] == "codex"]
        collaboration = model["configurationSchema"]["properties"]["collaboration_mode"]
        assert collaboration["enum"] == ["default", "plan"] and collaboration["default"] == "default"
        chosen = {"collaboration_mode": "plan"}
        history += [first.assistant_message(), user("Plan the rename")]
        ask = await backend.chat(history, agent=codex.agent, cwd=str(codex.cwd), model_id="codex", tools=tools, model_configuration=chosen)
        [call] = ask.tool_calls()
        history += [ask.assistant_message(), tool_result(call["toolCallId"], AGENT_ACTION_APPROVED)]
        implemented = await backend.chat(history, agent=codex.agent, cwd=str(codex.cwd), model_id="codex", tools=tools, model_configuration=chosen)
        assert "Implemented." in answered(implemented)
        history += [implemented.assistant_message(), user("Anything else?")]
        answered(await backend.chat(history, agent=codex.agent, cwd=str(codex.cwd), model_id="codex", tools=tools, model_configuration=chosen))
    planned, after_approval, next_turn = codex.api.main[1:]
    assert planning(planned.body), "Plan reached Codex before the prompt"
    assert not planning(after_approval.body) and not planning(next_turn.body), "its own change stood"
    sets = [(m["params"]["configId"], m["params"]["value"]) for m in codex.requests("session/set_config_option")]
    assert sets == [("collaboration_mode", "plan")], f"set once: {sets}"


async def test_a_codex_models_own_efforts_are_its_entrys_controls(backend: BackendClient, codex: Codex) -> None:
    """Codex offers efforts only for the models of its own list: once a session has run on GPT-5.5,
    that model's entry offers GPT-5.5's efforts (the agent's own entry, on its configured model, none),
    and an effort chosen there reaches Codex's model, set after the model."""
    agents = [entry("codex", "Codex", codex.agent)]
    codex.api.script(codex_reply(codex_text("One.")), codex_reply(codex_text("Two.")), codex_reply(codex_text("Three.")))
    on_gpt55 = {"model_id": "codex/gpt-5.5", "agent_options": {"model": "gpt-5.5"}}
    history = [user("Hi")]
    with trio.fail_after(GUARD):
        first = await backend.chat(history, agent=codex.agent, cwd=str(codex.cwd), **on_gpt55)
        answered(first)
        await backend.models_changed()
        schemas = {m["id"]: m.get("configurationSchema") or {} for m in await backend.models(agents)}
        effort = schemas["codex/gpt-5.5"]["properties"]["reasoning_effort"]
        assert "high" in effort["enum"] and effort["default"] != "high" and "group" not in effort, effort
        assert "reasoning_effort" not in schemas["codex"]["properties"], "its configured model has no efforts to offer"
        history += [first.assistant_message(), user("Think hard")]
        answered(await backend.chat(history, agent=codex.agent, cwd=str(codex.cwd), model_configuration={"reasoning_effort": "high"}, **on_gpt55))
    assert [(r.body["model"], (r.body.get("reasoning") or {}).get("effort")) for r in codex.api.main][1] == ("gpt-5.5", "high")
