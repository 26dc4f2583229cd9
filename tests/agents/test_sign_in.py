"""Real agents' sign-ins through `symposium vscodelm` (docs/DESIGN.md, "Sign-in"), offline.

- Codex (the catalogue's adapter) declares an `api-key` method (its variables named by the extension's
  catalogue overrides) and opens no session until `authenticate` is called with it: with OPENAI_API_KEY
  in its `env` (and no custom provider: OpenAI's own, pointed at a fake by `openai_base_url`) the first
  chat is answered.
- Claude Code's adapter offers its terminal log-ins to a client declaring `auth.terminal`: with no
  credentials (an empty home, no ANTHROPIC_API_KEY) the first chat fails `auth_required`, offering
  them with the command to run.
- Gemini CLI (when `scripts/install-agents.sh gemini` could install it) opens its session with
  GEMINI_API_KEY in its `env`, and without one fails `auth_required` offering its methods.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from symposium.client import BackendClient, process_agent, user
from tests.support import catalogue_agents
from tests.support.claude import claude_env, installed_claude
from tests.support.codex import MODEL, installed_codex
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_openai import FakeOpenAI, reply, text
from tests.support.real_agent import GUARD

TEE = str(Path(__file__).parents[1] / "support" / "acp_tee.py")
OPENAI_KEY = "sk-proj-fake-openai-key-for-sign-in"


def installed_gemini() -> tuple[str, str] | str:
    """(node, Gemini CLI's script) as Add Agent installs the catalogue's; its `--acp` is this test's to give."""
    found = catalogue_agents.installed("gemini")
    return found if isinstance(found, str) else (found.command()[0], found.command()[1])


def found(installed: Any) -> tuple[str, str]:
    where = installed()
    if isinstance(where, str):
        pytest.skip(where)
    return where


def acp_log(path: Path) -> list[dict[str, Any]]:
    """What the agent was sent and answered (`tests/support/acp_tee.py`'s records)."""
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def sent(path: Path, method: str) -> list[dict[str, Any]]:
    return [r["msg"] for r in acp_log(path) if isinstance(r.get("msg"), dict) and r["msg"].get("method") == method and r.get("dir") == "c2a"]


async def test_codex_with_openai_api_key_in_its_env_signs_in_and_answers(backend: BackendClient, nursery: trio.Nursery, tmp_path: Path) -> None:
    node, entry = found(installed_codex)
    api = FakeOpenAI()
    await nursery.start(api.serve)
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    # OpenAI's own provider (no `model_provider`), its base URL the fake's.
    (codex_home / "config.toml").write_text(f'model = "{MODEL}"\nopenai_base_url = "{api.url}/v1"\n')
    (tmp_path / "home").mkdir()
    log = tmp_path / "acp.jsonl"
    env = {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(codex_home), "OPENAI_API_KEY": OPENAI_KEY, "RUST_LOG": "error"}
    agent = process_agent("codex", sys.executable, [TEE, str(log), "--", node, entry], env=env)
    api.script(reply(text("Signed in ", "and answering.")))
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Say hello")], agent=agent, cwd=str(tmp_path))
    assert [m["params"] for m in sent(log, "authenticate")] == [{"methodId": "api-key"}]
    assert result.error is None, (result.error.message, result.error.data) if result.error else None
    # (OpenAI's own provider tries WebSockets first, which the fake does not speak: Codex says so.)
    assert result.text().endswith("Signed in and answering.")
    [request] = [r for r in api.requests if r.method == "POST" and r.path.endswith("/responses")]
    assert request.headers.get("authorization") == f"Bearer {OPENAI_KEY}"


async def test_codex_without_a_key_offers_its_sign_in_and_names_its_variables(backend: BackendClient, tmp_path: Path) -> None:
    node, entry = found(installed_codex)
    (tmp_path / "home").mkdir()
    (tmp_path / "codex-home").mkdir()
    env = {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex-home"), "OPENAI_API_KEY": "", "CODEX_API_KEY": "", "RUST_LOG": "error"}
    agent = process_agent("Codex", sys.executable, [TEE, str(tmp_path / "acp.jsonl"), "--", node, entry], env=env)
    with trio.fail_after(GUARD):
        failed = await backend.chat([user("Say hello")], agent=agent, cwd=str(tmp_path))
    error = failed.error
    assert error is not None and error.data["kind"] == "auth_required", failed
    assert error.message.startswith("Codex needs you to sign in: sign in with API Key or ChatGPT"), error.message
    assert [(m["id"], m["kind"]) for m in error.data["methods"]] == [("api-key", "agent"), ("chat-gpt", "agent")]
    # Its API key method names no variable; the extension's catalogue overrides do (extension/catalogue/overrides.json),
    # so the Sign in box asks for CODEX_API_KEY, and a key already in OPENAI_API_KEY counts too.
    [key] = [m for m in error.data["methods"] if m["id"] == "api-key"]
    assert key["vars"] == ["CODEX_API_KEY", "OPENAI_API_KEY"] and key["askFor"] == ["CODEX_API_KEY"]


async def test_claude_code_without_credentials_offers_its_terminal_log_in(backend: BackendClient, nursery: trio.Nursery, tmp_path: Path) -> None:
    node, entry = found(installed_claude)
    api = FakeAnthropic()
    await nursery.start(api.serve)
    home = tmp_path / "home"
    home.mkdir()
    env = claude_env(api.url, home)
    env["ANTHROPIC_API_KEY"] = ""  # nothing to sign in with: no key, an empty home
    log = tmp_path / "acp.jsonl"
    args = [TEE, str(log), "--", node, entry]
    agent = process_agent("Claude Code", sys.executable, args, env=env)
    with trio.fail_after(GUARD * 2):
        failed = await backend.chat([user("Say hello")], agent=agent, cwd=str(tmp_path))
    error = failed.error
    assert error is not None and error.data["kind"] == "auth_required", failed
    assert error.message.startswith("Claude Code needs you to sign in: sign in with "), error.message
    methods = {m["id"]: m for m in error.data["methods"]}
    console = methods["console-login"]
    assert console["kind"] == "terminal" and console["name"] == "Anthropic Console"
    # Its own command as configured, with the log-in's arguments.
    assert console["terminal"]["command"] == sys.executable
    assert console["terminal"]["args"] == [*args, "--cli", "auth", "login", "--console"]
    # Declared both ways, the adapter saw that we run terminal sign-ins.
    [initialize] = sent(log, "initialize")
    assert initialize["params"]["clientCapabilities"]["auth"] == {"terminal": True}
    # No model call was made with a key it does not have.
    assert not [r for r in api.requests if "/messages" in r.path and r.headers.get("x-api-key")]


@pytest.mark.parametrize("key", [True, False], ids=["with GEMINI_API_KEY", "without a key"])
async def test_gemini_cli_opens_its_session_with_gemini_api_key_in_its_env(backend: BackendClient, tmp_path: Path, key: bool) -> None:
    node, entry = found(installed_gemini)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "GEMINI_API_KEY": "fake-gemini-key" if key else "", "GEMINI_CLI_NO_RELAUNCH": "true", "NO_BROWSER": "true"}
    agent = process_agent("Gemini CLI", sys.executable, [TEE, str(tmp_path / "acp.jsonl"), "--", node, entry, "--acp"], env=env)
    with trio.fail_after(GUARD * 2):
        prepared = await backend.prepare(agent, model_id="gemini", cwd=str(tmp_path))
    # Its "Gemini API key" is agent-handled; the agent facts say it reads GEMINI_API_KEY: a key box.
    [api_key] = [m for m in prepared["signIn"]["methods"] if m["id"] == "gemini-api-key"]
    assert api_key["kind"] == "agent" and api_key["askFor"] == ["GEMINI_API_KEY"]
    if key:
        assert prepared["ready"] is True, prepared
        assert prepared["signIn"]["authenticated"] == "gemini-api-key"  # signed in with the key, asking nobody
    else:
        assert prepared["ready"] is False and prepared["error"].startswith("Gemini CLI needs you to sign in: sign in with Log in with Google"), prepared
        assert "gemini-api-key" in [m["id"] for m in prepared["signIn"]["methods"]]
    assert os.environ.get("GEMINI_API_KEY") != "fake-gemini-key"
