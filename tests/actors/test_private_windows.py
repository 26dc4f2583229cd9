"""The Windows private-file policy (`actors/store/private_windows.py`), run on Linux through
`actors/store/private.py` as the backend calls it, with $SYMPOSIUM_TEST_WINDOWS=1 (docs/windows.md)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from actors.shared.platform import TEST_ENV
from actors.store.private import NotPrivate, open_private, private_file, private_folder


@pytest.fixture
def profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "profile"
    home.mkdir()
    monkeypatch.setenv(TEST_ENV, "1")
    monkeypatch.setenv("USERPROFILE", str(home))
    return home


def test_a_folder_in_the_profile_is_private_and_one_elsewhere_is_said_to_be_up_to_its_permissions(profile: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        state = private_folder(profile / "AppData" / "Local" / "symposium", tighten=True)
        assert state.is_dir() and not caplog.records
        private_folder(tmp_path / "traces", tighten=False)
    assert "is outside your user profile" in caplog.text
    (tmp_path / "plain").write_text("")
    with pytest.raises(NotPrivate, match="is a regular file, not a folder"):
        private_folder(tmp_path / "plain", tighten=True)


def test_files_are_created_new_and_only_regular_files_are_used(profile: Path) -> None:
    key = profile / "key"
    with open_private(key, "w", new=True) as file:
        file.write("one\n")
    with pytest.raises(FileExistsError):
        open_private(key, "w", new=True)
    key.chmod(0o644)  # modes mean nothing on Windows: the folder's ACL decides
    with open_private(key, "r") as file:
        assert file.read() == "one\n"
    with open_private(key, "w") as file:
        file.write("two")
    assert key.read_text() == "two"
    (profile / "link").symlink_to(key)
    with pytest.raises(NotPrivate, match="is a symbolic link"):
        open_private(profile / "link", "r")
    os.mkfifo(profile / "fifo")
    with pytest.raises(NotPrivate, match="is a FIFO"):  # refused before it is opened: never waited on
        private_file(profile / "fifo")
    private_file(profile / "absent", create=False)
    assert not (profile / "absent").exists()
    private_file(profile / "store")
    assert (profile / "store").is_file()
