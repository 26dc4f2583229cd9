"""Named failures: every way a chat request (or `lm/prepareModel`, `lm/listSessions`) can fail
that is not a bad request, as one enumeration.

Domain code raises `AgentError` (or hands a `Failure` on, as the turn machine and History do);
only the edge, `symposium/vscodelm.py`, turns a `Failure` into a JSON-RPC error: -32800 for
`CANCELLED`, -32602 for `INVALID_PARAMS`, else -32000 with `data.kind` the kind's value (the wire
strings below: they are part of the extension protocol) and the failure's details. What the
user sees for each is listed in `docs/DESIGN.md`, "Failures".
"""

from __future__ import annotations

import enum
import errno
from typing import Any

import attrs


class FailureKind(enum.StrEnum):
    """Each value is what goes on the wire as `data.kind`."""

    CANCELLED = "cancelled"  # lm/cancel, or a newer request superseded it (-32800, no data)
    INVALID_PARAMS = "invalid_params"  # the request cannot be answered as it is (-32602, no data)
    SHUTDOWN = "shutdown"  # the backend is shutting down (its input ended)
    BAD_CWD = "bad_cwd"  # the agent's working folder cannot be used
    SPAWN_FAILED = "spawn_failed"  # the agent's command cannot be started
    RESOURCE_EXHAUSTED = "resource_exhausted"  # out of descriptors, memory or processes
    EXITED = "exited"  # the agent exited during start-up (before answering initialize)
    INITIALIZE_TIMEOUT = "initialize_timeout"  # the agent did not answer initialize in time
    INITIALIZE_FAILED = "initialize_failed"  # the agent refused initialize
    AGENT_EXITED = "agent_exited"  # the agent exited (or is not running) while serving the conversation
    AGENT_PROTOCOL_ERROR = "agent_protocol_error"  # the agent sent a line that is not JSON-RPC; it was stopped
    AGENT_TIMEOUT = "agent_timeout"  # the agent did not answer a request in time (`data.step` names it)
    SESSION_NEW_FAILED = "session_new_failed"  # the agent refused session/new, or answered it oddly
    AUTH_REQUIRED = "auth_required"  # the agent wants a sign-in first (`data.methods`: how, protocol/acp/auth.py)
    RESUME_FAILED = "resume_failed"  # the agent cannot continue the session the chat names
    LIST_FAILED = "list_failed"  # the agent refused session/list (lm/listSessions)
    SESSION_IN_USE = "session_in_use"  # the agent session the chat names is open in another chat
    OPTION_REFUSED = "option_refused"  # the agent refused the model the user picked (`data.option`)
    PROMPT_FAILED = "prompt_failed"  # the agent answered session/prompt with an error (`data.code`)
    CANCEL_TIMEOUT = "cancel_timeout"  # the agent did not end a cancelled prompt in time
    BRIDGE_FAILED = "bridge_failed"  # the tool bridge's listener cannot be opened


@attrs.frozen
class Failure:
    """Why a request failed: its kind, what the user reads, and the details that go with it
    (`stderr`: the agent's last stderr lines, redacted; `agent`, `step`, `option`, `code`, ...)."""

    kind: FailureKind = attrs.field(converter=FailureKind)
    message: str
    details: dict[str, Any] = attrs.field(factory=dict, eq=False)


def failure(kind: FailureKind, message: str, *, stderr: list[str] | None = None, **details: Any) -> Failure:
    """A `Failure`; `stderr` only when the agent left some."""
    if stderr:
        details["stderr"] = stderr
    return Failure(kind, message, details)


class AgentError(Exception):
    """A conversation could not start or go on (its agent, or what it needs): carries the failure."""

    def __init__(self, error: Failure) -> None:
        super().__init__(error.message)
        self.error = error


_EXHAUSTED = {
    errno.EMFILE: "the backend has too many open files",
    errno.ENFILE: "the system has too many open files",
    errno.ENOMEM: "out of memory",
    errno.EAGAIN: "no more processes or threads can be created",
}


def resource_failure(action: str, exc: OSError, **details: Any) -> Failure | None:
    """The failure for an OSError that means a resource ran out, else None.

    Said plainly, because the remedy (fewer conversations, a higher `ulimit`) is not the one
    for a missing command or a bad configuration.
    """
    what = _EXHAUSTED.get(exc.errno or 0)
    if what is None:
        return None
    return failure(FailureKind.RESOURCE_EXHAUSTED, f"Cannot {action}: {what} ({exc.strerror})", **details)
