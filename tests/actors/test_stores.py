"""The backend's state on disk (actors/store/state.py, actors/store/catalog.py): the marker key and the
agents' catalog survive a restart, private (0600 in 0700), and a folder that cannot hold the key
costs only what it keeps."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from actors.store.catalog import AgentCatalog
from actors.store.state import load_secret
from protocol.acp.agent_options import model_values, read_choices
from protocol.acp.usage import TurnUsage

# What Claude Code's session/new offers, as far as the catalog keeps it: its models.
CLAUDE_NEW = {
    "sessionId": "s1",
    "configOptions": [
        {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "default", "options": [
            {"value": "default", "name": "Default (recommended)", "description": "Opus"},
            {"value": "sonnet", "name": "Sonnet 5.5"}, {"value": "haiku", "name": "Haiku 5.5"}]},
    ],
}


def test_the_catalog_survives_a_restart_and_keeps_no_definition(tmp_path: Path) -> None:
    key = os.urandom(32)
    path = tmp_path / "state" / "agents.sqlite3"
    definition = '{"mcp_server":{"command":"claude","env":[{"name":"ANTHROPIC_API_KEY","value":"sk-secret-value"}]}}'
    catalog = AgentCatalog(path, key)
    catalog.learn_session(definition, read_choices(CLAUDE_NEW), images=True)
    catalog.learn_usage(definition, "claude", TurnUsage(used=5612, size=1_000_000, sample=(1200, 600)))
    catalog.close()  # its writes land
    again = AgentCatalog(path, key).get(definition)
    assert [v.value for v in model_values(again.choices)] == ["sonnet", "haiku"]
    assert again.contexts == {"claude": 1_000_000} and again.bytes_per_token == 2.0
    assert again.images  # the picker lets an image through after a restart too
    assert b"sk-secret-value" not in path.read_bytes() and b"ANTHROPIC_API_KEY" not in path.read_bytes()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert AgentCatalog(path, os.urandom(32)).get(definition).choices == (), "another key finds nothing"


def test_an_agent_that_takes_no_images_is_remembered_as_such_and_an_unused_one_as_unknown(tmp_path: Path) -> None:
    """docs/DESIGN.md, "Images": the picker lets images through unless the agent said no."""
    path = tmp_path / "state" / "agents.sqlite3"
    key = os.urandom(32)
    catalog = AgentCatalog(path, key)
    catalog.learn_session("blind", (), images=False)
    catalog.learn_usage("unused-before", None, TurnUsage(used=10, size=1000))  # a loaded session: images not learned
    catalog.close()
    again = AgentCatalog(path, key)
    assert again.get("blind").images is False
    assert again.get("unused-before").images is None and again.get("never-seen").images is None


def test_the_secret_is_created_private_and_reused(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    key = load_secret(folder)
    assert stat.S_IMODE((folder / "marker-secret").stat().st_mode) == 0o600
    assert load_secret(folder) == key


def test_a_key_that_is_not_whole_is_replaced_and_the_log_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # An empty key would let anyone forge markers; a short one nearly so.
    for held in ("", "ab", "not hex at all", "ab" * 31):
        folder = tmp_path / str(len(held))
        folder.mkdir()
        (folder / "marker-secret").write_text(held)
        (folder / "marker-secret").chmod(0o600)
        caplog.clear()
        key = load_secret(folder)
        assert len(key) == 32 and (folder / "marker-secret").read_text() == key.hex()
        assert "making a new one" in caplog.text
        assert load_secret(folder) == key


def test_a_key_others_could_read_is_replaced_by_a_private_one(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    exposed = os.urandom(32)
    (folder / "marker-secret").write_text(exposed.hex())
    (folder / "marker-secret").chmod(0o644)
    key = load_secret(folder)
    assert key != exposed and (folder / "marker-secret").read_text() == key.hex()
    assert stat.S_IMODE((folder / "marker-secret").stat().st_mode) == 0o600
    assert "others may know it: making a new one" in caplog.text
    assert sorted(p.name for p in folder.iterdir()) == ["marker-secret"]  # nothing left beside it
    assert load_secret(folder) == key


def test_a_folder_that_cannot_hold_the_key_still_gives_one(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for folder in (blocker, blocker / "state"):
        assert len(load_secret(folder)) == 32
    assert "chats will not continue after this backend exits" in caplog.text


def test_the_agents_commands_survive_a_restart_as_last_announced(tmp_path: Path) -> None:
    """docs/usage.md, "The agent's commands": Symposium: Agent Commands lists them before the agent runs again."""
    from protocol.acp.commands import read_commands

    path = tmp_path / "state" / "agents.sqlite3"
    key = os.urandom(32)
    catalog = AgentCatalog(path, key)
    first = read_commands({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "compact", "description": "Compact"}, {"name": "greet"}]})
    later = read_commands({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "greet", "description": "Greets", "input": {"hint": "whom"}}]})
    assert first is not None and later is not None
    catalog.learn_commands("claude", first)
    catalog.learn_commands("claude", later)  # the agent's list changed: the newest holds
    catalog.close()
    assert [(c.name, c.description, c.hint) for c in AgentCatalog(path, key).get("claude").commands] == [("greet", "Greets", "whom")]


def test_a_models_own_options_survive_a_restart_for_the_models_the_agent_offers_only(tmp_path: Path) -> None:
    """Codex offers efforts per model: what a session offered once set to a model is that model's entry's."""
    path = tmp_path / "state" / "agents.sqlite3"
    key = os.urandom(32)
    effort = {"id": "effort", "name": "Effort", "category": "thought_level", "type": "select", "currentValue": "medium",
              "options": [{"value": "medium", "name": "Medium"}, {"value": "high", "name": "High"}]}
    on_sonnet = read_choices({**CLAUDE_NEW, "configOptions": [*CLAUDE_NEW["configOptions"], effort]})
    catalog = AgentCatalog(path, key)
    catalog.learn_session("claude", read_choices(CLAUDE_NEW), images=True)
    catalog.learn_model("claude", "sonnet", on_sonnet)
    catalog.learn_model("claude", "opus-9", on_sonnet)  # not a model it offers: kept nowhere
    catalog.close()
    again = AgentCatalog(path, key).get("claude")
    assert again.choices_for("sonnet") == on_sonnet and set(again.model_choices) == {"sonnet"}
    assert again.choices_for("haiku") == again.choices_for(None) == read_choices(CLAUDE_NEW), "a model never run offers what a new session does"
