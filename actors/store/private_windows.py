"""Files only the user can read, on Windows (docs/windows.md, "What Symposium does on Windows").

Windows' mode bits say nothing about who may read a file (folders show 0o777, files 0o666, and
chmod only sets the read-only flag), and there is no `os.getuid`. What keeps a file private
there is its ACL, which a new file or folder inherits from the folder it is made in: the
folders of the user's profile (%USERPROFILE%, with %LOCALAPPDATA% inside it, where the state
folder is) grant only the user, SYSTEM and the Administrators. So on Windows the policy is
where the files are: the state folder is under the profile; a folder the user named elsewhere
(a trace folder) keeps the ACL it has, which the log says. The ACLs themselves are neither read
nor changed. As on POSIX, a file is created with O_EXCL when it must be new, a symbolic link
(or junction) is never followed to a file, and what is not a regular file is refused
(`protocol/host/windows.py`, `file_refusal`).

`actors/store/private.py` hands over to these functions on Windows; they take its arguments, and
`refused`, the error to raise for what must not be used (its `NotPrivate`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from protocol.host.ownership import Refusal
from protocol.host.windows import env_get, file_refusal, folder_refusal, inside

log = logging.getLogger(__name__)

Refused = Callable[[Path, Refusal], OSError]

_BINARY = getattr(os, "O_BINARY", 0)  # else the C runtime would translate \n to \r\n under the text layer's own
_ACCESS = {"r": os.O_RDONLY, "r+": os.O_RDWR, "w": os.O_WRONLY, "w+": os.O_RDWR, "a": os.O_WRONLY | os.O_APPEND, "a+": os.O_RDWR | os.O_APPEND}


def profile_folder(env: Mapping[str, str] = os.environ) -> str:
    """The user's profile folder (%USERPROFILE%), '' when unknown."""
    return env_get(env, "USERPROFILE")


def in_profile(path: str | os.PathLike[str], env: Mapping[str, str] = os.environ) -> bool:
    return inside(os.path.abspath(path), profile_folder(env))


def private_folder(path: str | os.PathLike[str], refused: Refused) -> Path:
    """The folder, created (with the folders above it) if missing; a warning when it lies outside
    the user's profile, whose ACL is what keeps it private. Its ACL is left as it is."""
    folder = Path(path)
    if not folder.exists():
        folder.mkdir(parents=True, exist_ok=True)
    if refusal := folder_refusal(folder.stat().st_mode):
        raise refused(folder, refusal)
    if not in_profile(folder):
        log.warning("%s is outside your user profile: the files written in it can be read by whoever that folder's permissions allow", folder)
    return folder


def private_file(path: str | os.PathLike[str], refused: Refused, *, create: bool = True) -> None:
    """Make sure what is at `path` is a regular file, created if missing (unless not `create`);
    it inherits its folder's ACL. Else `NotPrivate`."""
    try:
        os.close(_descriptor(Path(path), os.O_RDONLY, refused, create=create, new=False))
    except FileNotFoundError:
        if create:
            raise


def open_descriptor(path: str | os.PathLike[str], refused: Refused, plain: str, *, new: bool) -> int:
    """The descriptor `actors.store.private.open_private` opens as a file, on Windows (`plain`: its mode
    without `b`/`t`)."""
    return _descriptor(Path(path), _ACCESS[plain], refused, create=plain[0] != "r", new=new)


def _descriptor(path: Path, access: int, refused: Refused, *, create: bool, new: bool) -> int:
    flags = access | _BINARY
    if create or new:
        try:
            return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            if new:
                raise
    if refusal := file_refusal(os.lstat(path).st_mode):
        raise refused(path, refusal)
    descriptor = os.open(path, flags)
    try:
        if refusal := file_refusal(os.fstat(descriptor).st_mode):
            raise refused(path, refusal)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
