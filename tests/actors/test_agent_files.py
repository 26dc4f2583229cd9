"""Files an agent writes through the client, written by the backend when no edit tools are offered (actors/agent/files.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from actors.agent import files as agent_files
from actors.agent.files import FileError, current, write_text


def test_a_write_replaces_the_file_keeping_its_permissions_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_text("old\n")
    target.chmod(0o640)
    write_text(str(target), "new\n")
    assert target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o640
    assert os.listdir(tmp_path) == ["app.py"]


def test_a_new_file_is_created_in_new_folders_and_a_link_is_written_through(tmp_path: Path) -> None:
    write_text(str(tmp_path / "a" / "b.txt"), "hi\n")
    assert (tmp_path / "a" / "b.txt").read_text() == "hi\n"
    real = tmp_path / "real.txt"
    real.write_text("x\n")
    (tmp_path / "link.txt").symlink_to(real)
    write_text(str(tmp_path / "link.txt"), "y\n")
    assert (tmp_path / "link.txt").is_symlink() and real.read_text() == "y\n"


def test_what_a_write_replaces_missing_text_or_not_text(tmp_path: Path) -> None:
    assert current(str(tmp_path / "none.txt")) == (None, True)
    (tmp_path / "t.txt").write_text("text\n")
    assert current(str(tmp_path / "t.txt")) == ("text\n", True)
    (tmp_path / "b.bin").write_bytes(b"\xff\xfe\x00")
    assert current(str(tmp_path / "b.bin")) == (None, False)


def test_a_relative_path_is_refused() -> None:
    with pytest.raises(FileError):
        write_text("relative.txt", "x")


def test_only_regular_files_are_read_or_written_and_a_fifo_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for call in (lambda: agent_files.current(str(fifo)), lambda: agent_files.read_text(str(fifo)), lambda: agent_files.write_text(str(fifo), "x")):
        with pytest.raises(agent_files.FileError, match="FIFO"):
            call()
    with pytest.raises(agent_files.FileError, match="folder"):
        agent_files.write_text(str(tmp_path), "x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
