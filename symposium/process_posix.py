"""Agents on POSIX: started under `symposium/guard.py` in a process group of their own, and stopped
with everything they started (docs/DESIGN.md, "Where to change what"; the Windows pair:
`symposium/process_windows.py`).

The guard stops the agent and everything it started (its descendants, even those that left the
group) when the agent exits or the backend ends, however it ends. Stopping is: close stdin, SIGTERM
the group, SIGUSR1 the guard (it SIGKILLs everything), SIGKILL the group, each step bounded by
STOP_GRACE.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys

import trio

from protocol.shared.failures import AgentError, FailureKind, failure
from protocol.vscode.agent_identity import agent_label
from protocol.vscode.lm import ProcessAgent
from symposium.spawned import SpawnedAgent, check_cwd, spawn_failure

log = logging.getLogger(__name__)

GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guard.py")
STOP_GRACE = 2.0  # after closing stdin, before SIGTERM; then again before SIGKILL


class GuardedProcess(SpawnedAgent):
    """An agent subprocess under the guard, in a process group of its own.

    The guard holds the read end of a pipe whose write end only this process holds (the
    lifeline): when the backend ends, however it ends, the guard stops the agent's whole group.
    """

    def __init__(self, process: trio.Process, lifeline: int, name: str) -> None:
        super().__init__(process, name)
        self._lifeline: int | None = lifeline

    @classmethod
    async def spawn(cls, agent: ProcessAgent, cwd: str) -> GuardedProcess:
        name = agent_label(agent)
        env = dict(os.environ)
        env.update({var.name: var.value for var in agent.env})
        check_cwd(agent, cwd, name)
        if shutil.which(agent.command, path=env.get("PATH")) is None:
            message = f"Cannot start agent {name!r}: {agent.command}: command not found"
            raise AgentError(failure(FailureKind.SPAWN_FAILED, message, command=agent.command))
        watch: int | None = None
        lifeline: int | None = None
        try:
            watch, lifeline = os.pipe()
            process = await trio.lowlevel.open_process(
                [sys.executable, "-I", "-S", GUARD, str(watch), "--", agent.command, *agent.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                start_new_session=True,
                pass_fds=(watch,),
            )
        except (OSError, ValueError) as exc:
            _close(lifeline)
            raise spawn_failure(agent, name, exc) from None
        finally:
            _close(watch)
        log.info("started agent %s (guard pid %d): %s", name, process.pid, agent.command)
        return cls(process, lifeline, name)

    async def stop(self) -> None:
        """Close stdin, wait, SIGTERM the group, wait, have the guard SIGKILL everything, wait,
        SIGKILL the group."""
        process = self._process
        if process.returncode is not None:
            self._close_lifeline()
            # The agent ended by itself: what it started may still run in its group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            return
        if process.stdin is not None:
            with trio.move_on_after(STOP_GRACE):
                await process.stdin.aclose()
        # SIGUSR1 asks the guard to SIGKILL the agent and all it started (symposium/guard.py);
        # the group's SIGKILL is the last resort, for a guard that did not end.
        for sig, group in ((None, False), (signal.SIGTERM, True), (signal.SIGUSR1, False), (signal.SIGKILL, True)):
            if sig is not None:
                try:
                    (os.killpg if group else os.kill)(process.pid, sig)
                except ProcessLookupError:
                    break
            with trio.move_on_after(STOP_GRACE):
                await process.wait()
            if process.returncode is not None:
                break
        self._close_lifeline()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # what the guard could not see (no /proc), still in its group
        note = f" (exit code {process.returncode})" if process.returncode is not None else ""
        log.info("agent %s stopped%s", self._name, note)

    def _close_lifeline(self) -> None:
        _close(self._lifeline)
        self._lifeline = None


def _close(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)
