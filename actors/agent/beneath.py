"""Folders held open, and what is in them, on POSIX: the file-system side of a confined walk
(`actors/agent/files.py`, `protocol/host/confinement.py`).

A folder is a descriptor; every name is opened relative to the folder's descriptor (`dir_fd`, the
`openat` family) and never through a link (`O_NOFOLLOW`): whatever is renamed or swapped meanwhile,
what is read or written is in the folder held. `actors/agent/beneath_windows.py` does the same with
Windows' handles; `folders()` is the one to use here.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from typing import Any, Protocol

import attrs

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC


class Changed(OSError):
    """What was there changed under the walk (a folder became a link, say): refused, not followed."""


@attrs.frozen
class Linked:
    """The name is a symbolic link (or, on Windows, a junction) holding `target`."""

    target: str


@attrs.frozen
class Entry:
    """What a name in a held folder is, not following a link: `mode` 0 when there is nothing."""

    mode: int
    links: int = 1
    target: str | None = None  # a link's text


class Folders(Protocol):
    """What a confined walk asks of the platform (`PosixFolders` here, `WindowsFolders` on Windows);
    a held folder is whatever the platform holds it by (a descriptor, a handle)."""

    def open_root(self, path: str) -> Any: ...

    def enter(self, parent: Any, name: str) -> Any | Linked | None: ...

    def make(self, parent: Any, name: str) -> None: ...

    def look(self, parent: Any, name: str) -> Entry: ...

    def read(self, parent: Any, name: str, limit: int) -> tuple[Entry, bytes]: ...

    def replace(self, parent: Any, name: str, data: bytes, mode: int | None) -> None: ...

    def close(self, folder: Any) -> None: ...


class PosixFolders:
    """Descriptors of folders, and the names in them."""

    def open_root(self, path: str) -> int:
        return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)

    def enter(self, parent: int, name: str) -> int | Linked | None:
        """The folder `name` in `parent`, held; Linked when it is a link; None when nothing is there."""
        if not _NOFOLLOW:
            return self._enter_checked(parent, name)
        try:
            return os.open(name, _FOLDER, dir_fd=parent)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise
        entry = self.look(parent, name)
        if entry.target is not None:
            return Linked(entry.target)
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", name)

    def _enter_checked(self, parent: int, name: str) -> int | Linked | None:
        """`enter` where the system has no O_NOFOLLOW: what is there is looked at first, and the
        folder opened must be the one looked at (device and inode), else it changed meanwhile."""
        try:
            looked = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(looked.st_mode):
            entry = self.look(parent, name)
            return Linked(entry.target) if entry.target is not None else None
        if not stat.S_ISDIR(looked.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", name)
        fd = os.open(name, _FOLDER, dir_fd=parent)
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (looked.st_dev, looked.st_ino) or not stat.S_ISDIR(opened.st_mode):
            os.close(fd)
            raise Changed(errno.EAGAIN, "changed while it was opened", name)
        return fd

    def make(self, parent: int, name: str) -> None:
        try:
            os.mkdir(name, 0o777, dir_fd=parent)
        except FileExistsError:
            pass

    def look(self, parent: int, name: str) -> Entry:
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return Entry(0)
        if stat.S_ISLNK(info.st_mode):
            try:
                return Entry(info.st_mode, target=os.readlink(name, dir_fd=parent))
            except OSError as exc:
                raise Changed(exc.errno, "changed while it was read", name) from None
        return Entry(info.st_mode, info.st_nlink)

    def read(self, parent: int, name: str, limit: int) -> tuple[Entry, bytes]:
        """The regular file `name` in `parent`, at most `limit` bytes (and one more, to tell)."""
        try:
            fd = os.open(name, os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Changed(exc.errno, "became a link", name) from None
            raise
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not _NOFOLLOW:  # the name may have been a link when opened: it must still be what was opened
                looked = os.stat(name, dir_fd=parent, follow_symlinks=False)
                if (looked.st_dev, looked.st_ino) != (info.st_dev, info.st_ino):
                    raise Changed(errno.EAGAIN, "changed while it was opened", name)
            entry = Entry(info.st_mode, info.st_nlink)
            return entry, file.read(limit + 1) if stat.S_ISREG(info.st_mode) and info.st_nlink <= 1 else b""

    def replace(self, parent: int, name: str, data: bytes, mode: int | None) -> None:
        """`name` in `parent` becomes a file holding `data`: a new file beside it, created exclusively
        and never through a link, renamed over it (the rename replaces the name itself, whatever it is
        by then, so nothing is written through a link swapped in); `mode` kept when given."""
        temporary = f".{name}.symposium-{secrets.token_hex(6)}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666 if mode is None else 0o600, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                if mode is not None:
                    os.fchmod(file.fileno(), mode)
            os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=parent)
            except OSError:
                pass
            raise

    def close(self, folder: int) -> None:
        os.close(folder)
