"""Files something runs or loads by itself, which an agent's write must not change unreviewed
(docs/DESIGN.md, "Edits through the client"; docs/reliability.md, "Hostile agents").

A write through the client lands in the user's review when the turn offers VS Code's edit tools
(Agent mode): "files changed", Keep / Undo, and, for some of these files, VS Code's own confirmation
before it applies the edit (`chat.tools.edits.autoApprove`). With no edit tools (Ask and Plan modes,
other consumers) the backend writes the file itself, and nobody sees it. For most files that is the
agent's business; for these it is not: VS Code, git, the shell or an agent runs or loads them without
anyone asking, so a write is code run on the user's machine. Such a write goes through the edit tools
where the turn offers them, and is refused otherwise (or where the tools cannot change the file).

The list is the table below, one entry per thing that loads: the pattern, and what runs it (shown to
the agent in the refusal). A pattern is names below the workspace folder, a glob each, matched at any
depth and case-folded: `a/b` is that file, `a/` that folder and everything in it. The repository's
hooks folder (`core.hooksPath`, `protocol/host/git_config.py`) joins them per write; `.git` itself is
refused outright (`protocol/host/confinement.py`).

Left out, each for its reason: `.github/workflows/` (runs in CI once the user commits and pushes it,
as every test and build script does: the commit is the review); `.gitattributes` (the filters and
diff drivers it names run only when the git configuration defines them, which it cannot); `.gitmodules`
(git ignores the commands it could name, and fetches submodules only when asked); `package.json`,
`Makefile`, `.npmrc` and the like (run when the user runs npm or make, not by themselves).

Pure: names in, a reason out.
"""

from __future__ import annotations

import fnmatch
import ntpath
import posixpath
from collections.abc import Sequence

import attrs


@attrs.frozen
class Autorun:
    pattern: str
    runs_it: str  # what runs or loads it, and when


_VS_CODE = "VS Code loads it as the folder opens: tasks that run then (runOn: folderOpen), MCP servers it starts, the interpreter and terminals it runs"
_DEV_CONTAINER = "Dev Containers run its commands, initializeCommand on this machine, when the folder reopens in a container"
AUTORUN: tuple[Autorun, ...] = (
    Autorun(".vscode/", _VS_CODE),
    Autorun("*.code-workspace", "VS Code loads a workspace file's settings, tasks and launch configurations"),
    Autorun(".devcontainer/", _DEV_CONTAINER),
    Autorun(".devcontainer.json", _DEV_CONTAINER),
    Autorun(".husky/", "git runs these hooks once husky makes the folder core.hooksPath, at the next npm install"),
    Autorun(".envrc", "direnv runs it when a shell enters the folder"),
    Autorun(".env", "VS Code's Python extension loads it into what it runs (python.envFile), as many tools do"),
    Autorun(".venv/", "VS Code's Python extension runs its interpreter as the folder opens and its activate script in new terminals"),
    Autorun("site-packages/", "Python runs the .pth files there at every start"),
    Autorun(".claude/settings.json", "Claude Code runs the hooks and MCP servers it names"),
    Autorun(".claude/settings.local.json", "Claude Code runs the hooks and MCP servers it names"),
    Autorun(".mcp.json", "Claude Code starts the MCP servers it names"),
    Autorun(".gemini/settings.json", "Gemini CLI runs the hooks and MCP servers it names"),
    Autorun(".qwen/settings.json", "Qwen Code runs the hooks and MCP servers it names"),
    Autorun(".github/hooks/", "Copilot's agents run the hooks it holds"),
)


def _matches(pattern: str, below: Sequence[str]) -> bool:
    folder = pattern.endswith("/")
    globs = [p.casefold() for p in pattern.rstrip("/").split("/")]
    names = [n.casefold() for n in below]
    width = len(globs)
    return any(
        (folder or start + width == len(names)) and all(fnmatch.fnmatchcase(name, glob) for name, glob in zip(names[start : start + width], globs, strict=True))
        for start in range(len(names) - width + 1)
    )


def _inside(path: str, folder: str, windows: bool) -> bool:
    paths = ntpath if windows else posixpath
    p, f = str(paths.normpath(path)), str(paths.normpath(folder))
    if windows:
        p, f = p.casefold(), f.casefold()
    separator = "\\" if windows else "/"
    return p == f or p.startswith(f.rstrip(separator) + separator)


def runs_it(below: Sequence[str], real_path: str, hooks: Sequence[str], *, windows: bool = False) -> str | None:
    """What runs or loads the file, when it is one of those (`AUTORUN`, or inside one of the
    repository's `hooks` folders); None for any other file. `below`: its names below the workspace
    folder, no link among them (`confinement.Walk.below`); `real_path` the same, absolute."""
    if windows:
        below = [name.rstrip(" .") for name in below]
    for entry in AUTORUN:
        if _matches(entry.pattern, below):
            return entry.runs_it
    for folder in hooks:
        if _inside(real_path, folder, windows):
            return f"git runs the hooks in {folder} (core.hooksPath) at the next commit"
    return None


def refusal(path: str, why: str, *, tools_offered: bool) -> str:
    """The agent's answer to a write of such a file that cannot go through the edit tools."""
    how = (
        "the edit tools this chat offers cannot make this change (a new file needs create_file; an existing one must be UTF-8 text, not empty, under 2 MiB)"
        if tools_offered
        else "this chat offers none (Ask and Plan modes, other consumers)"
    )
    return f"Symposium writes {path} only through VS Code's edit tools, for the user to review, since {why}; {how}. The file is unchanged"
