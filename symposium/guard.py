"""Runs an agent so that neither it nor anything it starts outlives it or the backend.

    python -I -S guard.py WATCH_FD -- COMMAND [ARGS...]

The backend starts this in a new process group, keeping the write end of a pipe whose
read end is WATCH_FD. The guard starts the agent in the same group, with the backend's
stdin, stdout and stderr, and waits. It exits with the agent's exit code.

What it stops, and when (docs/DESIGN.md, "Reliability"):
- the agent exits: every process the agent started that is still running is killed
  (SIGKILL), then the guard exits. So an agent's death is its process's exit: a child
  holding the agent's stdout cannot keep a dead agent looking alive.
- SIGUSR1 (the backend's last step when the agent ignored stdin EOF and SIGTERM): SIGKILL
  to the agent and everything it started.
- the pipe reaches EOF (the backend is gone, even by SIGKILL, since the kernel closes its
  descriptors, or the backend is done waiting for the agent to stop): SIGTERM to the agent
  and everything it started, SIGKILL after a grace period.

"Everything it started": on Linux the guard is a child subreaper (PR_SET_CHILD_SUBREAPER),
so a descendant whose parent died is re-parented to the guard rather than to init, and the
guard finds every descendant by walking /proc, whatever process group or session it moved
to (`setsid`). Elsewhere (macOS) there is no subreaper: the guard reaches the agent's
process group, and descendants that left it only while their parent still runs.

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
SWEEPS = 50  # rounds of "kill what is left, reap it": bounds a fork bomb racing the sweep
PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> bool:
    """Orphaned descendants become the guard's children (Linux only); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, for every process /proc shows (empty where there is no /proc)."""
    tree: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return tree
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if fields and fields[0] != b"Z":
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def descendants(pid: int) -> list[int]:
    """The live processes below `pid`, parents before their children."""
    tree = _children()
    found, todo = [], list(tree.get(pid, ()))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(tree.get(child, ()))
    return found


def _signal_all(group: int, sig: int) -> bool:
    """`sig` to every descendant of the guard, and SIGTERM to the agent's group too (the guard
    ignores it): all there is where /proc cannot be walked. False once there is nothing left."""
    targets = descendants(os.getpid())
    for pid in targets:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    if sig == signal.SIGTERM:
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            pass
    return bool(targets)


def _reap() -> None:
    """Collect the exit status of every child that has ended (orphans re-parented to us included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def sweep(group: int) -> None:
    """Kill (SIGKILL) everything the agent started that still runs, and reap it; bounded."""
    for _ in range(SWEEPS):
        if not _signal_all(group, signal.SIGKILL):
            break
        _reap()
    _reap()


def _kill_now(agent: int, group: int) -> None:
    _signal_all(group, signal.SIGKILL)
    try:
        os.kill(agent, signal.SIGKILL)  # where /proc cannot be walked
    except (ProcessLookupError, PermissionError):
        pass


def _watch(fd: int, group: int) -> None:
    try:
        while os.read(fd, 1024):
            pass
    except OSError:
        pass
    _signal_all(group, signal.SIGTERM)
    time.sleep(GRACE)  # the main thread ends the guard first if the agent exits within it
    sweep(group)
    os.killpg(group, signal.SIGKILL)  # whatever /proc did not show; the guard too


def _wait_for(agent: int) -> int:
    """Wait for the agent to exit, reaping meanwhile whatever else ends (re-parented orphans
    would otherwise stay zombies for the agent's whole life); its exit code."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 0  # reaped elsewhere (the watch thread's sweep): the guard is ending anyway
        if pid == agent:
            return os.waitstatus_to_exitcode(status)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("usage: guard.py WATCH_FD -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    watch = int(argv[0])
    _become_subreaper()
    # Signals meant for the agent's group reach the agent directly; the guard just waits. (Set
    # before the watch starts, which may SIGTERM the group at once; the agent's exec resets it.)
    signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        agent = subprocess.Popen(argv[2:], close_fds=True)  # inherits 0, 1 and 2; not the watch fd
    except OSError as exc:
        print(f"cannot start {argv[2]}: {exc.strerror or exc}", file=sys.stderr)
        return 127
    # Let go of the agent's stdio so the backend sees EOF when the agent exits.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    group = os.getpgrp()  # the agent's too; the backend signals it by the guard's pid
    # The backend's last word when stopping the agent: SIGKILL it and everything it started.
    # (A SIGKILL to the group would end the guard before it could reach the descendants
    # that left the group.) The main thread then sweeps what is left and exits.
    signal.signal(signal.SIGUSR1, lambda *_: _kill_now(agent.pid, group))
    threading.Thread(target=_watch, args=(watch, group), daemon=True).start()
    code = _wait_for(agent.pid)
    sweep(group)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
