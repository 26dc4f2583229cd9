"""The tool bridge is this user's alone (docs/DESIGN.md, "Tool bridge"; docs/reliability.md).

Through a real `symposium vscodelm` and Eliza as an external agent whose ACP traffic is recorded
(`tap`), so the `vscode_tools` entry is read exactly as the agent got it at `session/new`: an agent
may put it on a command line (Claude Code's SDK does), where every local user can read it.
Another user is played by a child process that switches to uid 65534 (only where the tests run
as root); it is handed the conversation's real secret, so what keeps it out is the bridge's
folder and its check of the peer's credentials, not a wrong secret.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.turn.rules import NO_PROMPT_CALL
from symposium.client import BackendClient, ChatResult, user
from tests.conftest import Tap

GUARD = 60
NOBODY = 65534
READ = {"name": "read_notes", "description": "Read contents of a file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
HELLO = b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}}\n'
# Connects to the socket, says the secret it reads on stdin, then MCP's initialize: prints what came of it.
VISITOR = """
import socket, sys
secret = sys.stdin.buffer.read()
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as exc:
    print("connect", exc.errno); sys.exit()
try:
    s.sendall(secret + b"\\n" + sys.argv[2].encode())
    print("answer", len(s.recv(65536)))
except OSError as exc:
    print("answer", exc.errno)
"""


def entry(tap: Tap) -> dict[str, Any]:
    """The `vscode_tools` server as the agent was given it at `session/new`."""
    [new] = tap.requests("session/new")
    [server] = [s for s in new["params"]["mcpServers"] if s["name"] == "vscode_tools"]
    return server


def option(server: dict[str, Any], name: str) -> str:
    args = server["args"]
    return args[args.index(name) + 1]


async def listed(backend: BackendClient, tap: Tap) -> tuple[ChatResult, dict[str, Any], bytes]:
    """A chat in which the agent lists VS Code's tools through the relay: (it, the entry, the secret)."""
    result = await backend.chat([user("list tools from vscode_tools")], agent=tap.agent, tools=[READ])
    assert result.completed and "read_notes" in result.text(), (result.error, result.text())
    server = entry(tap)
    return result, server, Path(option(server, "--key")).read_bytes().strip()


async def test_nothing_on_the_relays_command_line_or_in_its_environment_is_the_secret(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        _, server, secret = await listed(backend, tap)
        backend_pid = backend.process.pid if backend.process else None
    assert len(secret) >= 32
    assert server["env"] == [] and secret.decode() not in json.dumps(server)
    # What the entry names instead: a private file beside the socket, in a folder of ours alone.
    key, socket_path = Path(option(server, "--key")), Path(option(server, "--socket"))
    assert key.parent == socket_path.parent
    folder = key.parent.stat()
    assert stat.S_ISDIR(folder.st_mode) and stat.S_IMODE(folder.st_mode) == 0o700 and folder.st_uid == os.geteuid()
    info = key.lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.geteuid()
    assert stat.S_ISSOCK(socket_path.lstat().st_mode)
    # Nor in what any running process shows other users: the backend's and the agent's command
    # lines and environments (the agent's MCP servers inherit the agent's environment).
    for pid in [backend_pid, *tap.pids()]:
        for view in ("cmdline", "environ"):
            assert secret not in Path(f"/proc/{pid}/{view}").read_bytes(), (pid, view)
    assert await backend.close() == 0
    assert not key.parent.exists()  # the backend removes its folder as it ends


async def test_a_wrong_or_absent_secret_is_refused_over_the_wire(tmp_path: Path, tap: Tap) -> None:
    with (tmp_path / "backend.log").open("wb") as stderr:
        async with BackendClient.spawn(["--log-level", "info", "vscodelm"], stderr=stderr.fileno()) as backend:
            with trio.fail_after(GUARD):
                _, server, secret = await listed(backend, tap)
                path = option(server, "--socket")
                for said in [b"not-the-secret\n" + HELLO, b"\n" + HELLO, HELLO, secret[:-1] + b"\n" + HELLO]:
                    stream = await trio.open_unix_socket(path)
                    await stream.send_all(said)
                    assert await stream.receive_some() == b"", said  # closed, nothing served
                    await stream.aclose()
                stream = await trio.open_unix_socket(path)
                await stream.send_all(secret + b"\n" + HELLO)
                assert b'"result"' in await stream.receive_some()  # the right one is served
                await stream.aclose()
    assert (tmp_path / "backend.log").read_text().count("refused a connection") >= 4


def _python_for(uid: int) -> list[str] | None:
    """An interpreter another user can run (ours may sit in a folder only we can enter)."""
    found = [sys.executable, os.path.realpath(sys.executable), shutil.which("python3") or "", "/usr/bin/python3", "/usr/local/bin/python3"]
    for candidate in dict.fromkeys(found):
        if not candidate:
            continue
        try:
            subprocess.run([candidate, "-I", "-S", "-c", "pass"], user=uid, group=uid, extra_groups=[], timeout=GUARD, check=True, capture_output=True)
        except (OSError, subprocess.SubprocessError):
            continue
        return [candidate, "-I", "-S", "-c", VISITOR]
    return None


def _visit(python: list[str], path: str, secret: bytes, uid: int | None) -> str:
    who: dict[str, Any] = {} if uid is None else {"user": uid, "group": uid, "extra_groups": []}
    done = subprocess.run([*python, path, HELLO.decode()], input=secret, capture_output=True, timeout=GUARD, **who)
    return done.stdout.decode().strip() or done.stderr.decode()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="playing another local user needs root (setuid to 65534)")
async def test_another_local_user_holding_the_secret_cannot_reach_the_bridge(tmp_path: Path, tap: Tap) -> None:
    python = _python_for(NOBODY)
    if python is None:
        pytest.skip("no Python interpreter uid 65534 may run")
    with (tmp_path / "backend.log").open("wb") as stderr:
        async with BackendClient.spawn(["--log-level", "info", "vscodelm"], stderr=stderr.fileno()) as backend:
            with trio.fail_after(GUARD):
                _, server, secret = await listed(backend, tap)
                path = option(server, "--socket")
                folder = os.path.dirname(path)
                visit = lambda uid: trio.to_thread.run_sync(_visit, python, path, secret, uid)  # noqa: E731
                # The owner's own process, as a control: served.
                assert (await visit(None)).startswith("answer ") and await visit(None) != "answer 0"
                # Another user: the private folder keeps it from the socket.
                assert await visit(NOBODY) == "connect 13", "EACCES"
                # Were the folder open to it, the peer check still closes the connection unread.
                os.chmod(folder, 0o711)
                os.chmod(path, 0o777)
                try:
                    assert await visit(NOBODY) in ("answer 0", "answer 104", "answer 32"), "closed (or reset), nothing served"
                finally:
                    os.chmod(path, 0o600)
                    os.chmod(folder, 0o700)
    log = (tmp_path / "backend.log").read_text()
    assert f"refused a connection: it comes from uid {NOBODY}, not this user's" in log


async def test_a_tool_call_while_no_prompt_runs_fails_at_once_and_the_next_answer_is_the_agents_own(backend: BackendClient, tap: Tap) -> None:
    from mcp import Client, StdioServerParameters

    with trio.fail_after(GUARD):
        first, server, _ = await listed(backend, tap)
        # The conversation is idle. A client the agent could start (the same relay, the same key):
        params = StdioServerParameters(command=server["command"], args=server["args"], env={"PATH": "/usr/bin:/bin"})
        async with Client(params, mode="legacy", read_timeout_seconds=GUARD) as client:
            with trio.fail_after(10):  # at once: before, it waited for the user's next question
                result = await client.call_tool("read_notes", {"path": "/etc/passwd"})
        assert result.is_error and result.content[0].text == NO_PROMPT_CALL
        history = [user("list tools from vscode_tools"), first.assistant_message(), user("Hello")]
        after = await backend.chat(history, agent=tap.agent, tools=[READ])
    # Before, the kept call became this answer: a read_notes tool call with the caller's arguments.
    assert after.error is None and after.tool_calls() == []
    assert after.text() == "How do you do. Please state your problem."
