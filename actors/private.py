"""Files only the user can read: what the backend writes holds conversations and keys.

Every file the backend writes (the marker key, the session map, transcripts) is created
0600, and every folder it creates is 0700, whatever the umask.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import IO, Any

log = logging.getLogger(__name__)


def private_folder(path: str | os.PathLike[str], *, tighten: bool) -> Path:
    """The folder, created 0700 if missing, and so is each missing folder above it (as the XDG
    base directory specification asks: `mkdir(parents=True)` would make those 0777 less the umask).

    `tighten`: the folder is ours alone (the state folder), so if others can enter it, it is
    made 0700. A folder the user named for other uses too (a trace folder) is left as it is,
    with a warning: changing its mode could break whatever else lives there. The files in it
    are 0600 either way.
    """
    folder = Path(path)
    missing: list[Path] = []
    each = folder
    while not each.exists():
        missing.append(each)
        each = each.parent
    for each in reversed(missing):  # the outermost first
        each.mkdir(exist_ok=True, mode=0o700)
    info = folder.stat()
    if info.st_mode & 0o077:
        if tighten and info.st_uid == os.getuid() and not info.st_mode & stat.S_ISVTX:
            folder.chmod(0o700)
        else:
            log.warning("%s can be read by other users; the files written in it are private (0600)", folder)
    return folder


def private_file(path: str | os.PathLike[str]) -> None:
    """Create the file 0600 if it is missing; make it 0600 if it is ours and more open."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        info = os.fstat(descriptor)
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.fchmod(descriptor, 0o600)
    finally:
        os.close(descriptor)


def open_private(path: str | os.PathLike[str], mode: str = "a", **options: Any) -> IO[Any]:
    """`open(path, mode)`, the file created 0600 if it does not exist."""
    private_file(path)
    return open(path, mode, **options)  # noqa: SIM115 - the caller owns it
