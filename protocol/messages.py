"""What the actors say to each other over their memory channels, as plain data.

History → Session: `Turn` (its cancel scope and reply window travel beside it, in
`actors/session.py`'s `Delivery`: a turn is data, tests of pure modules build one without
trio). Session → History: `SessionEvent`. History → the VS Code request handler: `Reply`.
Agent connection → Session: the turn machine's own events (`protocol/turn.py`).
"""

from __future__ import annotations

import errno
from typing import Any

import attrs

from protocol.jsonrpc import SERVER_ERROR, RpcError
from protocol.lm import BridgedTools, Message, Part, Tool


@attrs.frozen
class Turn:
    """One VS Code request, as far as its conversation's Session is concerned."""

    number: int  # unique and increasing; every SessionEvent echoes it
    messages: tuple[Message, ...]  # new to the agent
    context: tuple[Message, ...]  # earlier history, only for a conversation's first turn
    canceled: bool  # the previous reply was rejected or stopped
    tools: tuple[Tool, ...]  # VS Code tools, without symposium-agent-action; the Session keeps the bridged ones
    offers_agent_action: bool
    cwd: str | None = None
    resumable: bool = False  # a conversation from an earlier backend run: load its session if we can
    model_id: str = ""  # the model entry the request was for
    options: tuple[tuple[str, str | bool], ...] = ()  # the agent's options wanted (model, mode, effort, ...)
    bridged: BridgedTools = BridgedTools()  # which of `tools` the agent may get (protocol/tool_policy.py)


@attrs.frozen
class PartEvent:
    part: Part


@attrs.frozen
class CompleteEvent:
    pass


@attrs.frozen
class FailedEvent:
    error: RpcError
    retire: bool  # the conversation cannot go on: the next request starts a new one


@attrs.frozen
class SessionEvent:
    conversation: str
    turn: int | None  # None: not about any request (e.g. the session retired while idle)
    event: PartEvent | CompleteEvent | FailedEvent


@attrs.frozen
class Reply:
    """History → the handler of one VS Code chat request: a part, the end, or an error."""

    part: Part | None = None
    error: RpcError | None = None
    complete: bool = False


def session_failure(message: str, *, kind: str, stderr: list[str] | None = None, **extra: Any) -> RpcError:
    data: dict[str, Any] = {"kind": kind, **extra}
    if stderr:
        data["stderr"] = stderr
    return RpcError(SERVER_ERROR, message, data)


class AgentError(Exception):
    """A conversation could not start (its agent, or what it needs); carries the -32000 reply."""

    def __init__(self, error: RpcError) -> None:
        super().__init__(error.message)
        self.error = error


_EXHAUSTED = {
    errno.EMFILE: "the backend has too many open files",
    errno.ENFILE: "the system has too many open files",
    errno.ENOMEM: "out of memory",
    errno.EAGAIN: "no more processes or threads can be created",
}


def resource_failure(action: str, exc: OSError, **data: Any) -> RpcError | None:
    """The -32000 error for an OSError that means a resource ran out, else None.

    Said plainly, because the remedy (fewer conversations, a higher `ulimit`) is not the one
    for a missing command or a bad configuration.
    """
    what = _EXHAUSTED.get(exc.errno or 0)
    if what is None:
        return None
    return session_failure(f"Cannot {action}: {what} ({exc.strerror})", kind="resource_exhausted", **data)
