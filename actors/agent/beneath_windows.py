"""Folders held open, and what is in them, on Windows: `actors/agent/beneath.py`'s counterpart
(docs/windows.md, "What Symposium does on Windows"). Never yet run on Windows.

Windows' `os.open` takes no folder descriptor (`dir_fd`), so a name cannot be opened relative to a
folder held. What holds the way instead is the handles themselves: each folder of the walk is opened
(CreateFile, through pywin32) without sharing deletion (no FILE_SHARE_DELETE) and kept open until the
read or write is done. While such a handle is open nobody can rename or delete that folder, nor put
a junction or a link in its place, so the path built from the names walked names the folders held
all along. A folder or file is opened as itself, never through a link (FILE_FLAG_OPEN_REPARSE_POINT);
a symbolic link or a junction (their reparse tags, as `os.lstat` reports them while the handle is
held) is read (`os.readlink`) while its handle is held,
and its target walked by the same rules as on POSIX. Other reparse points (OneDrive's placeholders,
deduplicated files) are files and folders as their file systems present them.

A write is a new file created beside the old (CREATE_NEW: never through anything already there),
then moved over it (MoveFileEx with MOVEFILE_REPLACE_EXISTING, which replaces the name itself, a link
put there included). Modes mean nothing on Windows: a new file takes its folder's ACL.
"""

from __future__ import annotations

import os
import secrets
import stat
from typing import Any

import attrs

from actors.agent.beneath import Changed, Entry, Linked

SYMLINK_TAG = 0xA000000C  # IO_REPARSE_TAG_SYMLINK
JUNCTION_TAG = 0xA0000003  # IO_REPARSE_TAG_MOUNT_POINT
LINK_TAGS = frozenset({SYMLINK_TAG, JUNCTION_TAG})
REPARSE_POINT = 0x400  # FILE_ATTRIBUTE_REPARSE_POINT
DIRECTORY = 0x10  # FILE_ATTRIBUTE_DIRECTORY
MISSING = frozenset({2, 3})  # ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND
CHUNK = 1024 * 1024
FILE_READ_ATTRIBUTES = 0x80


@attrs.frozen
class Held:
    """A folder held: its path, as walked, and the handle that keeps it there."""

    path: str
    handle: Any


class WindowsFolders:
    """Handles of folders, and the names in them (pywin32, imported when first used)."""

    def __init__(self) -> None:
        import pywintypes  # type: ignore[import-untyped]
        import win32file  # type: ignore[import-untyped]

        self._api, self._error = win32file, pywintypes.error

    def _handle(self, path: str, access: int, *, disposition: int | None = None, flags: int | None = None) -> Any:
        api = self._api
        return api.CreateFile(
            path,
            access,
            api.FILE_SHARE_READ | api.FILE_SHARE_WRITE,  # never FILE_SHARE_DELETE: held, it stays put
            None,
            api.OPEN_EXISTING if disposition is None else disposition,
            (api.FILE_FLAG_BACKUP_SEMANTICS | api.FILE_FLAG_OPEN_REPARSE_POINT) if flags is None else flags,
            None,
        )

    def _what(self, path: str) -> tuple[int, int, int]:
        """(attributes, reparse tag, number of names) of what `path` names, asked while a handle
        on it is held (so it is what the handle holds: nobody can move it meanwhile)."""
        info = os.lstat(path)
        tag = SYMLINK_TAG if stat.S_ISLNK(info.st_mode) else int(getattr(info, "st_reparse_tag", 0))
        attributes = int(getattr(info, "st_file_attributes", DIRECTORY if stat.S_ISDIR(info.st_mode) else 0))
        return attributes, tag, int(info.st_nlink)

    def _open(self, path: str, access: int) -> Any | None:
        try:
            return self._handle(path, access)
        except self._error as exc:
            if exc.winerror in MISSING:
                return None
            raise OSError(exc.winerror, exc.strerror, path) from None

    def open_root(self, path: str) -> Held:
        handle = self._open(path, self._api.GENERIC_READ)
        if handle is None:
            raise FileNotFoundError(2, "not found", path)
        if not self._what(path)[0] & DIRECTORY:
            handle.Close()
            raise NotADirectoryError(20, "not a folder", path)
        return Held(path, handle)

    def enter(self, parent: Held, name: str) -> Held | Linked | None:
        path = os.path.join(parent.path, name)
        handle = self._open(path, self._api.GENERIC_READ)
        if handle is None:
            return None
        try:
            attributes, tag, _names = self._what(path)
            if tag in LINK_TAGS:
                return Linked(os.readlink(path))  # read while held: the same link
            if not attributes & DIRECTORY:
                raise NotADirectoryError(20, "not a folder", path)
        except BaseException:
            handle.Close()
            raise
        return Held(path, handle)

    def make(self, parent: Held, name: str) -> None:
        try:
            os.mkdir(os.path.join(parent.path, name))
        except FileExistsError:
            pass

    def look(self, parent: Held, name: str) -> Entry:
        path = os.path.join(parent.path, name)
        handle = self._open(path, FILE_READ_ATTRIBUTES)
        if handle is None:
            return Entry(0)
        try:
            attributes, tag, names = self._what(path)
            if tag in LINK_TAGS:
                return Entry(stat.S_IFLNK | 0o777, target=os.readlink(path))
            return Entry((stat.S_IFDIR if attributes & DIRECTORY else stat.S_IFREG) | 0o666, names)
        finally:
            handle.Close()

    def read(self, parent: Held, name: str, limit: int) -> tuple[Entry, bytes]:
        path = os.path.join(parent.path, name)
        handle = self._open(path, self._api.GENERIC_READ)
        if handle is None:
            raise FileNotFoundError(2, "not found", path)
        try:
            attributes, tag, names = self._what(path)
            if tag in LINK_TAGS:
                raise Changed(0, "became a link", path)
            entry = Entry((stat.S_IFDIR if attributes & DIRECTORY else stat.S_IFREG) | 0o666, names)
            if attributes & DIRECTORY or names > 1:
                return entry, b""
            data = b""
            while len(data) <= limit:
                _, chunk = self._api.ReadFile(handle, CHUNK)
                if not chunk:
                    break
                data += bytes(chunk)
            return entry, data
        finally:
            handle.Close()

    def replace(self, parent: Held, name: str, data: bytes, mode: int | None) -> None:
        api = self._api
        temporary = os.path.join(parent.path, f".{name}.symposium-{secrets.token_hex(6)}")
        try:
            handle = api.CreateFile(temporary, api.GENERIC_WRITE, 0, None, api.CREATE_NEW, api.FILE_ATTRIBUTE_NORMAL, None)
            try:
                api.WriteFile(handle, data)
            finally:
                handle.Close()
            api.MoveFileEx(temporary, os.path.join(parent.path, name), api.MOVEFILE_REPLACE_EXISTING)
        except self._error as exc:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise OSError(exc.winerror, exc.strerror, temporary) from None

    def close(self, folder: Held) -> None:
        folder.handle.Close()
