"""What a repository's git configuration says about where its hooks are (docs/DESIGN.md, "Edits
through the client").

git runs the hooks of `core.hooksPath` (`git config core.hooksPath .husky`) instead of `.git/hooks`,
so that folder is as much the repository's machinery as `.git` is, and an agent's write into it
must be reviewed (`protocol/host/autorun.py`). The configuration files are read as files by
`actors/agent/hooks.py`, never by running git (git would run with the workspace's own configuration,
the very thing an agent may have written); here their text is read, as git reads it
(git-config(1), "CONFIGURATION FILE"), and the values turned into folders.

Pure: text in, values and paths out.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Iterator

CORE, HOOKS_PATH = "core", "hookspath"
INCLUDES = ("include", "includeif")  # `[include] path = ...`, `[includeIf "gitdir:..."] path = ...`
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}


def _value(raw: str) -> str:
    """A value as git reads it: quotes grouping, `\\` escapes, `#` and `;` starting a comment outside
    quotes, the spaces around it dropped (but those inside quotes)."""
    out: list[str] = []
    quoted = False
    kept = 0  # the length of `out` without the unquoted spaces at its end
    raw = raw.lstrip()
    index = 0
    while index < len(raw):
        char = raw[index]
        index += 1
        if char == "\\" and index < len(raw):
            out.append(_ESCAPES.get(raw[index], raw[index]))
            kept = len(out)
            index += 1
        elif char == '"':
            quoted = not quoted
        elif not quoted and char in "#;":
            break
        else:
            out.append(char)
            if quoted or not char.isspace():
                kept = len(out)
    return "".join(out[:kept])


def entries(text: str) -> Iterator[tuple[str, str, str]]:
    """Each `(section, key, value)` of a configuration file: the section lower-cased without its
    subsection (`includeif` for `[includeIf "gitdir:~/work/"]`), the key lower-cased; a key with no
    `=` is "true", as git reads it. Lines git would reject are passed over."""
    section = ""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            head = line[1:].split("]", 1)[0].strip()
            name = head.split(None, 1)[0] if head.split() else ""
            section = name.split(".", 1)[0].casefold()
            rest = line.split("]", 1)[1].strip() if "]" in line else ""
            if not rest or rest[0] in "#;":
                continue
            line = rest  # `[core] hooksPath = x` on one line
        key, equals, raw = line.partition("=")
        while raw.endswith("\\") and not raw.endswith("\\\\") and index < len(lines):
            raw = raw[:-1] + lines[index]  # a value continued on the next line
            index += 1
        key = key.strip().casefold()
        if key and all(c.isalnum() or c == "-" for c in key):
            yield section, key, _value(raw) if equals else "true"


def hooks_paths(text: str) -> list[str]:
    """Every `core.hooksPath` the file sets (a later one wins in git; every one is kept here)."""
    return [value for section, key, value in entries(text) if (section, key) == (CORE, HOOKS_PATH) and value]


def includes(text: str) -> list[str]:
    """Every file the configuration includes, whatever its condition (`includeIf` is taken as met:
    a folder that might be the hooks' is kept)."""
    return [value for section, key, value in entries(text) if section in INCLUDES and key == "path" and value]


def config_path(value: str, folder: str, home: str, *, windows: bool = False) -> str | None:
    """The absolute folder or file a configuration value names (git-config(1), "pathname"): `~/` is
    the home folder, a relative one is relative to `folder` (for `core.hooksPath`, the working tree;
    for an include, the including file's folder); None for `%(prefix)/`, git's own install."""
    paths = ntpath if windows else posixpath
    if value.startswith("%(prefix)/"):
        return None
    if value == "~" or value.startswith(("~/", "~\\")):
        if not home:
            return None
        value = paths.join(home, value[2:]) if len(value) > 1 else home
    elif value.startswith("~"):
        return None  # another user's home: not this user's repositories
    return str(paths.normpath(value if paths.isabs(value) else paths.join(folder, value)))
