"""Files an agent writes through the client, read and written by the backend within the chat's
workspace folder, checked as they are opened (actors/agent/files.py).

The walks run three ways where they can (the `walker` fixture): POSIX's (`beneath.py`, openat with
O_NOFOLLOW), the same where the system has no O_NOFOLLOW (as under `tests/support/without_posix.py`),
and Windows' (`beneath_windows.py`) with pywin32 played by `tests/support/fake_win32.py`."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from actors.agent import beneath, files
from actors.agent.files import Before, FileError, before, write_text
from actors.shared.platform import TEST_ENV
from tests.support import fake_win32


@pytest.fixture(params=["posix", "without-o-nofollow", "windows"])
def walker(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "without-o-nofollow":
        monkeypatch.setattr(beneath, "_NOFOLLOW", 0)
    elif request.param == "windows":
        for name, module in fake_win32.install().items():
            monkeypatch.setitem(sys.modules, name, module)
        monkeypatch.setattr(files, "ON_WINDOWS", True)
        monkeypatch.setenv(TEST_ENV, "1")
    return str(request.param)


def test_a_write_replaces_the_file_keeping_its_permissions_and_leaves_nothing_beside_it(tmp_path: Path, walker: str) -> None:
    target = tmp_path / "app.py"
    target.write_text("old\n")
    target.chmod(0o640)
    write_text(str(target), "new\n", (str(tmp_path),))
    assert target.read_text() == "new\n" and (walker == "windows" or target.stat().st_mode & 0o777 == 0o640)  # no modes there
    assert os.listdir(tmp_path) == ["app.py"]


def test_a_new_file_is_created_in_new_folders_and_a_link_inside_is_written_through(tmp_path: Path, walker: str) -> None:
    write_text(str(tmp_path / "a" / "b.txt"), "hi\n", (str(tmp_path),))
    assert (tmp_path / "a" / "b.txt").read_text() == "hi\n"
    real = tmp_path / "real.txt"
    real.write_text("x\n")
    (tmp_path / "link.txt").symlink_to(real)  # absolute, inside
    write_text(str(tmp_path / "link.txt"), "y\n", (str(tmp_path),))
    assert (tmp_path / "link.txt").is_symlink() and real.read_text() == "y\n"
    (tmp_path / "alias").symlink_to("a", target_is_directory=True)  # relative, to a folder inside
    write_text(str(tmp_path / "alias" / "c.txt"), "z\n", (str(tmp_path),))
    assert (tmp_path / "a" / "c.txt").read_text() == "z\n"


def test_what_a_write_replaces_missing_text_or_not_text(tmp_path: Path, walker: str) -> None:
    assert before(str(tmp_path / "none.txt"), (str(tmp_path),)) == Before(None, True)
    assert before(str(tmp_path / "no" / "such" / "folder.txt"), (str(tmp_path),)) == Before(None, True)
    (tmp_path / "t.txt").write_text("text\n")
    assert before(str(tmp_path / "t.txt"), (str(tmp_path),)) == Before("text\n", True)
    (tmp_path / "b.bin").write_bytes(b"\xff\xfe\x00")
    assert before(str(tmp_path / "b.bin"), (str(tmp_path),)) == Before(None, False)
    assert before(str(tmp_path / ".vscode" / "tasks.json"), (str(tmp_path),)).runs_it is not None


def test_a_relative_path_or_a_chat_with_no_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileError):
        write_text("relative.txt", "x", (str(tmp_path),))
    with pytest.raises(FileError, match="has none"):
        write_text(str(tmp_path / "a.txt"), "x", ())


def test_only_regular_files_with_one_name_are_read_or_written_and_a_fifo_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for call in (lambda: before(str(fifo), (str(tmp_path),)), lambda: write_text(str(fifo), "x", (str(tmp_path),))):
        with pytest.raises(FileError, match="FIFO"):
            call()
    with pytest.raises(FileError, match="folder"):
        write_text(str(tmp_path / "sub" / ".."), "x", (str(tmp_path),))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("mine\n")
    (tmp_path / "hard").hardlink_to(outside)
    for call in (lambda: before(str(tmp_path / "hard"), (str(tmp_path),)), lambda: write_text(str(tmp_path / "hard"), "x", (str(tmp_path),))):
        with pytest.raises(FileError, match="hard links"):
            call()
    assert outside.read_text() == "mine\n"


def test_a_folder_swapped_for_a_link_out_after_the_check_is_met_by_the_write(tmp_path: Path, walker: str) -> None:
    workspace, outside = tmp_path / "work", tmp_path / "outside"
    (workspace / "gen").mkdir(parents=True)
    outside.mkdir()
    assert before(str(workspace / "gen" / "payload.txt"), (str(workspace),)) == Before(None, True)
    (workspace / "gen").rename(workspace / "gen-old")
    (workspace / "gen").symlink_to(outside, target_is_directory=True)
    with pytest.raises(FileError, match="outside"):
        write_text(str(workspace / "gen" / "payload.txt"), "x", (str(workspace),))
    assert os.listdir(outside) == []


def test_a_file_something_runs_is_never_written_on_disk_here(tmp_path: Path, walker: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n\thooksPath = tools/hooks\n")
    for path in (".vscode/settings.json", ".envrc", "tools/hooks/pre-commit"):
        with pytest.raises(FileError, match="edit tools"):
            write_text(str(tmp_path / path), "x", (str(tmp_path),))
        assert not (tmp_path / path).exists()


def test_the_windows_walk_holds_folders_by_handle_and_refuses_what_windows_reads_otherwise(tmp_path: Path, walker: str) -> None:
    if walker != "windows":
        pytest.skip("Windows' names and handles")
    assert type(files.folders()).__name__ == "WindowsFolders"
    for path in (".git./config", "GIT~1/config", "nul.txt", "a.txt:hidden"):
        with pytest.raises(FileError):
            write_text(str(tmp_path / path), "x", (str(tmp_path),))
    assert os.listdir(tmp_path) == []
