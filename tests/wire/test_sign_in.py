"""Signing in to an agent the ACP way, through the real backend (docs/DESIGN.md, "Sign-in"), with
`tests/support/signin_agent.py`, which offers one method of each kind and opens no session until
signed in. The real agents' sign-ins: `tests/agents/test_sign_in.py`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.shared.jsonrpc import RpcError
from symposium.client import BackendClient, process_agent, user
from tests.wire.test_backend_wire import GUARD

AGENT = str(Path(__file__).parents[1] / "support" / "signin_agent.py")
SECRET = "sk-symposium-never-shown-0123456789"


def signin_agent(state: Path, **env: str) -> dict[str, Any]:
    return process_agent("Sign-in Agent", sys.executable, [AGENT, str(state)], env={"OTHER_SECRET": SECRET, **env})


def methods_of(error: Any) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in error.data["methods"]}


async def test_an_env_var_method_the_agents_env_satisfies_is_used_without_asking(backend: BackendClient, tmp_path: Path) -> None:
    agent = signin_agent(tmp_path / "state", SIGNIN_API_KEY="k-123")
    with trio.fail_after(GUARD):
        result = await backend.chat([user("hello")], agent=agent)
        prepared = await backend.prepare(agent, model_id="signin")
    assert result.completed and result.text() == "echo: hello", result
    assert prepared["ready"] is True and prepared["signIn"]["authenticated"] == "key"


async def test_without_a_sign_in_the_chat_names_the_agent_and_offers_its_methods(backend: BackendClient, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with trio.fail_after(GUARD):
        failed = await backend.chat([user("hello")], agent=signin_agent(state))
    error = failed.error
    assert error is not None and error.code == -32000 and error.data["kind"] == "auth_required", failed
    assert error.message == (
        "Sign-in Agent needs you to sign in: sign in with Log in or Log in with a browser; or enter its SIGNIN_API_KEY (Authentication required)."
        " Symposium does not let a sign-in set EDITOR: only API keys, tokens, base URLs and the variables it knows the agent documents"
    )
    assert error.data["agent"] == "Sign-in Agent"
    methods = methods_of(error)
    assert [m["kind"] for m in error.data["methods"]] == ["env_var", "terminal", "agent"]
    assert methods["key"]["vars"] == ["SIGNIN_API_KEY"]
    # A terminal method: the agent's own command, with the method's arguments and variables added.
    # EDITOR, which the agent also asked for, is refused: only a credential or an endpoint by name (or
    # what the agent facts document) is set, and the refusal is said.
    assert methods["login"]["terminal"] == {"command": sys.executable, "args": [AGENT, str(state), "--login"], "env": {"SIGNIN_BASE_URL": "terminal"}}
    assert methods["login"]["refused"] == ["EDITOR"]
    # The agent's own env (its keys) is never carried: whoever opens the terminal adds it.
    assert SECRET not in json.dumps(error.to_json())


async def test_a_terminal_sign_in_then_lm_authenticate_starts_the_agent_afresh(backend: BackendClient, tmp_path: Path) -> None:
    state = tmp_path / "state"
    agent = signin_agent(state)
    with trio.fail_after(GUARD):
        failed = await backend.chat([user("hello")], agent=agent)
    assert failed.error is not None
    launch = methods_of(failed.error)["login"]["terminal"]
    # What the extension runs in a VS Code terminal, with the agent's env and the method's.
    env = {**os.environ, "OTHER_SECRET": SECRET, **launch["env"]}
    done = await trio.run_process([launch["command"], *launch["args"]], env=env, capture_stdout=True)
    assert done.returncode == 0 and b"SIGNIN_BASE_URL=terminal" in done.stdout and state.exists()
    assert b"EDITOR=/tmp/evil-editor" not in done.stdout
    with trio.fail_after(GUARD):
        signed_in = await backend.authenticate(agent, "login")
        result = await backend.chat([user("hello")], agent=agent)
    assert signed_in["canLogOut"] is True
    assert result.completed and result.text() == "echo: hello", result


async def test_an_agent_handled_method_is_acp_authenticate(backend: BackendClient, tmp_path: Path) -> None:
    agent = signin_agent(tmp_path / "state")
    with trio.fail_after(GUARD):
        prepared = await backend.prepare(agent, model_id="signin")
        assert prepared["ready"] is False and "needs you to sign in" in prepared["error"]
        assert [m["id"] for m in prepared["signIn"]["methods"]] == ["key", "login", "browser"]
        assert prepared["signIn"]["status"] == "Not logged in"  # what the agent pushed
        signed_in = await backend.authenticate(agent, "browser")
        assert signed_in["authenticated"] == "browser"
        result = await backend.chat([user("hello")], agent=agent)
    assert result.completed and result.text() == "echo: hello", result


async def test_log_out_where_the_agent_offers_it(backend: BackendClient, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.write_text("signed in")  # signed in before, as a user with stored credentials is
    agent = signin_agent(state)
    with trio.fail_after(GUARD):
        assert (await backend.chat([user("hello")], agent=agent)).completed
        assert await backend.logout(agent) == {}
        again = await backend.chat([user("hello")], agent=agent)
    assert not state.exists()
    assert again.error is not None and again.error.data["kind"] == "auth_required", again


async def test_a_method_the_agent_does_not_offer_is_refused(backend: BackendClient, tmp_path: Path) -> None:
    with trio.fail_after(GUARD), pytest.raises(RpcError) as refused:
        await backend.authenticate(signin_agent(tmp_path / "state"), "nope")
    assert refused.value.code == -32602 and "nope" in refused.value.message


async def test_sign_in_methods_are_shown_and_stored_with_only_what_the_extension_needs(backend: BackendClient, tmp_path: Path) -> None:
    # Each method once carried a large `_meta`, copied whole into `lm/prepareModel` (829 KB) and
    # from there into Add Agent's install record.
    agent = signin_agent(tmp_path / "state", SIGNIN_HUGE_META="1")
    with trio.fail_after(GUARD):
        prepared = await backend.prepare(agent, model_id="signin")
    assert [m["id"] for m in prepared["authMethods"]] == ["key", "login", "browser"]
    assert all(set(m) == {"id", "name", "kind", "description"} for m in prepared["authMethods"])
    assert len(json.dumps(prepared)) < 4_000, len(json.dumps(prepared))


async def test_a_key_handed_over_in_the_env_signs_in_and_is_in_no_trace_log_or_error(tmp_path: Path) -> None:
    """What the extension does with a key from VS Code's secret storage: it travels in the agent's
    env over stdin, the agent authenticates with it before any session, and nothing the backend
    writes (its trace, its log at debug level, an error) holds it."""
    key = "k3y-from-the-keychain-5309"  # not shaped like a key: redacted because it is an env value
    traces, log = tmp_path / "traces", tmp_path / "backend.log"
    agent = signin_agent(tmp_path / "state", SIGNIN_API_KEY=key)
    with log.open("wb") as stderr:
        args = ["--log-level", "debug", "vscodelm", "--trace-dir", str(traces)]
        async with BackendClient.spawn(args, env={"SYMPOSIUM_STATE_DIR": str(tmp_path / "st")}, stderr=stderr.fileno()) as client:
            with trio.fail_after(GUARD):
                prepared = await client.prepare(agent, model_id="signin")
                result = await client.chat([user("env SIGNIN_API_KEY")], agent=agent)
                with pytest.raises(RpcError) as refused:
                    await client.authenticate(agent, "nope")
    assert prepared["ready"] is True and prepared["signIn"]["authenticated"] == "key"
    assert result.completed and result.text() == "echo: SIGNIN_API_KEY is set", result
    assert key not in json.dumps(prepared) and key not in refused.value.message
    written = [p for p in traces.rglob("*") if p.is_file()]
    assert written
    for path in [*written, log]:
        assert key.encode() not in path.read_bytes(), path.name


async def test_what_an_agent_needs_at_start_is_given_to_one_configured_by_hand(backend: BackendClient, tmp_path: Path) -> None:
    """The agent facts' `startEnv` reaches an agent recognised by what it runs (here a command named
    `gemini`), however it was configured; what its own env sets wins."""
    bin = tmp_path / "bin"
    bin.mkdir()
    gemini = bin / "gemini"
    gemini.write_text(f"#!/bin/sh\nexec {sys.executable} {AGENT} \"$@\"\n")
    gemini.chmod(0o755)
    agent = process_agent("Gemini by hand", str(gemini), [str(tmp_path / "state")], env={"SIGNIN_API_KEY": "k"})
    other = process_agent("Not Gemini", sys.executable, [AGENT, str(tmp_path / "state")], env={"SIGNIN_API_KEY": "k"})
    overridden = process_agent("Gemini, untrusting", str(gemini), [str(tmp_path / "state")], env={"SIGNIN_API_KEY": "k", "GEMINI_CLI_TRUST_WORKSPACE": "false"})
    with trio.fail_after(GUARD):
        trusted = await backend.chat([user("env GEMINI_CLI_TRUST_WORKSPACE")], agent=agent)
        unknown = await backend.chat([user("env GEMINI_CLI_TRUST_WORKSPACE")], agent=other)
        own = await backend.chat([user("env GEMINI_CLI_TRUST_WORKSPACE")], agent=overridden)
    assert trusted.text() == "echo: GEMINI_CLI_TRUST_WORKSPACE is 'true'", trusted
    assert unknown.text() == "echo: GEMINI_CLI_TRUST_WORKSPACE is unset", unknown
    assert own.text() == "echo: GEMINI_CLI_TRUST_WORKSPACE is 'false'", own


async def test_the_model_picker_says_which_version_of_an_agent_runs_and_that_it_wants_a_sign_in(backend: BackendClient, tmp_path: Path) -> None:
    """docs/usage.md, "The agent's own choices": the picker's detail and hover, as the agent last started."""
    agent = signin_agent(tmp_path / "state")
    entries = [{"id": "signin", "name": "Sign-in Agent", "agent": agent}]

    async def own_entry() -> dict[str, Any]:
        return next(m for m in await backend.models(entries) if m["id"] == "signin")

    with trio.fail_after(GUARD):
        assert (await own_entry())["detail"] == "ACP agent", "nothing known before it started"
        await backend.prepare(agent, model_id="signin")
        await backend.models_changed()
        wanting = await own_entry()
        await backend.authenticate(agent, "browser")
        await backend.models_changed()
        signed_in = await own_entry()
    assert wanting["detail"] == "ACP agent · sign-in needed" and "Symposium: Sign In to an Agent" in wanting["tooltip"]
    assert signed_in["detail"] == "ACP agent" and "wants a sign-in" not in signed_in["tooltip"]
