"""Where git runs a repository's hooks from, read from its configuration files (docs/DESIGN.md,
"Edits through the client").

`core.hooksPath` moves a repository's hooks out of `.git/hooks` into a folder of the working tree
(`.husky`, `tools/hooks`), which `protocol/host/autorun.py` then counts among the files that run by
themselves. The configuration is read as files, never by running git: git would run with the
workspace's own configuration, whose `core.fsmonitor` or aliases are programs. Read: the
repository's own (`.git/config`, a worktree's `config.worktree`, and through a `.git` file the
folder it names), the user's (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`, or `$GIT_CONFIG_GLOBAL`),
the system's (`/etc/gitconfig`, or `$GIT_CONFIG_SYSTEM`), and the files they include, whatever the
condition. Every value found counts, so a folder that may be the hooks' is kept.

Blocking calls, on the agent's file threads. A file that cannot be read counts as empty.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from actors.shared.platform import windows
from protocol.host.git_config import config_path, hooks_paths, includes

MAX_CONFIG = 1024 * 1024  # a configuration file larger than this is not read
MAX_INCLUDES = 10  # include depth, as git's own limit


def _text(path: str) -> str | None:
    """A small regular file's text; None when it is missing, not a regular file, or too large."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG:
            return None
        return file.read(MAX_CONFIG).decode("utf-8", "replace")


def _home() -> str:
    return os.environ.get("USERPROFILE", "") if windows() and "USERPROFILE" in os.environ else os.path.expanduser("~")


def _values(path: str, home: str, depth: int = 0) -> list[str]:
    """The hooks paths a configuration file sets, with those of the files it includes."""
    text = _text(path)
    if text is None:
        return []
    found = hooks_paths(text)
    if depth < MAX_INCLUDES:
        for included in includes(text):
            if (file := config_path(included, os.path.dirname(path), home, windows=windows())) is not None:
                found += _values(file, home, depth + 1)
    return found


def _user_configs(home: str) -> list[str]:
    env = os.environ
    if env.get("GIT_CONFIG_GLOBAL"):
        files = [env["GIT_CONFIG_GLOBAL"]]
    else:
        xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files = [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        files.append(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    return files


def _git_folder(tree: str) -> str | None:
    """The repository folder of the working tree `tree`: its `.git` folder, or the folder a `.git`
    file names (`gitdir: ...`: a worktree or a submodule); None when there is none."""
    dot_git = os.path.join(tree, ".git")
    try:
        mode = os.lstat(dot_git).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return dot_git
    text = _text(dot_git) or ""
    if text.startswith("gitdir:"):
        return os.path.normpath(os.path.join(tree, text[len("gitdir:") :].strip()))
    return None


def _repository_configs(git_folder: str) -> list[str]:
    files = [os.path.join(git_folder, "config"), os.path.join(git_folder, "config.worktree")]
    common = (_text(os.path.join(git_folder, "commondir")) or "").strip()
    if common:
        files.append(os.path.join(os.path.normpath(os.path.join(git_folder, common)), "config"))
    return files


def _working_trees(root: str, below: Sequence[str]) -> list[tuple[str, str]]:
    """(working tree, repository folder) of the repositories a file `below` the workspace folder
    `root` may be in: the one holding `root` (it or the nearest folder above with a `.git`), and any
    nested in the folders between `root` and the file."""
    trees: list[tuple[str, str]] = []
    folder = root
    while True:
        if (git := _git_folder(folder)) is not None:
            trees.append((folder, git))
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for depth in range(1, len(below)):
        tree = os.path.join(root, *below[:depth])
        if (git := _git_folder(tree)) is not None:
            trees.append((tree, git))
    return trees


def hooks_folders(root: str, below: Sequence[str]) -> list[str]:
    """The folders git runs hooks from for a file `below` the workspace folder `root` (resolved),
    each as configured and resolved; [] when no configuration moves them out of `.git`."""
    home = _home()
    trees = _working_trees(root, below)
    if not trees:
        return []
    user = [value for path in _user_configs(home) for value in _values(path, home)]
    found: list[str] = []
    for tree, git in trees:
        values = [value for path in _repository_configs(git) for value in _values(path, home)] + user
        for value in values:
            if (folder := config_path(value, tree, home, windows=windows())) is not None:
                found += [folder, os.path.realpath(folder)]
    return list(dict.fromkeys(found))
