"""Files only the user can read, that no one else can make us write: what the backend writes
holds conversations and keys (docs/reliability.md, "Files we write are ours").

Every file the backend writes (the marker key, the stores, transcripts) is created 0600 with
`O_EXCL` (nothing already there, a symbolic link included, is written through), and every folder
it creates is 0700, whatever the umask. What it finds instead is checked before use: a folder
must be the user's (or the superuser's) and writable by no one else unless sticky, a file the
user's alone and a regular one. A symbolic link is never followed to a file, and a FIFO, socket
or device is never opened for use (so never waited on): it is refused with `NotPrivate`, an
`OSError` whose message names the path and says why.

The rules themselves are pure (`protocol/host/ownership.py`); `refusal` is the one place that picks
them for the system the backend runs on. On Windows, where mode bits and owners say nothing,
`actors/store/private_windows.py` does all of it instead (each function below hands over at its start).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import IO, Any

from actors.shared.platform import windows
from protocol.host import ownership
from protocol.host.ownership import Refusal

log = logging.getLogger(__name__)

# Not every system has these; where one is missing, its protection comes from `refusal` alone.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO that slipped past lstat is not waited on either
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_ACCESS = {"r": os.O_RDONLY, "r+": os.O_RDWR, "w": os.O_WRONLY, "w+": os.O_RDWR, "a": os.O_WRONLY | os.O_APPEND, "a+": os.O_RDWR | os.O_APPEND}


class NotPrivate(OSError):
    """What is at a path is not the user's alone to use; the message says which path and why.
    `mendable`: it is the user's own regular file, only open to others (`ownership.Refusal`)."""

    def __init__(self, path: str | os.PathLike[str], refused: Refusal) -> None:
        super().__init__(f"{os.fspath(path)} {refused}")
        self.path = Path(path)
        self.mendable = refused.mendable


def refusal(path: Path, info: os.stat_result, *, folder: bool) -> Refusal | None:
    """Why what `stat` found at `path` must not be used, or None: the rules of this system.

    POSIX's (`protocol/host/ownership.py`): owner and mode bits. `path` is for rules that read more
    than a stat result tells (access lists)."""
    me = os.getuid()
    return ownership.folder_refusal(info, me) if folder else ownership.file_refusal(info, me)


def private_folder(path: str | os.PathLike[str], *, tighten: bool) -> Path:
    """The folder, created 0700 if missing, and so is each missing folder above it (as the XDG
    base directory specification asks: `mkdir(parents=True)` would make those 0777 less the umask).

    A folder that exists (or that another user made as we made it) is refused with `NotPrivate`
    when another user owns it or can write in it (`protocol/host/ownership.py`). `tighten`: the
    folder is ours alone (the state folder), so if others can enter it, it is made 0700. A
    folder the user named for other uses too (a trace folder) is left as it is, with a warning:
    changing its mode could break whatever else lives there. The files in it are 0600 either way.
    """
    if windows():
        from actors.store import private_windows

        return private_windows.private_folder(path, NotPrivate)
    folder = Path(path)
    missing: list[Path] = []
    each = folder
    while not each.exists():
        missing.append(each)
        each = each.parent
    for each in reversed(missing):  # the outermost first
        each.mkdir(exist_ok=True, mode=0o700)
    info = folder.stat()
    if refused := refusal(folder, info, folder=True):
        raise NotPrivate(folder, refused)
    if info.st_mode & 0o077:
        if tighten and info.st_uid == os.getuid() and not info.st_mode & stat.S_ISVTX:
            folder.chmod(0o700)
        else:
            log.warning("%s can be read by other users; the files written in it are private (0600)", folder)
    return folder


def private_file(path: str | os.PathLike[str], *, create: bool = True) -> None:
    """Make sure what is at `path` is a file of the user's alone: created 0600 if missing (unless
    not `create`: then a missing file is as good), made 0600 if it is ours and open to others
    (logged), else `NotPrivate`."""
    if windows():
        from actors.store import private_windows

        return private_windows.private_file(path, NotPrivate, create=create)
    try:
        os.close(_descriptor(Path(path), os.O_RDONLY, create=create, new=False, mend=True))
    except FileNotFoundError:
        if create:
            raise


def open_private(path: str | os.PathLike[str], mode: str = "a", *, new: bool = False, **options: Any) -> IO[Any]:
    """`open(path, mode, **options)` for a file of the user's alone.

    `new`: the file is created here, 0600, and nothing may already be at `path` (FileExistsError
    otherwise, even for a dangling symbolic link). Else `"r"`/`"r+"` open an existing file, and
    `"w"`/`"a"` an existing one or a new one; an existing one must be the user's alone and a
    regular file (`NotPrivate` otherwise, `mendable` when it is ours but open to others), and
    `"w"` empties it only once that is known.
    """
    plain = mode.replace("b", "").replace("t", "")
    if plain not in _ACCESS:
        raise ValueError(f"open_private: unsupported mode {mode!r}")
    if windows():
        from actors.store import private_windows

        descriptor = private_windows.open_descriptor(path, NotPrivate, plain, new=new)
    else:
        descriptor = _descriptor(Path(path), _ACCESS[plain], create=plain[0] != "r", new=new)
    try:
        if plain[0] == "w" and not new:
            os.ftruncate(descriptor, 0)
        return os.fdopen(descriptor, mode, **options)
    except BaseException:
        os.close(descriptor)
        raise


def _descriptor(path: Path, access: int, *, create: bool, new: bool, mend: bool = False) -> int:
    """An open descriptor on the file at `path`, blocking as usual, created 0600 when missing and
    `create` or `new` (with `new`, only then); an existing entry is checked twice: before it is
    opened (lstat: a FIFO or device is never opened) and as opened (fstat: it did not change
    in between). `mend`: a file of ours open to others is made 0600 rather than refused."""
    flags = access | _NOFOLLOW | _NONBLOCK | _NOCTTY
    if create or new:
        try:
            descriptor = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            if new:
                raise
        else:
            try:
                os.fchmod(descriptor, 0o600)  # exactly 0600, whatever the umask took off
                os.set_blocking(descriptor, True)
            except BaseException:
                os.close(descriptor)
                raise
            return descriptor
    if (refused := refusal(path, os.lstat(path), folder=False)) and not (mend and refused.mendable):
        raise NotPrivate(path, refused)
    descriptor = os.open(path, flags)
    try:
        if refused := refusal(path, os.fstat(descriptor), folder=False):
            if not (mend and refused.mendable):
                raise NotPrivate(path, refused)
            os.fchmod(descriptor, 0o600)
            log.warning("%s %s: made private (0600)", path, refused)
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
