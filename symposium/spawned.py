"""What every agent subprocess is, whichever platform started it: its streams, its exit, its pipes
closed, and the checks and failures of starting one (the `AgentConnection` of
`actors/agent/connection.py`). How it is started and stopped differs by platform:
`symposium/process_posix.py` (a process group under the guard) and `symposium/process_windows.py`
(a Job Object), chosen once by `symposium/launch.py`.
"""

from __future__ import annotations

import os

import trio

from protocol.shared.failures import AgentError, Failure, FailureKind, failure, resource_failure
from protocol.vscode.lm import ProcessAgent

REAP_TIMEOUT = 1.0  # how long an agent whose output ended is given to exit, for its exit code


class SpawnedAgent:
    """An agent subprocess: its stdin and stdout as one stream, its stderr kept apart."""

    def __init__(self, process: trio.Process, name: str) -> None:
        assert process.stdin and process.stdout and process.stderr
        self._process = process
        self._name = name
        self.stream: trio.abc.Stream = trio.StapledStream(process.stdin, process.stdout)
        self.stderr: trio.abc.ReceiveStream | None = process.stderr

    @property
    def exit_code(self) -> int | None:
        return self._process.returncode

    async def ended(self) -> None:
        with trio.move_on_after(REAP_TIMEOUT):
            await self._process.wait()

    async def wait(self) -> None:
        """Until the agent's own process has exited."""
        await self._process.wait()

    async def aclose(self) -> None:
        """The agent's stdin, stdout and stderr, closed now rather than whenever the garbage
        collector gets to them: an agent restarted after every crash must not pile up pipes."""
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                await trio.aclose_forcefully(stream)


def check_cwd(agent: ProcessAgent, cwd: str, name: str) -> None:
    """Raises AgentError (`bad_cwd`) when the agent's working folder does not exist."""
    if not os.path.isdir(cwd):
        message = f"Cannot start agent {name!r}: its working folder {cwd} does not exist"
        raise AgentError(failure(FailureKind.BAD_CWD, message, command=agent.command, cwd=cwd))


def spawn_failure(agent: ProcessAgent, name: str, exc: OSError | ValueError) -> AgentError:
    """Why the agent could not be started: out of a resource, or the command would not run (a
    ValueError: what the definition's checks on arrival should have refused, such as a NUL in env)."""
    if isinstance(exc, ValueError):
        return AgentError(failure(FailureKind.SPAWN_FAILED, f"Cannot start agent {name!r}: {exc}", command=agent.command))
    failed: Failure | None = resource_failure(f"start agent {name!r}", exc, command=agent.command)
    if failed is None:
        failed = failure(FailureKind.SPAWN_FAILED, f"Cannot start agent {name!r}: {agent.command}: {exc.strerror or exc}", command=agent.command)
    return AgentError(failed)
