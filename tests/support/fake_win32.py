"""pywin32's `win32file` and `pywintypes`, as far as `actors/agent/beneath_windows.py` calls them,
played on Linux by the POSIX calls nearest to them (docs/windows.md, "What is verified, and how").

This runs the Windows walk's own logic (what it opens, holds, reads as a link, creates and moves)
on Linux. It cannot play what Windows alone does: share modes (a folder held without
FILE_SHARE_DELETE cannot be renamed), reparse tags, CreateFile's own flags. Those have never run.
"""

from __future__ import annotations

import os
import stat
import sys
import types
from typing import Any

FILE_SHARE_READ, FILE_SHARE_WRITE = 1, 2
CREATE_NEW, OPEN_EXISTING = 1, 3
GENERIC_READ, GENERIC_WRITE = 0x80000000, 0x40000000
FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT = 0x02000000, 0x00200000
FILE_ATTRIBUTE_NORMAL = 0x80
MOVEFILE_REPLACE_EXISTING = 1


class error(Exception):
    def __init__(self, winerror: int, funcname: str, strerror: str) -> None:
        super().__init__(winerror, funcname, strerror)
        self.winerror, self.funcname, self.strerror = winerror, funcname, strerror


class Handle:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def Close(self) -> None:
        os.close(self.fd)


def CreateFile(path: str, access: int, share: int, attributes: Any, disposition: int, flags: int, template: Any) -> Handle:
    try:
        if disposition == CREATE_NEW:
            return Handle(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        link = stat.S_ISLNK(os.lstat(path).st_mode)
        if link and not flags & FILE_FLAG_OPEN_REPARSE_POINT:
            raise AssertionError("beneath_windows opens everything as itself")
        return Handle(os.open(path, (os.O_PATH | os.O_NOFOLLOW) if link else os.O_RDONLY | os.O_NONBLOCK))
    except FileNotFoundError:
        raise error(2, "CreateFile", "The system cannot find the file specified.") from None
    except FileExistsError:
        raise error(80, "CreateFile", "The file exists.") from None


def ReadFile(handle: Handle, size: int) -> tuple[int, bytes]:
    return 0, os.read(handle.fd, size)


def WriteFile(handle: Handle, data: bytes) -> tuple[int, int]:
    return 0, os.write(handle.fd, data)


def MoveFileEx(source: str, target: str, flags: int) -> None:
    assert flags & MOVEFILE_REPLACE_EXISTING
    os.replace(source, target)


def install() -> dict[str, types.ModuleType]:
    """The two modules, to put in `sys.modules` (by `monkeypatch.setitem`)."""
    me = sys.modules[__name__]
    win32file = types.ModuleType("win32file")
    for name in ("FILE_SHARE_READ", "FILE_SHARE_WRITE", "CREATE_NEW", "OPEN_EXISTING", "GENERIC_READ", "GENERIC_WRITE", "FILE_FLAG_BACKUP_SEMANTICS", "FILE_FLAG_OPEN_REPARSE_POINT", "FILE_ATTRIBUTE_NORMAL", "MOVEFILE_REPLACE_EXISTING", "CreateFile", "ReadFile", "WriteFile", "MoveFileEx"):
        setattr(win32file, name, getattr(me, name))
    pywintypes = types.ModuleType("pywintypes")
    pywintypes.error = error  # type: ignore[attr-defined]
    return {"win32file": win32file, "pywintypes": pywintypes}
