"""Whether what the backend finds at a path is its user's alone: the rules `actors/store/private.py`
applies before it writes or reads a file of its own (docs/reliability.md, "Files we write are ours").

Pure: given what `stat` said of the path (its mode and owner) and the user the backend runs as,
why it is refused (`Refusal`), or None. These are the POSIX rules (mode bits and owners); a system
whose permissions live elsewhere has rules of its own in the same place of `actors/store/private.py`.
"""

from __future__ import annotations

import stat
from typing import Protocol

import attrs

ROOT = 0  # the superuser may own a folder we write in (/tmp): it can read everything anyway


class Stat(Protocol):
    """What `os.stat`/`os.lstat`/`os.fstat` return, as far as the rules read it."""

    @property
    def st_mode(self) -> int: ...

    @property
    def st_uid(self) -> int: ...


@attrs.frozen
class Refusal:
    """Why a path is not used. `mendable`: it is the user's own regular file, only open to
    others; the user's own program may make it private again (or replace what it holds)."""

    reason: str
    mendable: bool = False

    def __str__(self) -> str:
        return self.reason


def kind(mode: int) -> str:
    """What a mode says the path is, in words."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a file"


def file_refusal(info: Stat, me: int) -> Refusal | None:
    """Why a file the backend keeps (a key, a store, a trace) must not be used, or None.

    Only a regular file (a symbolic link is never followed; a FIFO, socket or device is never
    opened, so never waited on), owned by the user, that no one else may read or write (the
    last alone is mendable).
    """
    if not stat.S_ISREG(info.st_mode):
        return Refusal(f"is {kind(info.st_mode)}, not a regular file")
    if info.st_uid != me:
        return Refusal(f"belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o077:
        return Refusal(f"can be read or written by other users (mode {stat.S_IMODE(info.st_mode):04o})", mendable=True)
    return None


def folder_refusal(info: Stat, me: int) -> Refusal | None:
    """Why a folder must not hold the backend's files, or None.

    A folder (a symbolic link to one is followed: the information is the target's), owned by the
    user or the superuser, that no one else can write in, unless its sticky bit keeps each user
    to their own entries (as /tmp's). A folder others may only read or enter is accepted: the
    files in it are 0600, and their names cannot be guessed.
    """
    if not stat.S_ISDIR(info.st_mode):
        return Refusal(f"is {kind(info.st_mode)}, not a folder")
    if info.st_uid not in (me, ROOT):
        return Refusal(f"belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        return Refusal(f"can be written by other users (mode {stat.S_IMODE(info.st_mode):04o}, no sticky bit)")
    return None
