"""The files an agent writes through the client (ACP `fs/write_text_file`), on disk (docs/DESIGN.md, "Edits through the client").

Blocking calls, run on a worker thread by the caller. Before a write, what the file holds on disk is
read, for the turn machine to turn the write into the smallest replacements (VS Code saves the edits
its edit tools make, measured in the real Chat view, so the disk holds the agent's earlier routed
edits). A write the backend does itself (no edit tools offered this turn) replaces the file
atomically: a new file beside it, created exclusively, then renamed over it, keeping the old file's
permissions; a symlink is written through to its target, as an editor does.

Only regular files are read or replaced: a FIFO, a device, a socket or a folder at the path is refused
at once, and a file is opened without blocking (`O_NONBLOCK`) and checked again once open, so no path
can hold a thread. Where a write may land at all is `protocol/host/confinement.py`'s rule, applied by the
caller to `resolved` paths.
"""

from __future__ import annotations

import os
import secrets
import stat

MAX_READ = 16 * 1024 * 1024  # an agent's read of a larger file is refused, not held in memory


class FileError(Exception):
    """Why a read or write failed, for the agent; `missing`: there is no such file."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def _absolute(path: object) -> str:
    if not isinstance(path, str) or not os.path.isabs(path):
        raise FileError(f"not an absolute path: {path!r}")
    return path


def resolved(path: object) -> str:
    """The absolute path with every symlink followed (as far as the path exists)."""
    return os.path.realpath(_absolute(path))


def _not_regular(path: str, mode: int) -> FileError:
    kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
    return FileError(f"{path} is {kind}: only regular files are read or written")


def regular_or_missing(path: str) -> bool:
    """True: a regular file is there; False: nothing is; FileError: something else is."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise FileError(f"Cannot use {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode)
    return True


def read_text(path: object) -> str:
    """The file's text (UTF-8); FileError when it is missing, not a regular file, too large or not text."""
    path = _absolute(path)
    if not regular_or_missing(path):
        raise FileError(f"Resource not found: {path}", missing=True)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise FileError(f"Resource not found: {path}", missing=True) from None
    except OSError as exc:
        raise FileError(f"Cannot read {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            if not stat.S_ISREG(mode):  # swapped in since the stat above
                raise _not_regular(path, mode)
            data = file.read(MAX_READ + 1)
    except OSError as exc:
        raise FileError(f"Cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_READ:
        raise FileError(f"{path} is larger than {MAX_READ // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileError(f"{path} is not UTF-8 text") from None


def current(path: object) -> tuple[str | None, bool]:
    """What a write replaces: (its text, True); (None, True) when there is no such file; (None,
    False) when there is one the backend cannot read whole as text (the write then happens on disk).
    FileError when what is there is no regular file: such a write is refused."""
    if not regular_or_missing(_absolute(path)):
        return None, True
    try:
        return read_text(path), True
    except FileError as exc:
        if exc.missing:
            return None, True
        return None, False


def write_text(path: object, content: str) -> None:
    """Replace (or create) the file with `content`, atomically."""
    path = resolved(path)
    folder = os.path.dirname(path)
    try:
        status = os.stat(path)
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise FileError(f"Cannot write {path}: {exc.strerror or exc}") from None
    else:
        if not stat.S_ISREG(status.st_mode):
            raise _not_regular(path, status.st_mode)
        mode = stat.S_IMODE(status.st_mode)
    temporary = os.path.join(folder, f".{os.path.basename(path)}.symposium-{secrets.token_hex(6)}")
    try:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666 if mode is None else 0o600)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(content.encode("utf-8"))
            if mode is not None:
                os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
    except OSError as exc:
        raise FileError(f"Cannot write {path}: {exc.strerror or exc}") from None
