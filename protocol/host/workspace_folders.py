"""Every folder of a multi-root workspace reaches the agent's session (docs/usage.md, "Workspace
folders"). Pure.

The agent's session opens in the first folder (`cwd`); the others go in `session/new`'s
`additionalDirectories` where the agent declares `sessionCapabilities.additionalDirectories` (ACP,
stable since 2026-06-01; Codex's adapter declares it), and are named in its first prompt where it does
not. Writes through the client are allowed in every one of them and nowhere else
(protocol/host/confinement.py takes them all as roots).
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Sequence

MAX_FOLDERS = 64  # a workspace with more is cut here


def other_folders(cwd: str, folders: Sequence[str], *, windows: bool = False) -> tuple[str, ...]:
    """The workspace's folders besides `cwd`: absolute ones only, each once, in the workspace's order."""
    paths = ntpath if windows else posixpath

    def key(path: str) -> str:
        normal: str = paths.normpath(path)
        return normal.casefold() if windows else normal

    seen = {key(cwd)}
    others: list[str] = []
    for folder in folders:
        if not paths.isabs(folder) or key(folder) in seen:
            continue
        seen.add(key(folder))
        others.append(paths.normpath(folder))
    return tuple(others[:MAX_FOLDERS])


def folders_note(others: Sequence[str]) -> str:
    """What an agent that takes no `additionalDirectories` is told in its first prompt."""
    listed = "\n".join(f"- {folder}" for folder in others)
    return f"This VS Code workspace has more folders besides the working directory; you may read and write in them too:\n{listed}\n\n---\n"
