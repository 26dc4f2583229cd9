"""Runs the backend, or imports all of it, with what Windows lacks taken away (docs/windows.md).

    python -I tests/support/without_posix.py import-all        every module of ours, and the start path
    python -I tests/support/without_posix.py symposium ARGS...  `python -m symposium ARGS...`

No Windows machine runs the tests, so this is the next best check that the backend does not
lean on POSIX: our modules cannot import the modules Windows lacks (fcntl, resource, termios,
pwd, grp, ...), the functions and signals Windows' `os` and `signal` lack are gone for
everyone (os.getuid, os.killpg, os.setsid, signal.SIGUSR1, signal.SIGKILL, ...), trio has no
`FdStream`, and `ctypes.CDLL(None)` raises TypeError, as it does there. Third-party modules may
still import what they like: whether trio or the mcp SDK run on Windows is theirs to say.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.abc
import os
import pkgutil
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OURS = tuple(str(ROOT / package) + os.sep for package in ("symposium", "actors", "protocol"))

# Modules the Windows build of CPython does not have.
POSIX_MODULES = frozenset({
    "fcntl", "resource", "termios", "tty", "pty", "pwd", "grp", "syslog", "crypt", "spwd", "nis",
    "posix", "_posixsubprocess", "_posixshmem", "readline", "curses",
})
# Functions and constants of `os` and `signal` that exist on POSIX only.
POSIX_OS = (
    "getuid", "geteuid", "getgid", "getegid", "getgroups", "setuid", "setgid", "seteuid", "setegid",
    "getpgrp", "getpgid", "setpgid", "setpgrp", "setsid", "getsid", "killpg", "fork", "forkpty", "openpty",
    "fchmod", "fchown", "chown", "lchown", "chroot", "wait", "wait3", "wait4", "WNOHANG", "WUNTRACED",
    "mkfifo", "mknod", "pipe2", "sync", "getloadavg", "ttyname", "ctermid", "sched_setaffinity",
    "sched_getaffinity", "getpriority", "setpriority", "nice", "pidfd_open", "O_NOFOLLOW", "O_NONBLOCK",
    "get_blocking", "set_blocking",  # on Windows only from Python 3.12
)
POSIX_SIGNAL = (
    "SIGKILL", "SIGUSR1", "SIGUSR2", "SIGHUP", "SIGQUIT", "SIGCHLD", "SIGPIPE", "SIGALRM", "SIGSTOP",
    "SIGCONT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGWINCH", "SIGXCPU", "SIGPROF", "SIGVTALRM",
    "pthread_kill", "pthread_sigmask", "sigwait", "sigwaitinfo", "sigtimedwait", "sigpending",
    "setitimer", "getitimer", "alarm", "pause", "siginterrupt",
)


def _importer_is_ours() -> bool:
    """Whether the import under way was asked for by a module of ours (the first frame outside
    the import machinery)."""
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib") or "importlib" in frame.f_code.co_filename):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(OURS)


class _NoPosix(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name.split(".")[0] in POSIX_MODULES and _importer_is_ours():
            raise ModuleNotFoundError(f"No module named {name!r} (as on Windows)", name=name)
        return None


class _CDLL(ctypes.CDLL):
    def __init__(self, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name is None:
            raise TypeError("LoadLibrary() argument 1 must be str, not None (as on Windows)")
        super().__init__(name, *args, **kwargs)


def hide_posix() -> None:
    """Take away what Windows lacks, for the rest of this process."""
    import trio  # its own platform code is trio's: imported first, as it is

    for name in POSIX_MODULES:
        sys.modules.pop(name, None)  # third parties keep theirs; an import of ours goes to the finder
    sys.meta_path.insert(0, _NoPosix())
    for module, names in ((os, POSIX_OS), (signal, POSIX_SIGNAL)):
        for name in names:
            if hasattr(module, name):
                delattr(module, name)
    if hasattr(trio.lowlevel, "FdStream"):
        del trio.lowlevel.FdStream
    ctypes.CDLL = _CDLL  # type: ignore[misc]


def import_all() -> list[str]:
    """Import every module of ours (but `symposium.__main__`, which runs the backend)."""
    names = []
    for package in ("protocol", "actors", "symposium"):
        importlib.import_module(package)
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if info.name != "symposium.__main__":
                importlib.import_module(info.name)
                names.append(info.name)
    return names


def start_path() -> None:
    """What the backend calls before its first answer, beyond importing."""
    from actors.store.private import open_private, private_folder
    from actors.store.state import load_secret, state_dir
    from symposium import cli

    cli.default_max_conversations()
    cli._keep_freed_memory()
    folder = private_folder(state_dir(), tighten=True)
    load_secret(folder)
    with open_private(folder / "written", "w") as file:
        file.write("ok")
    stream = cli.stdio_stream()
    assert type(stream.receive_stream).__name__ == "ThreadReceiveStream", stream.receive_stream


def main(argv: list[str]) -> int:
    hide_posix()
    if argv[:1] == ["import-all"]:
        names = import_all()
        start_path()
        print(f"imported {len(names)} modules")
        return 0
    if argv[:1] == ["symposium"]:
        import runpy

        sys.argv = ["symposium", *argv[1:]]
        runpy.run_module("symposium", run_name="__main__", alter_sys=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
