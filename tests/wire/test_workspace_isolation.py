"""The workspace cannot reach into the backend (docs/reliability.md, "What the workspace cannot do").

The extension starts the backend with the workspace as its working folder; Python's `-m` would put
that folder first on `sys.path`. A workspace here holds modules named like the standard library's and
like our own packages, each of which, if ever imported, leaves a mark on disk and raises. The backend
is started as the extension starts it (`python -I -m symposium vscodelm`) and by hand (`python -m
symposium`, no flag), and must answer a chat and a bridged tool call (through the relay, which the
agent starts in that same folder) without importing any of them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from symposium.client import ELIZA, BackendClient, tool_result, user

GUARD = 60
PLANTED = ("secrets", "random", "socket", "threading", "json", "protocol", "actors", "symposium")


def plant(workspace: Path, names: tuple[str, ...]) -> Path:
    """Modules and packages called `names` that record their import in `workspace/imported/` and fail."""
    marks = workspace / "imported"
    marks.mkdir()
    for name in names:
        body = f"open({str(marks / name)!r}, 'w').close()\nraise ImportError('the workspace module {name} was imported')\n"
        if name in ("protocol", "actors", "symposium"):
            (workspace / name).mkdir()
            (workspace / name / "__init__.py").write_text(body)
        else:
            (workspace / f"{name}.py").write_text(body)
    return marks


async def chat_with_a_tool(backend: BackendClient, workspace: Path) -> None:
    tools = [{"name": "read_notes", "description": "Read notes", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
    history = [user('use tool vscode_tools::read_notes with {"path": "notes.txt"}')]
    with trio.fail_after(GUARD):
        call = await backend.chat(history, agent=ELIZA, tools=tools, cwd=str(workspace))
        assert call.error is None, call.error
        [requested] = call.tool_calls()
        history += [call.assistant_message(), tool_result(requested["toolCallId"], "the notes")]
        answer = await backend.chat(history, agent=ELIZA, tools=tools, cwd=str(workspace))
    assert answer.error is None, answer.error
    assert "the notes" in answer.text()


async def test_the_backend_started_as_the_extension_starts_it_imports_nothing_from_the_workspace(tmp_path: Path) -> None:
    marks = plant(tmp_path, PLANTED)
    async with BackendClient.spawn(cwd=str(tmp_path)) as backend:
        await chat_with_a_tool(backend, tmp_path)
    assert sorted(os.listdir(marks)) == []


async def test_the_backend_started_by_hand_with_python_m_forgets_the_working_folder(tmp_path: Path) -> None:
    # Without -I, `python -m symposium` has imported the package from sys.path before any of our code
    # runs, so a workspace `symposium/` would win; every other name is dropped with the working folder.
    marks = plant(tmp_path, tuple(n for n in PLANTED if n != "symposium"))
    hand = subprocess.run([sys.executable, "-m", "symposium", "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=GUARD)
    assert hand.returncode == 0, hand.stderr
    assert sorted(os.listdir(marks)) == []


@pytest.mark.parametrize("name", ["socket", "threading", "symposium"])
def test_the_relay_started_in_the_workspace_imports_nothing_from_it(tmp_path: Path, name: str) -> None:
    from symposium.launch import RELAY

    marks = plant(tmp_path, (name,))
    key = tmp_path / "key"  # a private key file, so that the relay goes as far as connecting
    key.write_text("k\n")
    key.chmod(0o600)
    relay = subprocess.run([*RELAY.command, "--port", "1", "--key", str(key)], cwd=tmp_path, capture_output=True, text=True, timeout=GUARD, stdin=subprocess.DEVNULL)
    assert "cannot reach the backend" in relay.stderr  # it ran its own code, and only that
    assert sorted(os.listdir(marks)) == []
