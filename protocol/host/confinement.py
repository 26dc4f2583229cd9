"""Where an agent's `fs/write_text_file` may land: inside its session's workspace folder, never under
`.git/`, only on a regular file with one name (docs/DESIGN.md, "Edits through the client";
docs/reliability.md, "Hostile agents").

An agent writes through the client so that its edits reach VS Code's review; it cannot use that to
write where the user did not open it (`/etc`, `~/.bashrc`, another project), nor into a repository's
own machinery (`.git/hooks/pre-commit` runs at the user's next commit).

The rule is applied to what is opened, never to a path resolved beforehand: a path resolved once and
opened later can be moved by a link swapped in between (the agent waits on a card, replaces a folder
of the checked path with a link out, and the write follows it). So the caller
(`actors/agent/files.py`) walks down from a handle on the workspace folder one name at a time, asks
the system never to follow a link, and asks a `Walk` what each step is; a link it meets is read and
its target walked by the same rules, so a link that stays inside is followed as an editor follows it,
and one that points out is refused. Each write walks again, at the moment it writes.

Pure: string operations only. Paths are POSIX paths, or Windows paths (`ntpath`) with `windows`.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
import stat
from collections.abc import Sequence
from types import ModuleType

import attrs

from protocol.host.ownership import kind

GIT = ".git"
MAX_LINKS = 40  # links followed in one walk, as Linux's own limit (ELOOP)

# Names Windows reads as devices, in any folder and with any extension (`nul.txt` is NUL).
WINDOWS_DEVICES = frozenset({"con", "prn", "aux", "nul", "conin$", "conout$"} | {f"{p}{n}" for p in ("com", "lpt") for n in "123456789¹²³"})
# An 8.3 short name (`GIT~1`, `VSCODE~1.JSO`): another spelling of a long name, whichever it is.
SHORT_NAME = re.compile(r"^[^~.]{1,6}~[0-9]+(\.[^.]{0,3})?$")


@attrs.frozen
class Enter:
    """Open the folder `name` beneath the one held last, never through a link."""

    name: str


@attrs.frozen
class Up:
    """`..`: let go of the folder held last, back to the one it was entered from."""


@attrs.frozen
class Last:
    """`name` in the folder held last is the file itself."""

    name: str


@attrs.frozen
class Refused:
    """Why the walk stops: the write (or read) is refused, for the agent."""

    why: str


Step = Enter | Up | Last | Refused


def _paths(windows: bool) -> ModuleType:
    return ntpath if windows else posixpath


def _windows_path(path: str) -> str:
    """A Windows path with `\\` separators, without the long-path prefix a link's target may carry."""
    path = path.replace("/", "\\")
    return path[4:] if path.startswith("\\\\?\\") else path


def _split(path: str, windows: bool) -> list[str]:
    if windows:
        return [p for p in ntpath.splitdrive(_windows_path(path))[1].split("\\") if p not in ("", ".")]
    return [p for p in path.split("/") if p not in ("", ".")]


def _key(name: str, windows: bool) -> str:
    """A name as the file systems users have compare it: case-folded (macOS and Windows ignore case),
    and on Windows without the trailing dots and spaces Windows drops (`.git.` is `.git`)."""
    return name.rstrip(" .").casefold() if windows else name.casefold()


def _spelled(names: Sequence[str], windows: bool) -> list[str]:
    """Names compared as the system compares paths: as spelled on POSIX, as Windows does there."""
    return [_key(name, windows) for name in names] if windows else list(names)


def parts_beneath(path: str, roots: Sequence[str], *, windows: bool = False) -> list[str] | None:
    """`path` (absolute) as names below the first of `roots` it is written under, `..` kept for the
    walk; None when it is under none. `roots` are spellings of the workspace folder (as given and
    resolved): a path is only compared as written, the walk does the rest."""
    paths = _paths(windows)
    if not paths.isabs(path):
        return None
    drive = ntpath.splitdrive(_windows_path(path))[0].casefold() if windows else ""
    names = _split(path, windows)
    for root in roots:
        if windows and ntpath.splitdrive(_windows_path(root))[0].casefold() != drive:
            continue
        base = _split(root, windows)
        if len(names) >= len(base) and _spelled(names[: len(base)], windows) == _spelled(base, windows):
            return names[len(base) :]
    return None


def name_refusal(name: str, shown: str, *, windows: bool = False) -> str | None:
    """Why a file or folder of this name is never written through the client, or None."""
    if _key(name, windows) == GIT:
        return f"Symposium does not write inside a repository's .git folder: {shown}"
    if windows:
        if ":" in name:
            return f"Symposium does not write a file's alternate data stream (a name with ':'): {shown}"
        if _key(name.split(".")[0], windows) in WINDOWS_DEVICES:
            return f"{name!r} names a device on Windows, not a file: {shown} is refused"
        if SHORT_NAME.match(name.rstrip(" .")):
            return f"{name!r} may be Windows' short name for another file or folder; name it by its long name: {shown} is refused"
    return None


def outside(path: str, roots: Sequence[str]) -> str:
    if not roots:
        return f"Symposium writes only inside the chat's workspace folder, and this chat has none: {path} is unchanged"
    if len(roots) == 1:
        return f"Symposium writes only inside the workspace folder {roots[0]}: {path} is outside it and unchanged"
    return f"Symposium writes only inside the workspace folders ({', '.join(roots)}): {path} is outside them and unchanged"


@attrs.define
class Walk:
    """The way from the workspace folder down to the file `path` names, one step at a time.

    The caller holds a handle per folder in `entered` (the workspace folder's first) and, after each
    step, keeps exactly `len(entered) + 1` of them: `Up`, and a link whose target starts again from
    the workspace folder, shorten `entered`. It opens what `Enter` names without following a link;
    when that (or `Last`'s name) is a link, it passes the link's text to `link`, and carries on."""

    path: str
    roots: Sequence[str]
    windows: bool = False
    entered: list[str] = attrs.field(factory=list)  # the folders held below the workspace folder, by real name
    _pending: list[str] = attrs.field(factory=list)  # the names still to walk, the next one last
    _links: int = 0
    _refused: str | None = None
    _stepped: Step | None = None

    @classmethod
    def to(cls, path: str, roots: Sequence[str], *, windows: bool = False) -> Walk:
        walk = cls(path, roots, windows)
        names = parts_beneath(path, roots, windows=windows)
        if names is None:
            walk._refused = outside(path, roots)
        else:
            walk._pending = names[::-1]
        return walk

    def next(self) -> Step:
        self._stepped = self._next()
        return self._stepped

    def _next(self) -> Step:
        if self._refused is not None:
            return Refused(self._refused)
        while self._pending:
            name = self._pending.pop()
            if name == ".":
                continue
            if name == "..":
                if not self.entered:
                    return self._refuse(outside(self.path, self.roots))
                self.entered.pop()
                return Up()
            if why := name_refusal(name, self.path, windows=self.windows):
                return self._refuse(why)
            if not self._pending:
                return Last(name)
            self.entered.append(name)
            return Enter(name)
        return self._refuse(f"{self.path} is a folder: only regular files are read or written")

    def _refuse(self, why: str) -> Refused:
        self._refused = why
        return Refused(why)

    def link(self, target: str) -> None:
        """The name the last step opened is a link holding `target`: walk that instead (an absolute
        target from the workspace folder, which it must lie in; a relative one from where the link is)."""
        if isinstance(self._stepped, Enter):
            self.entered.pop()
        self._links += 1
        if self._links > MAX_LINKS:
            self._refused = f"{self.path} goes through more than {MAX_LINKS} links"
            return
        if _paths(self.windows).isabs(target) or (self.windows and target.startswith(("\\", "/"))):
            names = parts_beneath(target, self.roots, windows=self.windows)
            if names is None:
                self._refused = f"{self.path} goes through a link to {target}, outside the workspace folder {self.roots[0]}: it is unchanged"
                return
            self.entered.clear()
        else:
            names = _split(target, self.windows)
        self._pending.extend(names[::-1])

    def below(self) -> list[str]:
        """Once the walk is at `Last`: the file's names below the workspace folder, no link among them."""
        assert isinstance(self._stepped, Last)
        return [*self.entered, self._stepped.name]


def file_refusal(shown: str, mode: int, links: int) -> str | None:
    """Why what is at the path may not be read or replaced for an agent, or None: only a regular
    file, with no other name (a hard link's other name, outside the folder maybe, would change too
    where an editor writes in place)."""
    if not stat.S_ISREG(mode):
        return f"{shown} is {'a folder' if stat.S_ISDIR(mode) else kind(mode)}: only regular files are read or written"
    if links > 1:
        return f"{shown} has {links} names (hard links): Symposium does not write a file that is also elsewhere"
    return None
