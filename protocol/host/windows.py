"""How Windows finds and starts a program, decided as plain functions (docs/windows.md).

Windows runs what CreateProcess can start: `.exe` and `.com` files. A `.cmd` or `.bat` file
runs only through cmd.exe, which reads its command line as a command language (`%VAR%`,
`&`, `|`, quotes), so an agent's arguments could become commands of their own. The npm
shims (`npx.cmd`, `npm.cmd`) are the usual such agents: they are run as what they run,
`node.exe` with npm's own CLI script, and no cmd.exe at all. Any other `.cmd` or `.bat`
agent runs through cmd.exe with every argument quoted and arguments cmd.exe would read
inside quotes (`"`, `%`, `!`, control characters) refused.

A command name is looked up as Windows' own shells do, through PATHEXT, but never in the
working folder (the workspace: docs/reliability.md, "What the workspace cannot do") and only
with the extensions that can be started (`.exe`, `.com`, `.cmd`, `.bat`): `npx` is
`npx.cmd`, never the extension-less shell script npm puts beside it.

Pure: the file system is asked through the `is_file` callable the caller passes. Paths are
Windows paths (`ntpath`), whatever this module runs on, so the tests run it on Linux.
"""

from __future__ import annotations

import ntpath
import stat
from collections.abc import Callable, Mapping

from protocol.host.ownership import Refusal, kind

RUNNABLE = (".com", ".exe", ".bat", ".cmd")  # what CreateProcess starts (the last two through cmd.exe)
DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC"  # Windows' own default
NPM_SHIMS = {"npx.cmd": "npx-cli.js", "npm.cmd": "npm-cli.js"}
# What cmd.exe still reads inside double quotes: variables (%), delayed expansion (!), the quote
# itself, and line ends. Refused rather than escaped: an escape that one .cmd file's own parsing
# (`%*`, `%1`) undoes is an injection.
CMD_UNSAFE = frozenset('"%!') | frozenset(chr(c) for c in range(32))


class UnsafeArgument(ValueError):
    """An argument a `.cmd`/`.bat` agent cannot be given safely through cmd.exe."""


def _extensions(pathext: str) -> list[str]:
    """PATHEXT's extensions that can be started, in PATHEXT's order (lower case)."""
    wanted = [ext.strip().lower() for ext in (pathext or DEFAULT_PATHEXT).split(";")]
    ordered = [ext for ext in wanted if ext in RUNNABLE]
    return list(dict.fromkeys(ordered)) or [".exe"]


def candidates(command: str, path: str, pathext: str, cwd: str) -> list[str]:
    """The files `command` may name, in the order Windows' shells try them.

    A command with a folder in it (`bin\\agent`, `C:\\tools\\agent.exe`) is that file, relative
    to `cwd`; a bare name is looked for in each folder of `path` (`;`-separated), never in the
    working folder. A name that already ends in a runnable extension is tried as it is; any
    name is tried with each runnable extension of `pathext` added.
    """
    exts = _extensions(pathext)
    has_ext = ntpath.splitext(command)[1].lower() in RUNNABLE
    names = ([command] if has_ext else []) + [command + ext for ext in exts]
    if ntpath.dirname(command) or ntpath.splitdrive(command)[0]:
        base = command if ntpath.isabs(command) else ntpath.join(cwd, command)
        return [ntpath.normpath(base[: len(base) - len(command)] + name) for name in names]
    folders = [folder.strip().strip('"') for folder in path.split(";")]
    return [ntpath.join(folder, name) for folder in folders if folder for name in names]


def resolve(command: str, path: str, pathext: str, cwd: str, is_file: Callable[[str], bool]) -> str | None:
    """The file `command` names (see `candidates`), or None."""
    return next((c for c in candidates(command, path, pathext, cwd) if is_file(c)), None)


def npm_shim(resolved: str, is_file: Callable[[str], bool]) -> str | None:
    """The npm CLI script an `npx.cmd`/`npm.cmd` shim runs (`node_modules\\npm\\bin\\npx-cli.js`
    beside it), or None when `resolved` is not one."""
    script = NPM_SHIMS.get(ntpath.basename(resolved).lower())
    if script is None:
        return None
    cli = ntpath.join(ntpath.dirname(resolved), "node_modules", "npm", "bin", script)
    return cli if is_file(cli) else None


def cmd_quote(word: str) -> str:
    """One word of a cmd.exe command line, in double quotes; raises UnsafeArgument for a word
    cmd.exe would read even there. Backslashes before the closing quote are doubled, so the
    program's own parsing (the C runtime's rules) does not read `\\"` as a quote."""
    bad = sorted({c for c in word if c in CMD_UNSAFE})
    if bad:
        shown = ", ".join(repr(c) for c in bad)
        raise UnsafeArgument(f"{word!r} holds {shown}, which cmd.exe reads even inside quotes")
    trailing = word[len(word.rstrip("\\")) :]
    return '"' + word + trailing + '"'


def cmd_line(comspec: str, script: str, args: list[str]) -> str:
    """The command line that runs a `.cmd`/`.bat` file through cmd.exe, given as a string (it
    must reach CreateProcess as it is). /d: no AutoRun commands; /v:off: no `!` expansion;
    /s /c "...": cmd.exe strips the outer quotes and runs the rest as it is."""
    inner = " ".join(cmd_quote(word) for word in [script, *args])
    return f'"{comspec}" /d /v:off /s /c "{inner}"'


def comspec(env: Mapping[str, str]) -> str:
    """cmd.exe in the Windows folder (not whatever %ComSpec% or the PATH say)."""
    root = env.get("SYSTEMROOT") or env.get("SystemRoot") or "C:\\Windows"
    return ntpath.join(root, "System32", "cmd.exe")


def launch(
    resolved: str,
    args: list[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    is_file: Callable[[str], bool],
) -> list[str] | str:
    """How to start the program `resolved` (from `resolve`) with `args`: an argv list for a
    program CreateProcess starts, or a whole command line (a string) for cmd.exe. Raises
    UnsafeArgument for a `.cmd`/`.bat` agent given an argument that cmd.exe would read."""
    ext = ntpath.splitext(resolved)[1].lower()
    if ext not in (".cmd", ".bat"):
        return [resolved, *args]
    if cli := npm_shim(resolved, is_file):
        # The shim runs `node.exe` beside it, else the node on PATH: so do we, without cmd.exe.
        beside = ntpath.join(ntpath.dirname(resolved), "node.exe")
        node = beside if is_file(beside) else resolve("node", env_get(env, "PATH"), env_get(env, "PATHEXT"), cwd, is_file)
        if node is not None and ntpath.splitext(node)[1].lower() in (".exe", ".com"):
            return [node, cli, *args]
    return cmd_line(comspec(env), resolved, args)


def env_get(env: Mapping[str, str], name: str) -> str:
    """A variable of a Windows environment, whose names are case-insensitive."""
    if name in env:
        return env[name]
    wanted = name.upper()
    return next((value for key, value in env.items() if key.upper() == wanted), "")


def merged_env(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """`base` with `extra` set over it, names compared as Windows compares them (case-insensitively):
    an agent's `Path` replaces the inherited `PATH` rather than sitting beside it."""
    env = dict(base)
    for name, value in extra.items():
        for key in [k for k in env if k.upper() == name.upper()]:
            del env[key]
        env[name] = value
    return env


def state_home(env: Mapping[str, str], home: str) -> str:
    """Where a program keeps its state on Windows: %LOCALAPPDATA% (`<profile>\\AppData\\Local`)."""
    return env_get(env, "LOCALAPPDATA") or ntpath.join(home, "AppData", "Local")


def file_refusal(mode: int) -> Refusal | None:
    """Why a file the backend keeps must not be used on Windows, or None: only a regular file
    (a symbolic link is never followed). Who may read it is its ACL's to say, not its mode's."""
    return None if stat.S_ISREG(mode) else Refusal(f"is {kind(mode)}, not a regular file")


def folder_refusal(mode: int) -> Refusal | None:
    """Why a folder must not hold the backend's files on Windows, or None: only a folder."""
    return None if stat.S_ISDIR(mode) else Refusal(f"is {kind(mode)}, not a folder")


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies under it, as Windows compares paths (case-insensitively,
    `/` and `\\` alike)."""
    if not folder:
        return False
    p, f = ntpath.normcase(ntpath.normpath(path)), ntpath.normcase(ntpath.normpath(folder))
    return p == f or p.startswith(f.rstrip("\\") + "\\")


def split_command(line: str, *, windows: bool) -> list[str]:
    """A command line typed by hand, split as a POSIX shell would; on Windows a backslash is a
    path's separator, not an escape (`C:\\tools\\agent.exe --acp`): there only quotes group."""
    if not windows:
        import shlex

        return shlex.split(line)
    words: list[str] = []
    word: str | None = None
    quote: str | None = None
    for c in line:
        if quote:
            if c == quote:
                quote = None
            else:
                word = (word or "") + c
        elif c in "\"'":
            quote, word = c, word or ""
        elif c.isspace():
            if word is not None:
                words.append(word)
            word = None
        else:
            word = (word or "") + c
    if quote:
        raise ValueError("No closing quotation")  # as shlex says
    return words if word is None else [*words, word]
