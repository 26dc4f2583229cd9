"""A Session's handle on its ACP session, and the commands it sends the AgentProcess actor
(docs/DESIGN.md, "Actors and channels"): sessions talk to the agent's actor only through its
mailbox, and hear of their session on a channel of their own (`protocol/turn/events.py`'s
`AgentEvent`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import trio

from protocol.acp.capabilities import AgentCapabilities
from protocol.history.forking import Fork
from protocol.shared.failures import AgentError, FailureKind, failure
from protocol.shared.jsonrpc import RpcError


@attrs.frozen
class NewSession:
    cwd: str
    mcp_servers: list[dict[str, Any]]
    events: trio.MemorySendChannel[Any] = attrs.field(eq=False)
    reply: trio.MemorySendChannel[AgentSession | AgentError] = attrs.field(eq=False)
    resume: str | None = None  # an earlier session of this agent to resume or load, if it can
    must_resume: bool = False  # fail rather than start a new session when it cannot
    edits_handed_off: bool = False  # the agent's own file editing is switched off (`AgentProcess.edits_handed_off`)
    fork: Fork | None = None  # fork this session instead (protocol/history/forking.py), else start a new one (unless `fork.must`)
    others: tuple[str, ...] = ()  # the workspace's other folders (protocol/host/workspace_folders.py)


@attrs.frozen
class Prompt:
    session_id: str
    blocks: list[dict[str, Any]]


@attrs.frozen
class Cancel:
    session_id: str
    then: tuple[Callable[[], None], ...] = attrs.field(default=(), eq=False)  # once session/cancel is out


@attrs.frozen
class Close:
    session_id: str


@attrs.frozen
class Call:
    """Any other request to the agent (set an option, list sessions); answered on `reply`."""

    method: str
    params: dict[str, Any]
    reply: trio.MemorySendChannel[Any] = attrs.field(eq=False)  # the result, or the RpcError
    timeout: float | None = None  # None: the agent's deadline for requests (`--agent-timeout`)


Command = NewSession | Prompt | Cancel | Close | Call


@attrs.define(eq=False)
class AgentSession:
    """A Session actor's handle on its ACP session: what it is (its id, what its agent declared, how it
    was opened) and the commands it sends; its events arrive on the Session's own channel."""

    id: str
    agent_name: str
    capabilities: AgentCapabilities
    _commands: trio.MemorySendChannel[Command]
    loaded: bool = False  # resumed or loaded: the agent already holds the conversation
    answer: dict[str, Any] = attrs.Factory(dict)  # the agent's answer to session/new (load, resume): its choices
    edits_handed_off: bool = False  # its own file editing is off: VS Code's edit tools are bridged instead

    def _send(self, command: Command) -> None:
        try:
            self._commands.send_nowait(command)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the agent is gone; its AgentGone event tells the session

    def prompt(self, blocks: list[dict[str, Any]]) -> None:
        """Start a prompt; its updates and its end arrive as events."""
        self._send(Prompt(self.id, blocks))

    def cancel(self, then: tuple[Callable[[], None], ...] = ()) -> None:
        """`session/cancel`; then run `then` (answering what the agent still waits for).

        ACP wants the cancel first: answered before it, a denied permission reads to an
        agent as a failed tool, and it goes on working until the cancel lands.
        """
        self._send(Cancel(self.id, then))

    def close(self) -> None:
        self._send(Close(self.id))

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """A request to the agent about this session; raises RpcError, or AgentError if it
        exited or did not answer in time."""
        return await call_agent(self._commands, self.agent_name, method, params)

    @property
    def accepts_images(self) -> bool:
        return self.capabilities.prompt.image

    @property
    def accepts_resources(self) -> bool:
        return self.capabilities.prompt.embedded_context


async def call_agent(commands: trio.MemorySendChannel[Command], name: str, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
    reply_send, reply = trio.open_memory_channel[Any](1)
    try:
        commands.send_nowait(Call(method, params, reply_send, timeout))
        outcome = await reply.receive()
    except (trio.BrokenResourceError, trio.ClosedResourceError, trio.EndOfChannel):
        raise AgentError(failure(FailureKind.AGENT_EXITED, f"Agent {name!r} exited")) from None
    if isinstance(outcome, (RpcError, AgentError)):
        raise outcome
    return outcome
