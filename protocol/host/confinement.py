"""Where an agent's `fs/write_text_file` may land: inside its session's workspace folder, never under
`.git/` (docs/DESIGN.md, "Edits through the client"; docs/reliability.md, "Hostile agents").

An agent writes through the client so that its edits reach VS Code's review; it cannot use that to
write where the user did not open it (`/etc`, `~/.bashrc`, another project), nor into a repository's
own machinery (`.git/hooks/pre-commit` runs at the user's next commit). The rule is decided here on
paths already resolved by the caller (symlinks followed: `actors/agent/files.py`), so a link inside the
folder that points out of it counts as out. Pure: string operations only.
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Sequence

GIT = ".git"


def write_refusal(real_path: str, roots: Sequence[str], *, windows: bool = False) -> str | None:
    """Why a write to `real_path` (resolved, absolute) is refused, for the agent; None: it may land.

    `roots`: the session's workspace folders, resolved the same way. On Windows (and for the
    case-insensitive comparison there) paths compare case-folded."""
    paths = ntpath if windows else posixpath

    def key(path: str) -> str:
        normal: str = paths.normpath(path)
        return normal.casefold() if windows else normal

    target = key(real_path)
    for root in roots:
        base = key(root)
        try:
            inside = paths.commonpath([base, target]) == base
        except ValueError:  # another drive, or a relative path
            inside = False
        if not inside or target == base:
            continue
        relative = paths.relpath(target, base)
        parts = relative.replace("\\", "/").split("/") if windows else relative.split("/")
        if any(part.casefold() == GIT for part in parts):
            return f"Symposium does not write inside a repository's .git folder: {real_path}"
        return None
    if not roots:
        return f"Symposium writes only inside the chat's workspace folder, and this chat has none: {real_path} is unchanged"
    return f"Symposium writes only inside the workspace folder {roots[0]}: {real_path} is outside it and unchanged"
