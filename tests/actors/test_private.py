"""Opening the backend's own files (actors/store/private.py): new ones exclusively, existing ones only
when they are the user's alone and regular, never through a symbolic link, never waiting on a
FIFO (docs/reliability.md, "Files we write are ours")."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

from actors.store.private import NotPrivate, open_private, private_file, private_folder
from actors.store.transcript import Recorder

GUARD = 5


async def promptly(call: Callable[[], object]) -> object:
    """`call()` on a thread, failing the test if it has not returned within GUARD (a blocked
    `open` cannot be cancelled: the thread is abandoned)."""
    with trio.fail_after(GUARD):
        return await trio.to_thread.run_sync(call, abandon_on_cancel=True)


def test_a_new_file_is_0600_whatever_the_umask_and_never_replaces_anything(tmp_path: Path) -> None:
    old = os.umask(0o277)
    try:
        with open_private(tmp_path / "new", "w", new=True) as file:
            file.write("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        open_private(tmp_path / "new", "w", new=True)
    (tmp_path / "link").symlink_to(tmp_path / "target")  # dangling
    with pytest.raises(FileExistsError):
        open_private(tmp_path / "link", "a", new=True)
    assert not (tmp_path / "target").exists()


def test_an_existing_file_is_reopened_only_if_it_is_ours_alone(tmp_path: Path) -> None:
    good = tmp_path / "good"
    with open_private(good, "a") as file:  # created
        file.write("kept")
    with open_private(good, "r") as file:
        assert file.read() == "kept"
    with open_private(good, "w") as file:  # emptied only once checked
        file.write("new")
    assert good.read_text() == "new"
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "link").symlink_to(victim)
    for mode in ("r", "a", "w"):
        with pytest.raises(NotPrivate, match="is a symbolic link, not a regular file") as refused:
            open_private(tmp_path / "link", mode)
        assert not refused.value.mendable
    assert victim.read_text() == "precious"
    victim.chmod(0o644)
    with pytest.raises(NotPrivate, match=r"can be read or written by other users \(mode 0644\)") as refused:
        open_private(victim, "w")
    assert refused.value.mendable and victim.read_text() == "precious"


async def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    for call in (lambda: private_file(fifo), lambda: private_file(fifo, create=False), lambda: open_private(fifo, "r"), lambda: open_private(fifo, "a")):
        with pytest.raises(NotPrivate, match="is a FIFO, not a regular file"):
            await promptly(call)


def test_private_file_mends_a_file_of_ours_others_could_read_and_leaves_a_missing_one_if_asked(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "store"
    path.write_text("")
    path.chmod(0o664)
    private_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and "made private (0600)" in caplog.text
    private_file(tmp_path / "absent", create=False)
    assert not (tmp_path / "absent").exists()
    private_file(tmp_path / "created")
    assert stat.S_IMODE((tmp_path / "created").stat().st_mode) == 0o600


def test_a_folder_others_can_write_in_is_refused_and_a_sticky_one_is_not(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(NotPrivate, match=r"can be written by other users \(mode 0777, no sticky bit\)"):
        private_folder(shared, tighten=True)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o777  # refused, not changed
    shared.chmod(0o1777)
    assert private_folder(shared, tighten=False) == shared
    mine = tmp_path / "mine"
    mine.mkdir()
    mine.chmod(0o755)
    private_folder(mine, tighten=True)
    assert stat.S_IMODE(mine.stat().st_mode) == 0o700


def test_a_transcripts_name_has_a_random_part(tmp_path: Path) -> None:
    first, second = Recorder(tmp_path), Recorder(tmp_path)  # same process, most likely the same second
    try:
        assert first.path is not None and second.path is not None and first.path != second.path
        for path in (first.path, second.path):
            assert re.fullmatch(rf"symposium-\d{{8}}-\d{{6}}-{os.getpid()}-[0-9a-f]{{16}}\.jsonl", path.name)
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        first.close()
        second.close()


def test_a_stores_side_file_that_is_a_symbolic_link_keeps_sqlite_from_the_store(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from actors.store.sessions import SessionStore

    victim = tmp_path / "victim"
    victim.write_text("precious")
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "sessions.sqlite3-wal").symlink_to(victim)
    store = SessionStore(state / "sessions.sqlite3", b"k" * 32)
    assert trio.run(store.find, "c", "agent") is None
    store.close()
    assert victim.read_text() == "precious"
    assert f"not remembering agent sessions: {state / 'sessions.sqlite3-wal'} is a symbolic link" in caplog.text
