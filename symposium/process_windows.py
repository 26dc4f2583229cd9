"""Agents on Windows: how the backend starts and stops them there (docs/windows.md; the POSIX pair:
`symposium/process_posix.py`).

Windows has no process groups, signals to send or subreaper; what `symposium/guard.py` does
on Linux, a Job Object does here. Each agent is started (with no console window) and put in
a job of its own whose processes all end when the job is terminated or its last handle
closes (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), so the agent and everything it started end when
we stop it, and when the backend ends however it ends (the kernel closes its handles). A
process the agent starts joins its job by itself.

Stopping is: close stdin, wait STOP_GRACE; end the job (every process in it), wait; end the
agent's process itself (TerminateProcess), the last resort for one the job does not hold.
An agent that exited by itself has its job ended too: what it started does not outlive it.

The command is resolved through PATHEXT and started by its resolved path; `npx.cmd` is run as
`node.exe` with npm's own CLI script, another `.cmd`/`.bat` through cmd.exe with its
arguments quoted (`protocol/host/windows.py`). pywin32 (a dependency of the mcp SDK on Windows)
is imported only here, when the first agent starts.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
from typing import Any, Protocol

import trio

from protocol.host import windows
from protocol.shared.failures import AgentError, FailureKind, failure
from protocol.vscode.agent_identity import agent_label
from protocol.vscode.lm import ProcessAgent
from symposium.spawned import SpawnedAgent, check_cwd, spawn_failure

log = logging.getLogger(__name__)

STOP_GRACE = 2.0  # after closing stdin, before ending the job; then again before TerminateProcess
CREATE_NO_WINDOW = 0x08000000  # subprocess.CREATE_NO_WINDOW, which exists only on Windows


class Job(Protocol):
    """A set of processes ended together (a Windows Job Object)."""

    def assign(self, pid: int) -> None:
        """Put the process in the job; what it starts from then on joins it too."""

    def terminate(self) -> None:
        """End every process in the job."""

    def close(self) -> None:
        """Let go of the job: whatever still runs in it ends."""


class JobObject:
    """A Windows Job Object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, through pywin32 (the mcp
    SDK's pattern, `mcp/os/win32/utilities.py`). Raises OSError when it cannot be made."""

    def __init__(self) -> None:
        import pywintypes  # type: ignore[import-untyped]
        import win32api  # type: ignore[import-untyped]
        import win32con  # type: ignore[import-untyped]
        import win32job  # type: ignore[import-untyped]

        self._api, self._con, self._job_api, self._error = win32api, win32con, win32job, pywintypes.error
        try:
            self._handle: Any = win32job.CreateJobObject(None, "")
            info = win32job.QueryInformationJobObject(self._handle, win32job.JobObjectExtendedLimitInformation)
            info["BasicLimitInformation"]["LimitFlags"] |= win32job.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            win32job.SetInformationJobObject(self._handle, win32job.JobObjectExtendedLimitInformation, info)
        except self._error as exc:
            raise OSError(f"cannot make a Job Object: {exc}") from None

    def assign(self, pid: int) -> None:
        try:
            process = self._api.OpenProcess(self._con.PROCESS_SET_QUOTA | self._con.PROCESS_TERMINATE, False, pid)
            try:
                self._job_api.AssignProcessToJobObject(self._handle, process)
            finally:
                self._api.CloseHandle(process)
        except self._error as exc:
            raise OSError(f"cannot put process {pid} in its Job Object: {exc}") from None

    def terminate(self) -> None:
        with contextlib.suppress(self._error):  # ended already
            self._job_api.TerminateJobObject(self._handle, 1)

    def close(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(self._error):
                self._api.CloseHandle(self._handle)
            self._handle = None


def new_job() -> Job | None:
    """A Job Object for one agent, or None (logged) when pywin32 is missing or Windows refuses:
    the agent then runs without one, and only its own process is ended when it stops."""
    try:
        return JobObject()
    except ImportError:
        log.warning("pywin32 is not installed: agents' child processes are not ended with them")
    except OSError as exc:
        log.warning("%s: agents' child processes are not ended with them", exc)
    return None


def command_for(agent: ProcessAgent, cwd: str, env: dict[str, str]) -> tuple[str, list[str] | str]:
    """The file `agent.command` names, and what to start for `agent` (`protocol.host.windows.launch`);
    raises AgentError."""
    name = agent_label(agent)
    resolved = windows.resolve(agent.command, windows.env_get(env, "PATH"), windows.env_get(env, "PATHEXT"), cwd, os.path.isfile)
    if resolved is None:
        message = f"Cannot start agent {name!r}: {agent.command}: command not found (looked for .exe, .com, .cmd and .bat files on PATH)"
        raise AgentError(failure(FailureKind.SPAWN_FAILED, message, command=agent.command))
    try:
        return resolved, windows.launch(resolved, list(agent.args), env=env, cwd=cwd, is_file=os.path.isfile)
    except windows.UnsafeArgument as exc:
        message = f"Cannot start agent {name!r}: {resolved} runs through cmd.exe, and the argument {exc}; name the program it runs (node, python, the .exe) as the command instead"
        raise AgentError(failure(FailureKind.SPAWN_FAILED, message, command=agent.command)) from None


class JobProcess(SpawnedAgent):
    """An agent subprocess in a Job Object of its own (the AgentConnection of Windows)."""

    def __init__(self, process: trio.Process, job: Job | None, name: str, grace: float = STOP_GRACE) -> None:
        super().__init__(process, name)
        self._job = job
        self._grace = grace

    @classmethod
    async def spawn(cls, agent: ProcessAgent, cwd: str) -> JobProcess:
        name = agent_label(agent)
        env = windows.merged_env(os.environ, {var.name: var.value for var in agent.env})
        check_cwd(agent, cwd, name)
        resolved, command = command_for(agent, cwd, env)
        job = new_job()
        try:
            process = await trio.lowlevel.open_process(  # type: ignore[call-overload]  # Windows' creationflags: trio's Windows signature
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                creationflags=CREATE_NO_WINDOW,  # a console of its own, never shown; its children share it
            )
        except (OSError, ValueError) as exc:
            if job is not None:
                job.close()
            raise spawn_failure(agent, name, exc) from None
        if job is not None:
            # What the agent starts before this lands outside the job (membership is inherited at
            # CreateProcess); an agent starts its children after it has read its first request.
            try:
                job.assign(process.pid)
            except OSError as exc:
                log.warning("%s: agent %s runs without a Job Object", exc, name)
                job.close()
                job = None
        program = command[0] if isinstance(command, list) else "cmd.exe"
        log.info("started agent %s (pid %d): %s, found as %s, run as %s", name, process.pid, agent.command, resolved, program)
        return cls(process, job, name)

    async def stop(self) -> None:
        """Close stdin, wait; end the job, wait; end the agent's process, wait. Then let go of the job."""
        process = self._process
        if process.returncode is None:
            if process.stdin is not None:
                with trio.move_on_after(self._grace):
                    await process.stdin.aclose()
            for end in (None, self._end_job, process.kill):
                if end is not None:
                    with contextlib.suppress(OSError):
                        end()
                with trio.move_on_after(self._grace):
                    await process.wait()
                if process.returncode is not None:
                    break
        self._end_job()  # what the agent started and left running
        if self._job is not None:
            self._job.close()
            self._job = None
        note = f" (exit code {process.returncode})" if process.returncode is not None else ""
        log.info("agent %s stopped%s", self._name, note)

    def _end_job(self) -> None:
        if self._job is not None:
            self._job.terminate()
