"""The rules for what the backend finds where it keeps its files (protocol/host/ownership.py)."""

from __future__ import annotations

import stat

import attrs
import pytest

from protocol.host.ownership import ROOT, Refusal, file_refusal, folder_refusal

ME, OTHER = 1000, 65534


@attrs.frozen
class Found:
    st_mode: int
    st_uid: int


def regular(mode: int, owner: int = ME) -> Found:
    return Found(stat.S_IFREG | mode, owner)


def folder(mode: int, owner: int = ME) -> Found:
    return Found(stat.S_IFDIR | mode, owner)


def test_a_regular_file_of_ours_alone_is_used() -> None:
    assert file_refusal(regular(0o600), ME) is None
    assert file_refusal(regular(0o400), ME) is None


@pytest.mark.parametrize(("kind", "words"), [
    (stat.S_IFLNK, "a symbolic link"), (stat.S_IFIFO, "a FIFO"), (stat.S_IFSOCK, "a socket"),
    (stat.S_IFCHR, "a character device"), (stat.S_IFBLK, "a block device"), (stat.S_IFDIR, "a folder"),
])
def test_anything_but_a_regular_file_is_refused_and_not_mendable(kind: int, words: str) -> None:
    assert file_refusal(Found(kind | 0o600, ME), ME) == Refusal(f"is {words}, not a regular file")


def test_another_users_file_is_refused_even_private_and_even_the_superusers() -> None:
    assert file_refusal(regular(0o600, OTHER), ME) == Refusal(f"belongs to another user (uid {OTHER})")
    assert file_refusal(regular(0o600, ROOT), ME) == Refusal("belongs to another user (uid 0)")


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602, 0o666])
def test_a_file_of_ours_others_may_read_or_write_is_refused_but_mendable(mode: int) -> None:
    refused = file_refusal(regular(mode), ME)
    assert refused is not None and refused.mendable
    assert str(refused) == f"can be read or written by other users (mode {mode:04o})"


@pytest.mark.parametrize(("mode", "owner"), [(0o700, ME), (0o755, ME), (0o1777, ROOT), (0o755, ROOT), (0o1777, ME), (0o1770, ME)])
def test_a_folder_no_one_else_can_write_in_or_whose_sticky_bit_guards_it_is_used(mode: int, owner: int) -> None:
    assert folder_refusal(folder(mode, owner), ME) is None


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o730, 0o703])
def test_a_folder_others_can_write_in_is_refused(mode: int) -> None:
    assert folder_refusal(folder(mode), ME) == Refusal(f"can be written by other users (mode {mode:04o}, no sticky bit)")
    assert folder_refusal(folder(mode, ROOT), ME) is not None


def test_another_users_folder_or_a_non_folder_is_refused() -> None:
    assert folder_refusal(folder(0o700, OTHER), ME) == Refusal(f"belongs to another user (uid {OTHER})")
    assert folder_refusal(folder(0o1777, OTHER), ME) == Refusal(f"belongs to another user (uid {OTHER})")
    assert folder_refusal(regular(0o700), ME) == Refusal("is a regular file, not a folder")


def test_as_the_superuser_its_own_files_and_folders_are_ours() -> None:
    assert file_refusal(regular(0o600, ROOT), ROOT) is None
    assert folder_refusal(folder(0o700, ROOT), ROOT) is None
    assert file_refusal(regular(0o600, OTHER), ROOT) is not None
