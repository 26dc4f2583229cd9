"""Secrets stay secret: nothing the backend writes holds an agent's env values or a key.

A real backend runs conversations with an agent whose environment holds a secret and that
prints it (and a key it made up) on stderr; one agent dies at start-up after printing it.
Then every file the backend wrote (its state folder, its trace folder) and its own log
(at debug level) are searched for the secret in every form JSON could write it.
"""

from __future__ import annotations

import base64
import json
import stat
import sys
from pathlib import Path

import trio

from protocol.shared.redact import REDACTED, escaped_forms
from symposium.client import BackendClient, ChatResult, process_agent, user
from tests.support.misbehaving_agent import INVENTED_KEY

GUARD = 30
SECRET = "correct-horse-battery-staple-4417"  # not shaped like a key: found because it is an env value
AGENT = str(Path(__file__).parents[1] / "support" / "misbehaving_agent.py")


async def test_no_file_the_backend_writes_holds_an_env_value_or_a_key(tmp_path: Path) -> None:
    state, traces, log = tmp_path / "state", tmp_path / "traces", tmp_path / "backend.log"
    leaky = process_agent("leaky", sys.executable, [AGENT], env={"AGENT_SECRET": SECRET, "MODE": "1"})
    dying = process_agent("dying", sys.executable, [AGENT, "--die-at-start"], env={"AGENT_SECRET": SECRET})
    with log.open("wb") as stderr:
        args = ["--log-level", "debug", "vscodelm", "--trace-dir", str(traces)]
        async with BackendClient.spawn(args, env={"SYMPOSIUM_STATE_DIR": str(state)}, stderr=stderr.fileno()) as backend:
            with trio.fail_after(GUARD):
                first = await backend.chat([user("leak")], agent=leaky)
                assert first.completed and SECRET in first.text()  # the agent chose to tell the user
                second = await backend.chat([user("leak"), first.assistant_message(), user("leak")], agent=leaky)
                assert second.completed
                failed = await backend.chat([user("Hello")], agent=dying)
    # The start-up failure shows the agent's stderr, redacted.
    assert failed.error is not None and failed.error.code == -32000
    assert any(REDACTED in line for line in failed.error.data["stderr"]), failed.error.data
    assert SECRET not in json.dumps(failed.error.to_json())

    written = sorted(p for p in [*state.rglob("*"), *traces.rglob("*")] if p.is_file())
    assert {p.name for p in written} >= {"marker-secret", "sessions.sqlite3"} and any(p.suffix == ".jsonl" for p in written)
    for path in [*written, log]:
        data = path.read_bytes()
        for form in [*escaped_forms(SECRET), INVENTED_KEY]:
            assert form.encode() not in data, f"{path.name} holds {form!r}"
    # The secret was there to leak: stderr was logged and recorded, with the values redacted.
    assert b"debug: secret is " + REDACTED.encode() + b"; API_KEY=" + REDACTED.encode() in log.read_bytes()
    assert b"debug: found a key in ~/.config: " + REDACTED.encode() in log.read_bytes()
    [trace] = [p for p in written if p.suffix == ".jsonl"]
    assert REDACTED.encode() in trace.read_bytes()

    # Readable by the user alone.
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for folder in {p.parent for p in written}:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def command(name: str, line: str) -> str:
    """A prompt that has the misbehaving agent write `line` (`{SECRET}` is its env value)."""
    return f"{name} {base64.b64encode(line.encode()).decode()}"


def failure(result: ChatResult) -> str:
    assert result.error is not None, result.text()
    return json.dumps(result.error.to_json())


async def test_what_an_agent_says_of_its_secrets_reaches_no_log_trace_or_error(tmp_path: Path) -> None:
    state, traces, log = tmp_path / "new" / "state", tmp_path / "made" / "traces", tmp_path / "backend.log"
    leaky = process_agent("leaky", sys.executable, [AGENT], env={"AGENT_SECRET": SECRET})
    refusing = process_agent("refusing", sys.executable, [AGENT, "--refuse-sessions"], env={"AGENT_SECRET": SECRET})
    # A chat from before the backend started: its very first request already quotes the secret.
    earlier = [user("leak"), {"role": "assistant", "content": [{"type": "text", "value": f"the secret is {SECRET}"}]}, user("go on")]
    with log.open("wb") as stderr:
        args = ["--log-level", "debug", "vscodelm", "--trace-dir", str(traces)]
        async with BackendClient.spawn(args, env={"SYMPOSIUM_STATE_DIR": str(state)}, stderr=stderr.fileno()) as backend:
            with trio.fail_after(GUARD):
                resumed = await backend.chat(earlier, agent=leaky)
                prompt_error = await backend.chat([user(command("respond", '{"jsonrpc":"2.0","id":{ID},"error":{"code":-32000,"message":"cannot: {SECRET}"}}'))], agent=leaky)
                stray = await backend.chat([user(command("emit", "loaded a config with {SECRET}"))], agent=leaky)
                unreadable = await backend.chat([user(command("emit", '{"config": "{SECRET}", broken'))], agent=leaky)
                prepared = await backend.prepare(refusing, model_id="refusing")
                refused = await backend.chat([user("Hello")], agent=refusing)
    assert resumed.completed and stray.completed
    for result in (prompt_error, unreadable, refused):
        assert SECRET not in failure(result) and REDACTED in failure(result)
    assert prepared["ready"] is False and SECRET not in json.dumps(prepared) and REDACTED in json.dumps(prepared)

    written = sorted(p for p in [*state.rglob("*"), *traces.rglob("*")] if p.is_file())
    for path in [*written, log]:
        data = path.read_bytes()
        for form in escaped_forms(SECRET):
            assert form.encode() not in data, f"{path.name} holds {form!r}"
    # It was there to leak: the log quotes the agent's stray and unreadable lines and its refusals.
    lines = log.read_bytes().splitlines()
    assert any(b"not JSON-RPC" in line and b"loaded a config" in line and REDACTED.encode() in line for line in lines)
    assert any(b"unreadable input" in line and REDACTED.encode() in line for line in lines)
    assert any(b"refused session/new" in line and REDACTED.encode() in line for line in lines)
    # Each folder the backend made is the user's alone, those above its own included.
    for folder in (state, state.parent, traces, traces.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_sessions_stored_by_an_earlier_version_lose_their_env_values(tmp_path: Path) -> None:
    import sqlite3

    from actors.store.sessions import SessionStore

    # The first version's table: the definition itself, and no turn column.
    schema = "create table sessions (conversation text primary key, agent text not null, session_id text not null, cwd text not null, updated real not null)"

    definition = json.dumps({"mcp_server": {"name": "claude", "command": "npx", "env": [{"name": "KEY", "value": SECRET}]}})
    path = tmp_path / "sessions.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(schema)
    db.execute("insert into sessions values ('c1', ?, 's1', '/w', 0)", (definition,))
    db.close()
    assert SECRET.encode() in path.read_bytes()
    store = SessionStore(path, b"k" * 32)
    assert trio.run(store.find, "c1", definition) == ("s1", "/w", None)  # still found, by digest; its last turn unknown
    assert SECRET.encode() not in path.read_bytes()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    store.save("c2", definition, "s2", "/w")
    store.handed("c2", "s2", 3)
    store.handed("c1", "another session", 5)  # a session the conversation no longer has: nothing changes
    store.close()  # the saves land
    assert trio.run(SessionStore(path, b"k" * 32).find, "c2", definition) == ("s2", "/w", 3)
    assert trio.run(SessionStore(path, b"k" * 32).find, "c1", definition) == ("s1", "/w", None)
    assert trio.run(SessionStore(path, b"x" * 32).find, "c2", definition) is None  # keyed: another key, another digest


def test_redaction_finds_values_and_key_shapes_and_leaves_ordinary_text() -> None:
    from protocol.shared.redact import Redactor

    redactor = Redactor([SECRET, "1", 'pa"ss\\wörd-long'])
    assert redactor.values(f"x {SECRET} y") == f"x {REDACTED} y"
    assert redactor.values(json.dumps('pa"ss\\wörd-long')) == f'"{REDACTED}"'  # as JSON escapes it
    assert redactor.values("mode 1 of 1") == "mode 1 of 1"  # short values are settings, not hunted
    for key in [INVENTED_KEY, "ghp_" + "a1B2" * 9, "AKIAIOSFODNN7EXAMPLE", "xoxb-123456789012-abcdefghij",
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"]:
        assert redactor.values(f"key: {key}.") == f"key: {REDACTED}.", key
    assert redactor.values("Authorization: Bearer abc.def-123456") == f"Authorization: Bearer {REDACTED}"
    assert redactor.free_text("OPENAI_API_KEY=abcdefgh12345678 and password: hunter2hunter2") == f"OPENAI_API_KEY={REDACTED} and password: {REDACTED}"
    for text in ["disk-space-monitoring-tool is ready", "max_tokens=4096", "task-management-system-design-doc", "see https://ask-the-experts.example"]:
        assert redactor.free_text(text) == text
