"""Files we write are ours (docs/reliability.md, "Files we write are ours").

A real backend is started, as the extension starts it, on a state folder and a trace folder into
which another user (or the user, by mistake) has put things: trace files under the names the
backend would pick, symbolic links to the user's other files, FIFOs where the key and the stores
go, folders another user owns or everyone can write in. Each time the backend must answer a chat
at once, write nothing through what it found, leave it as it was, and say in its log why it did
not use it. The cross-user cases make files another user's (uid 65534) and run only as root.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

import pytest
import trio

from symposium.client import ELIZA, BackendClient, user

GUARD = 30
OTHER = 65534  # nobody
PRECIOUS = "the user's own notes\n"

# Run first with the backend's command line after its own arguments, which it then becomes: it
# knows the backend's pid, so it can put something at every name the backend used to choose for
# its trace (`symposium-<UTC second>-<pid>.jsonl`) in the coming minute, as another user could.
PLANT = """
import datetime, os, sys
folder, what, target = sys.argv[1:4]
now = datetime.datetime.now(datetime.timezone.utc)
for second in range(-1, 60):
    stamp = (now + datetime.timedelta(seconds=second)).strftime("%Y%m%d-%H%M%S")
    path = os.path.join(folder, f"symposium-{stamp}-{os.getpid()}.jsonl")
    if what == "a symbolic link":
        os.symlink(target, path)
    else:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        os.chmod(path, 0o666)
        if what == "another user's file":
            os.chown(path, 65534, 65534)
os.execv(sys.argv[4], sys.argv[4:])
"""


def need_root(what: str) -> None:
    if os.getuid() != 0:
        pytest.skip(f"{what} needs root: only root can give a file to another user")


def precious(path: Path) -> Path:
    path.write_text(PRECIOUS)
    path.chmod(0o644)
    return path


def untouched(path: Path) -> bool:
    return path.read_text() == PRECIOUS and stat.S_IMODE(path.stat().st_mode) == 0o644


async def answers(log: Path, args: list[str], state: Path, wrapper: list[str] | None = None) -> tuple[str, int]:
    """A backend on `state` answers a chat in time; its log (warnings) and its pid."""
    with log.open("wb") as stderr:
        async with BackendClient.spawn(args, env={"SYMPOSIUM_STATE_DIR": str(state)}, stderr=stderr.fileno(), wrapper=wrapper or ()) as backend:
            assert backend.process is not None
            with trio.fail_after(GUARD):
                result = await backend.chat([user("Hello")], agent=ELIZA)
            assert result.completed, result.error
    return log.read_text(), backend.process.pid


@pytest.mark.parametrize("planted", ["the user's own file", "another user's file", "a symbolic link"])
async def test_what_is_planted_at_a_trace_name_is_never_written_to(tmp_path: Path, planted: str) -> None:
    if planted == "another user's file":
        need_root(planted)
    traces = tmp_path / "shared"  # as /tmp: everyone may add files, each only removes their own
    traces.mkdir()
    traces.chmod(0o1777)
    victim = precious(tmp_path / "notes.txt")
    wrapper = [sys.executable, "-I", "-c", PLANT, str(traces), planted, str(victim)]
    _, pid = await answers(tmp_path / "backend.log", ["vscodelm", "--trace-dir", str(traces)], tmp_path / "state", wrapper)

    placed = [p for p in traces.iterdir() if re.fullmatch(rf"symposium-\d{{8}}-\d{{6}}-{pid}\.jsonl", p.name)]
    assert len(placed) == 61
    for path in placed:
        if planted == "a symbolic link":
            assert path.is_symlink()
        else:
            info = path.lstat()
            assert info.st_size == 0 and stat.S_IMODE(info.st_mode) == 0o666, f"{path.name} holds the chat"
    assert untouched(victim), "the transcript went through a symbolic link"
    # The trace went to a new file of the backend's own, under a name with a random part.
    [trace] = set(traces.iterdir()) - set(placed)
    assert re.fullmatch(rf"symposium-\d{{8}}-\d{{6}}-{pid}-[0-9a-f]{{16}}\.jsonl", trace.name), trace.name
    info = trace.lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
    assert "lm/provideLanguageModelChatResponse" in trace.read_text()


@pytest.mark.parametrize("folder", ["owned by another user", "writable by everyone", "writable by its group"])
async def test_a_trace_folder_others_control_is_refused_and_the_backend_still_answers(tmp_path: Path, folder: str) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    if folder == "owned by another user":
        need_root("a folder of another user")
        traces.chmod(0o755)
        os.chown(traces, OTHER, OTHER)
        reason = f"belongs to another user (uid {OTHER})"
    else:
        mode = 0o777 if folder == "writable by everyone" else 0o770
        traces.chmod(mode)
        reason = f"can be written by other users (mode {mode:04o}, no sticky bit)"
    log, _ = await answers(tmp_path / "backend.log", ["vscodelm", "--trace-dir", str(traces)], tmp_path / "state")
    assert list(traces.iterdir()) == []
    assert f"not recording a transcript: {traces} {reason}" in log, log


async def test_fifos_where_the_key_and_the_stores_go_are_refused_not_waited_on(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    names = ("marker-secret", "sessions.sqlite3", "agents.sqlite3")
    for name in names:
        os.mkfifo(state / name, 0o600)
    log, _ = await answers(tmp_path / "backend.log", ["vscodelm"], state)  # a backend that opened one would hang here
    for name in names:
        assert stat.S_ISFIFO((state / name).lstat().st_mode)
        assert f"{state / name} is a FIFO, not a regular file" in log, log
    assert "not using the marker key" in log and "not remembering agent sessions" in log


async def test_symbolic_links_where_the_key_and_the_stores_go_are_not_followed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    key_victim, store_victim = precious(tmp_path / "notes.txt"), precious(tmp_path / "todo.txt")
    (state / "marker-secret").symlink_to(key_victim)
    (state / "sessions.sqlite3").symlink_to(store_victim)
    (state / "agents.sqlite3").symlink_to(tmp_path / "nothing-yet")  # a link to where no file is
    log, _ = await answers(tmp_path / "backend.log", ["vscodelm"], state)
    assert untouched(key_victim) and untouched(store_victim)
    assert not (tmp_path / "nothing-yet").exists()
    for name in ("marker-secret", "sessions.sqlite3", "agents.sqlite3"):
        assert (state / name).is_symlink()
        assert f"{state / name} is a symbolic link, not a regular file" in log, log


async def test_a_key_another_user_owns_is_not_used(tmp_path: Path) -> None:
    need_root("a key of another user")
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    key = state / "marker-secret"
    key.write_text(os.urandom(32).hex())  # a whole key, which that user knows
    key.chmod(0o600)
    os.chown(key, OTHER, OTHER)
    held = key.read_text()
    log, _ = await answers(tmp_path / "backend.log", ["vscodelm"], state)
    assert f"not using the marker key: {key} belongs to another user (uid {OTHER})" in log, log
    assert key.read_text() == held and key.stat().st_uid == OTHER


@pytest.mark.parametrize("folder", ["owned by another user", "writable by everyone"])
async def test_a_state_folder_others_control_is_refused_and_the_backend_still_answers(tmp_path: Path, folder: str) -> None:
    state = tmp_path / "state"
    state.mkdir()
    if folder == "owned by another user":
        need_root("a folder of another user")
        state.chmod(0o755)
        os.chown(state, OTHER, OTHER)
        mode = 0o755
    else:
        mode = 0o777
        state.chmod(mode)
    log, _ = await answers(tmp_path / "backend.log", ["vscodelm"], state)
    assert list(state.iterdir()) == [] and stat.S_IMODE(state.stat().st_mode) == mode
    assert f"not using the marker key: {state}" in log and "not remembering agent sessions" in log, log
