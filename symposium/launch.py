"""How the backend starts agents and how they reach it: the application's side of the actors' seams.

The AgentProcess actor (`actors/agent_process.py`) speaks ACP over whatever `AgentConnection`
its connector gives it; this module is the connector the backend uses (`connect`). The
built-in Eliza runs in-process over an in-memory stream pair; every other agent is a
subprocess in a process group of its own under `symposium/guard.py`, which stops the agent
and everything it started (its descendants, even those that left the group) when the agent
exits or the backend ends, however it ends. Stopping is: close stdin, SIGTERM the group,
SIGUSR1 the guard (it SIGKILLs everything), SIGKILL the group, each step bounded by STOP_GRACE.
On Windows an agent runs in a Job Object instead (`symposium/windows.py`).

`RELAY` is how an agent reaches its conversation's ToolBridge (`actors/tool_bridge.py`): the
stdio MCP server it starts (`symposium/mcp_relay.py`).
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

import attrs

from actors.agent_process import agent_label
from actors.agent_connection import AgentConnection, Connector, StreamConnection
from protocol.agent_facts import AgentFactsTable, start_env
from protocol.failures import AgentError, FailureKind, failure, resource_failure
from actors.tool_bridge import Relay
from protocol.lm import Agent, ElizaAgent, EnvVar, ProcessAgent
from actors.streams import memory_stream_pair
from symposium import mcp_relay

log = logging.getLogger(__name__)

GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guard.py")
STOP_GRACE = 2.0  # after closing stdin, before SIGTERM; then again before SIGKILL
REAP_TIMEOUT = 1.0  # how long an agent whose output ended is given to exit, for its exit code

# Run as a file with -I -S: the agent starts it in the workspace, whose modules must not be importable
# (docs/reliability.md), and it is standard library only, so `site` would only slow it down.
RELAY = Relay(command=(sys.executable, "-I", "-S", os.path.abspath(mcp_relay.__file__)))


async def connect(agent: Agent, cwd: str, nursery: trio.Nursery) -> AgentConnection:
    """Start `agent` (in folder `cwd`); its serving tasks run in `nursery`. Raises AgentError."""
    if isinstance(agent, ElizaAgent):
        from symposium.eliza.agent import serve_eliza

        ours, theirs = memory_stream_pair()
        nursery.start_soon(serve_eliza, theirs, agent.deterministic)
        return StreamConnection(ours)
    if sys.platform == "win32":  # no process groups nor signals there: a Job Object instead
        from symposium.windows import JobProcess

        return await JobProcess.spawn(agent, cwd)
    return await GuardedProcess.spawn(agent, cwd)


def with_start_facts(connector: Connector, facts: AgentFactsTable) -> Connector:
    """`connector`, starting each agent with what the agent facts say it needs in its environment at
    start (`startEnv`), known by what it runs, however it was configured (docs/DESIGN.md, "Agent
    facts"): what its own `env` sets wins. The definition the pool keys the agent by is unchanged."""

    async def connect_with_facts(agent: Agent, cwd: str, nursery: trio.Nursery) -> AgentConnection:
        if isinstance(agent, ProcessAgent):
            given = {var.name for var in agent.env}
            added = tuple(EnvVar(name, value) for name, value in start_env(facts, agent.command, agent.args).items() if name not in given)
            if added:
                log.info("agent %s starts with %s (agent facts)", agent_label(agent), ", ".join(f"{var.name}={var.value}" for var in added))
                agent = attrs.evolve(agent, env=(*added, *agent.env))
        return await connector(agent, cwd, nursery)

    return connect_with_facts


class GuardedProcess:
    """An agent subprocess under the guard, in a process group of its own.

    The guard holds the read end of a pipe whose write end only this process holds (the
    lifeline): when the backend ends, however it ends, the guard stops the agent's whole group.
    """

    def __init__(self, process: trio.Process, lifeline: int, name: str) -> None:
        assert process.stdin and process.stdout and process.stderr
        self._process = process
        self._lifeline: int | None = lifeline
        self._name = name
        self.stream: trio.abc.Stream = trio.StapledStream(process.stdin, process.stdout)
        self.stderr: trio.abc.ReceiveStream | None = process.stderr

    @classmethod
    async def spawn(cls, agent: ProcessAgent, cwd: str) -> GuardedProcess:
        name = agent_label(agent)
        env = dict(os.environ)
        env.update({var.name: var.value for var in agent.env})
        if not os.path.isdir(cwd):
            message = f"Cannot start agent {name!r}: its working folder {cwd} does not exist"
            raise AgentError(failure(FailureKind.BAD_CWD, message, command=agent.command, cwd=cwd))
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
        except OSError as exc:
            _close(lifeline)
            failed = resource_failure(f"start agent {name!r}", exc, command=agent.command)
            if failed is None:
                failed = failure(FailureKind.SPAWN_FAILED, f"Cannot start agent {name!r}: {agent.command}: {exc.strerror or exc}", command=agent.command)
            raise AgentError(failed) from None
        except ValueError as exc:  # what the definition's checks on arrival should have refused
            _close(lifeline)
            raise AgentError(failure(FailureKind.SPAWN_FAILED, f"Cannot start agent {name!r}: {exc}", command=agent.command)) from None
        finally:
            _close(watch)
        log.info("started agent %s (guard pid %d): %s", name, process.pid, agent.command)
        return cls(process, lifeline, name)

    @property
    def exit_code(self) -> int | None:
        return self._process.returncode

    async def ended(self) -> None:
        with trio.move_on_after(REAP_TIMEOUT):
            await self._process.wait()

    async def wait(self) -> None:
        """Until the agent has exited (the guard exits with it, once it has killed what the agent left)."""
        await self._process.wait()

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

    async def aclose(self) -> None:
        """The agent's stdin, stdout and stderr, closed now rather than whenever the garbage
        collector gets to them: an agent restarted after every crash must not pile up pipes."""
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                await trio.aclose_forcefully(stream)

    def _close_lifeline(self) -> None:
        _close(self._lifeline)
        self._lifeline = None


def _close(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)
