"""How an agent is started, as its actor sees it: a byte stream to speak ACP on, and how it ends.

The actor (`actors/agent/process.py`) receives a `Connector` and never starts a process itself:
the backend's is `symposium/launch.py` (a guarded subprocess, or the built-in Eliza in-process);
replay and the tests supply scripted agents (`StreamConnection`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

import trio

from protocol.vscode.lm import Agent


class AgentConnection(Protocol):
    """A started agent, as its actor sees it: a byte stream to speak ACP on, and how it ends."""

    @property
    def stream(self) -> trio.abc.Stream: ...

    @property
    def stderr(self) -> trio.abc.ReceiveStream | None:
        """What the agent prints for humans, if it has such a stream."""

    @property
    def exit_code(self) -> int | None:
        """Its exit code, once it has ended and that is known."""

    async def ended(self) -> None:
        """Wait (bounded) for the agent to end, once its output has ended: for its exit code."""

    async def wait(self) -> None:
        """Until the agent itself has ended, whatever holds its output open (a child it started)."""

    async def stop(self) -> None:
        """End the agent, bounded; also called (and then a no-op, or a sweep) once it has ended."""

    async def aclose(self) -> None:
        """Release what is left of it (its pipes), once its actor is done with it."""


# Starts `agent` in the given working folder, its serving tasks (if any) in the given nursery;
# raises AgentError when it cannot. The backend's is `symposium.launch.connect`; replay and the
# tests supply scripted agents.
Connector = Callable[[Agent, str, trio.Nursery], Awaitable[AgentConnection]]


class StreamConnection:
    """An agent that is nothing but a stream (in-process, scripted): stopping it closes the stream."""

    stderr: trio.abc.ReceiveStream | None = None
    exit_code: int | None = None

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream

    async def ended(self) -> None:
        await trio.lowlevel.checkpoint()

    async def wait(self) -> None:
        await trio.sleep_forever()  # a stream has no process: its end is its EOF

    async def stop(self) -> None:
        try:
            await self.stream.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()
