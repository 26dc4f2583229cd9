"""The files an agent writes through the client (ACP `fs/write_text_file`), on disk (docs/DESIGN.md, "Edits through the client").

Blocking calls, run on a worker thread by the caller. Where a write may land is decided on what is
opened, in the same step as the read or the write (`protocol/host/confinement.py`): each call walks
from a handle on the chat's workspace folder, one name at a time, never through a link the system
follows (`actors/agent/beneath.py`, `beneath_windows.py` on Windows), and reads or writes in the last
folder held. A link is read and its target walked by the same rules, so one that stays inside is
written through, as an editor does, and one that points out is refused; a folder swapped for a link
between the check a write gets as it arrives (`before`) and the write itself (`write_text`) is met
by the write's own walk.

Before a write, what the file holds is read, for the turn machine to turn the write into the
smallest replacements (VS Code saves the edits its edit tools make, measured in the real Chat view,
so the disk holds the agent's earlier routed edits), with whether something runs the file by itself
(`protocol/host/autorun.py`): such a file is never written here. A write the backend does itself
(no edit tools offered this turn) replaces the file atomically: a new file beside it, created
exclusively, then renamed over it, keeping the old file's permissions.

Only a regular file with one name is read or replaced: a FIFO, a device, a socket, a folder or a
hard-linked file is refused, and a file is opened without blocking (`O_NONBLOCK`) and checked again
once open, so no path can hold a thread.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from actors.agent.beneath import Entry, Folders, Linked, PosixFolders
from actors.agent.hooks import hooks_folders
from actors.shared.platform import ON_WINDOWS, windows
from protocol.host import autorun
from protocol.host.confinement import Enter, Last, Refused, Up, Walk, file_refusal, outside, parts_beneath

MAX_READ = 16 * 1024 * 1024  # an agent's read of a larger file is refused, not held in memory


class FileError(Exception):
    """Why a read or write failed, for the agent; `missing`: there is no such file."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


@attrs.frozen
class Before:
    """What a write would replace: `text` (None: no such file, or not text); `diffable`: the backend
    could read it whole as text (or there is none); `runs_it`: what runs the file by itself, if anything."""

    text: str | None
    diffable: bool = True
    runs_it: str | None = None


def folders() -> Folders:
    """The platform's way to hold folders and open names in them."""
    if ON_WINDOWS:
        from actors.agent.beneath_windows import WindowsFolders

        return WindowsFolders()
    return PosixFolders()


@attrs.define
class _Walked:
    """A walk that reached its file: the folders held (`None` below a folder that is not there yet),
    the file's name in the last, what is there, and the file's names below the workspace folder."""

    fs: Folders
    held: list[Any]
    name: str
    entry: Entry
    below: list[str]
    root: str

    def runs_it(self) -> str | None:
        real = os.path.join(self.root, *self.below)
        return autorun.runs_it(self.below, real, hooks_folders(self.root, self.below), windows=windows())


def _let_go(fs: Folders, held: list[Any], keep: int) -> None:
    while len(held) > keep:
        folder = held.pop()
        if folder is not None:
            fs.close(folder)


@contextlib.contextmanager
def _walk(path: object, workspace: Sequence[str], *, make: bool) -> Iterator[_Walked]:
    """Walk from the workspace folder `path` is written under (one of `workspace`'s) to the file it
    names (`make`: creating the folders missing on the way), holding each folder; FileError when the
    walk refuses it. A link never leads from one workspace folder into another: each walk stays in one."""
    if not isinstance(path, str) or not os.path.isabs(path):
        raise FileError(f"not an absolute path: {path!r}")
    assert not isinstance(workspace, str), "the workspace's folders, not one folder's name"
    # Each folder resolved once: the user chose it, links and all.
    spellings = [(folder, os.path.realpath(folder)) for folder in workspace if folder]
    home = next(((f, r) for f, r in spellings if parts_beneath(path, [f, r], windows=windows()) is not None), None)
    if home is None:
        raise FileError(outside(path, [f for f, _ in spellings]))
    folder, root = home
    walk = Walk.to(path, [folder, root], windows=windows())
    fs = folders()
    try:
        held: list[Any] = [fs.open_root(root)]
    except OSError as exc:
        raise FileError(f"Cannot open the workspace folder {folder}: {exc.strerror or exc}") from None
    try:
        while True:
            step = walk.next()
            if isinstance(step, Refused):
                raise FileError(step.why)
            if isinstance(step, Up):
                _let_go(fs, held, len(walk.entered) + 1)
            elif isinstance(step, Enter):
                parent = held[-1]
                got = None if parent is None else fs.enter(parent, step.name)
                if got is None and parent is not None and make:
                    fs.make(parent, step.name)
                    got = fs.enter(parent, step.name)
                if isinstance(got, Linked):
                    walk.link(got.target)
                    _let_go(fs, held, len(walk.entered) + 1)
                else:
                    held.append(got)
            elif isinstance(step, Last):
                entry = Entry(0) if held[-1] is None else fs.look(held[-1], step.name)
                if entry.target is not None:
                    walk.link(entry.target)
                    _let_go(fs, held, len(walk.entered) + 1)
                    continue
                yield _Walked(fs, held, step.name, entry, walk.below(), root)
                return
    except NotADirectoryError:
        raise FileError(f"Cannot use {path}: a folder on its way is a file") from None
    except OSError as exc:
        raise FileError(f"Cannot use {path}: {exc.strerror or exc}") from None
    finally:
        _let_go(fs, held, 0)


def before(path: object, workspace: Sequence[str]) -> Before:
    """What a write to `path` would replace, in one of the chat's `workspace` folders. FileError when
    the write is refused: outside them, under `.git`, or what is there is no regular file."""
    with _walk(path, workspace, make=False) as walked:
        runs_it = walked.runs_it()
        if walked.entry.mode == 0:
            return Before(None, True, runs_it)
        if why := file_refusal(str(path), walked.entry.mode, walked.entry.links):
            raise FileError(why)
        try:
            entry, data = walked.fs.read(walked.held[-1], walked.name, MAX_READ)
        except FileNotFoundError:
            return Before(None, True, runs_it)
        except OSError:
            return Before(None, False, runs_it)  # unreadable: written on disk (or refused) as it is
        if why := file_refusal(str(path), entry.mode, entry.links):  # swapped in since the look
            raise FileError(why)
        if len(data) > MAX_READ:
            return Before(None, False, runs_it)
        try:
            return Before(data.decode("utf-8"), True, runs_it)
        except UnicodeDecodeError:
            return Before(None, False, runs_it)


def write_text(path: object, content: str, workspace: Sequence[str]) -> None:
    """Replace (or create) the file `path` names in one of the chat's `workspace` folders with
    `content`, atomically, checked as it is written (FileError when refused)."""
    with _walk(path, workspace, make=True) as walked:
        if walked.held[-1] is None:
            raise FileError(f"Cannot write {path}: its folder could not be made")
        if runs_it := walked.runs_it():
            raise FileError(autorun.refusal(str(path), runs_it, tools_offered=False))
        mode = None
        if walked.entry.mode:
            if why := file_refusal(str(path), walked.entry.mode, walked.entry.links):
                raise FileError(why)
            mode = stat.S_IMODE(walked.entry.mode)
        try:
            walked.fs.replace(walked.held[-1], walked.name, content.encode("utf-8"), mode)
        except OSError as exc:
            raise FileError(f"Cannot write {path}: {exc.strerror or exc}") from None
