"""Runs an agent so that it cannot outlive the backend, however the backend ends.

    python -I -S guard.py WATCH_FD -- COMMAND [ARGS...]

The backend starts this in a new process group, keeping the write end of a pipe whose
read end is WATCH_FD. The guard starts the agent in the same group, with the backend's
stdin, stdout and stderr, and waits. If the pipe reaches EOF (the backend is gone, even
by SIGKILL, since the kernel closes its descriptors), the guard terminates the group:
SIGTERM, then SIGKILL after a grace period. It exits with the agent's exit code.

Why not PR_SET_PDEATHSIG: it fires when the *thread* that forked the child exits, and
trio forks from worker threads that end after ten idle seconds, killing healthy agents.
Standard library only, and run with -I -S, so it adds tens of milliseconds to a start.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

GRACE = 2.0


def _watch(fd: int) -> None:
    try:
        while os.read(fd, 1024):
            pass
    except OSError:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(os.getpgrp(), sig)  # the agent and anything it started; the guard too
        except ProcessLookupError:
            return
        time.sleep(GRACE)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("usage: guard.py WATCH_FD -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    watch = int(argv[0])
    try:
        agent = subprocess.Popen(argv[2:], close_fds=True)  # inherits 0, 1 and 2; not the watch fd
    except OSError as exc:
        print(f"cannot start {argv[2]}: {exc.strerror or exc}", file=sys.stderr)
        return 127
    # Let go of the agent's stdio so the backend sees EOF when the agent exits.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    threading.Thread(target=_watch, args=(watch,), daemon=True).start()
    # Signals meant for the agent's group reach the agent directly; the guard just waits.
    signal.signal(signal.SIGTERM, lambda *_: None)
    code = agent.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
