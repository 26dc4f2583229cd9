"""How a conversation's agent session is opened: one plan, decided from what the agent declared
and what the chat holds (docs/DESIGN.md, "Opening a session"). Pure: the actors carry the plan
out, the tries in `AgentProcess` (`actors/agent/process.py`), the whole of it in
`actors/agent/opening.py`, for a Session and for a spare session alike.

What the chat holds is an `Origin`: nothing (a new session), a session remembered from an earlier
backend run (`Remembered`), the fork point of an edit of history (`EditedAt`), or an agent session
the chat was opened to continue (`Continued`). With what the agent declared at `initialize` (its
`sessionCapabilities`) and what is known of it (`AgentFacts`, protocol/acp/agent_facts.py), that
decides the `Plan`:

- the **tries**, in order: `session/fork`, `session/resume` or `session/load`, then `session/new`;
  a refusal of a try falls through to the next, except where the chat named the session
  (continuing an agent's own session): that one fails the turn, never a new session in its place;
- the **editing hand-over**: whether the agent's own file editing goes, for the session's life,
  in favour of VS Code's edit tools (docs/DESIGN.md, "Tool bridge"), and so the `_meta` of every try;
- the **tools**: which of the first turn's tools the bridge offers, and by which `mcpServers`
  entry (protocol/bridge/mcp_transport.py);
- **priming**: a new session's first prompt carries the history the chat shows (the turn's
  `context`); a forked, resumed or loaded one holds it already;
- whether a **spare** session made ahead fits (`spare_fit`): only a plan that opens a plain new
  session, made with the same editing hand-over and, once the agent lists them, the same tools.

Never past the chat: a remembered session is resumed only at a marker of the last turn handed
to it, and forked only at the marker's own turn (`opening_after_restart`); an edit of history
forks at the fork point of the last turn the chat keeps (`protocol/history/forking.py`).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

from protocol.acp import schema as acp
from protocol.acp.agent_facts import AgentFacts, MessageFork, version
from protocol.acp.capabilities import Initialized, SessionCapabilities
from protocol.bridge.mcp_transport import Transport, transport
from protocol.bridge.tool_policy import bridged_tools, merge_meta, wants_edits_handed_off
from protocol.history.forking import ForkPoint
from protocol.host.workspace_folders import folders_note
from protocol.shared.failures import FailureKind
from protocol.vscode.lm import BridgedTools, Tool

# What the chat holds ---------------------------------------------------------------------


@attrs.frozen
class Fresh:
    """Nothing names an agent session: a new one."""


@attrs.frozen
class Remembered:
    """A conversation of an earlier backend run, whose session the store remembers
    (`actors/store/sessions.py`)."""

    session_id: str
    cwd: str  # the session's folder
    saved_turn: int | None  # the last turn handed to it; None: not known (a store written before it was kept)
    marker_turn: int  # the turn of the marker the chat goes on after
    point: ForkPoint | None = None  # the fork point saved for the marker's turn, where one was looked up (`restart_fork_turn`)

    @property
    def opening(self) -> Opening:
        return opening_after_restart(self.marker_turn + 1, self.saved_turn, self.point)


@attrs.frozen
class EditedAt:
    """A conversation's first turn after an edit of history: it goes on from `point`, the last turn
    the chat keeps, where the agent can fork there (docs/DESIGN.md, "Forks")."""

    point: ForkPoint


@attrs.frozen
class Continued:
    """A chat opened to continue one of the agent's own sessions (protocol/acp/continuing.py)."""

    session_id: str
    cwd: str


Origin = Fresh | Remembered | EditedAt | Continued


@attrs.frozen
class Chat:
    """What the chat holds for its session's opening: where it comes from, and its first turn's
    folder and tools (the Session's first `Turn`)."""

    origin: Origin
    cwd: str | None  # the first turn's folder; None: the backend's
    tools: tuple[Tool, ...] = ()
    bridged: BridgedTools = attrs.Factory(BridgedTools)
    # Whether the chat wants the agent's own editing handed to VS Code's edit tools; None: as its
    # tools say (`wants_edits_handed_off`). A spare made before any chat says True: Copilot's
    # Agent mode, the chat view's default, does.
    wants_edits: bool | None = None
    # The workspace's folders besides the one the session opens in (protocol/host/workspace_folders.py).
    others: tuple[str, ...] = ()

    @property
    def edits_wanted(self) -> bool:
        return wants_edits_handed_off(self.tools, self.bridged) if self.wants_edits is None else self.wants_edits

    @property
    def names_session(self) -> bool:
        """Whether the chat names an agent session to go on in (it does not wait for a spare on its way)."""
        return not isinstance(self.origin, Fresh)

    @property
    def folder(self) -> str | None:
        """Where the session opens: a remembered session resumed, or a continued one, in its own
        folder; anything else in the turn's."""
        origin = self.origin
        if isinstance(origin, Continued) or (isinstance(origin, Remembered) and origin.opening is Opening.RESUME):
            return origin.cwd
        return self.cwd


class Opening(enum.Enum):
    """How a conversation named by a marker of an earlier backend run gets its agent session."""

    RESUME = "resume"  # the saved session, as it is
    FORK = "fork"  # a fork of the saved session at the marker's turn
    PRIME = "prime"  # a new session, primed with the history


def opening_after_restart(conversation_turn: int, saved_turn: int | None, point: ForkPoint | None) -> Opening:
    """`conversation_turn`: the conversation's first turn in this run (the marker's turn + 1); `saved_turn`: the
    last turn handed to the saved session (None: not known, a store written before it was kept);
    `point`: the saved fork point of the marker's turn, if any.

    Only a marker of the saved session's last turn resumes it. An older one (the chat lost later
    turns, or the user edited or retried one) forks the session at the marker's turn where a fork
    point was saved, else primes; it never resumes past it. A newer one (the store lost its last
    saves) would hide turns the user sees: primed. See "Identity and markers" in docs/DESIGN.md.
    """
    marker_turn = conversation_turn - 1
    if saved_turn is None or saved_turn == marker_turn:
        return Opening.RESUME
    if marker_turn < saved_turn and point is not None:
        return Opening.FORK
    return Opening.PRIME


def restart_fork_turn(saved_turn: int | None, marker_turn: int, after_marker: bool) -> int | None:
    """The turn whose saved fork point a remembered conversation may fork at, for the Session to
    look up; None: none can serve. Only a marker older than the saved session's last turn forks,
    and only when all that follows the marker is the new turn (`forking.forks_after_marker`)."""
    return marker_turn if saved_turn is not None and marker_turn < saved_turn and after_marker else None


# The plan ----------------------------------------------------------------------------------


class Method(enum.Enum):
    """The ways an ACP session is opened, in the order a plan tries them."""

    FORK = "session/fork"  # a new session holding another's history (up to a message, where the agent says how)
    RESUME = "session/resume"  # an earlier session taken back, without replay
    LOAD = "session/load"  # an earlier session taken back, replayed as updates
    NEW = "session/new"


class Refusal(enum.Enum):
    """Why a try opened nothing."""

    HELD = "held"  # the session is open in another chat (the agent's updates are routed by session id)
    REFUSED = "refused"  # the agent answered an error
    ODD = "odd"  # the agent's answer names no session we can route to


@attrs.frozen
class Stop:
    """The opening fails: the turn's failure, its message after the agent's name ("Agent 'X' ...")."""

    kind: FailureKind
    message: str


@attrs.frozen
class Try:
    """One request that may open the session."""

    method: Method
    session_id: str | None  # the session forked, resumed or loaded; None for a new one
    meta: Mapping[str, Any] = attrs.field(factory=dict)  # its `_meta`: the agent's session facts, its editing switched off, the fork's message
    must: bool = False  # the chat named this session: a refusal fails the turn, never falls through to a new session

    @property
    def primes(self) -> bool:
        """Whether the session it opens needs the history the chat shows in its first prompt:
        only a new one; a fork, a resumed or a loaded session holds it."""
        return self.method is Method.NEW

    @property
    def exclusive(self) -> bool:
        """Whether it takes the session itself, which one chat at a time may hold (resume, load); a
        fork and a new session make a session of their own."""
        return self.method in (Method.RESUME, Method.LOAD)

    def params(self, cwd: str, mcp_servers: list[dict[str, Any]], additional_directories: tuple[str, ...] = ()) -> dict[str, Any]:
        """The request's params, in the absolute folder `cwd`, with the `vscode_tools` entry (and a new
        session's other workspace folders, where the agent takes them)."""
        if self.session_id is None:
            return acp.new_session_params(cwd, mcp_servers, self.meta, additional_directories)
        made = {Method.FORK: acp.fork_session_params, Method.RESUME: acp.resume_session_params, Method.LOAD: acp.load_session_params}[self.method]
        return made(self.session_id, cwd, mcp_servers, self.meta)


@attrs.frozen
class Plan:
    """A conversation's session opening, whole: the actors carry it out."""

    folder: str | None  # where the session opens (`Chat.folder`); None: the backend's
    tries: tuple[Try, ...]  # in order, until one opens the session; empty when `stop` says why not
    edits_handed_off: bool  # the agent's own file editing is switched off for the session's life
    tools: tuple[Tool, ...]  # what the conversation's tool bridge offers at first
    transport: Transport  # how `vscode_tools` is given to the agent in `mcpServers`
    stop: Stop | None = None  # the chat names a session this agent cannot take back: fail at once
    others: tuple[str, ...] = ()  # the workspace's other folders: its writes may land there too
    additional_directories: tuple[str, ...] = ()  # of them, what a new session is given (the agent declares it takes them)
    folders_note: str | None = None  # else what its first prompt tells it of them

    @property
    def is_new(self) -> bool:
        """Whether it opens a plain new session (which a spare made ahead may be)."""
        return len(self.tries) == 1 and self.tries[0].method is Method.NEW


def plan_opening(declared: Initialized, facts: AgentFacts, chat: Chat) -> Plan:
    """The opening of `chat`'s session with the agent whose `initialize` answer is `declared` and
    whose known facts are `facts`."""
    handed_off = chat.edits_wanted and facts.own_edits is not None
    meta = merge_meta(facts.session_meta, facts.own_edits.meta) if handed_off and facts.own_edits is not None else dict(facts.session_meta)
    tries, stop = _tries(declared, facts, chat.origin, meta)
    tools = bridged_tools(chat.tools, chat.bridged, handed_off)
    takes_folders = declared.capabilities.sessions.additional_directories
    return Plan(
        chat.folder, tries, handed_off, tools, transport(declared.capabilities, http_only=facts.http_mcp_only), stop,
        others=chat.others,
        additional_directories=chat.others if takes_folders else (),
        folders_note=folders_note(chat.others) if chat.others and not takes_folders else None,
    )


def _tries(declared: Initialized, facts: AgentFacts, origin: Origin, meta: Mapping[str, Any]) -> tuple[tuple[Try, ...], Stop | None]:
    sessions = declared.capabilities.sessions
    new = Try(Method.NEW, None, meta, must=True)
    match origin:
        case Continued(session_id=session_id):
            # Forked whole where the agent can: its own session stays as the user left it, and a
            # second chat continuing it gets a fork of its own. Else taken back, one chat at a time.
            if sessions.fork:
                return (Try(Method.FORK, session_id, meta, must=True),), None
            taken_back = _taking_back(sessions)
            if taken_back is None:
                return (), Stop(FailureKind.RESUME_FAILED, "cannot continue earlier sessions")
            return (Try(taken_back, session_id, meta, must=True),), None
        case Remembered(session_id=session_id, point=point):
            opening = origin.opening
            if opening is Opening.RESUME and (taken_back := _taking_back(sessions)) is not None:
                return (Try(taken_back, session_id, meta), new), None
            if opening is Opening.FORK and (fork := _fork_at(declared, facts, point, meta)) is not None:
                return (fork, new), None
            return (new,), None
        case EditedAt(point=point):
            fork = _fork_at(declared, facts, point, meta)
            return ((fork, new) if fork is not None else (new,)), None
        case Fresh():
            return (new,), None


def _taking_back(sessions: SessionCapabilities) -> Method | None:
    """How this agent takes back an earlier session: `session/resume` (no replay), else `session/load`."""
    if sessions.resume:
        return Method.RESUME
    return Method.LOAD if sessions.load else None


def message_fork(declared: Initialized, facts: AgentFacts) -> MessageFork | None:
    """How this agent forks a session at a message, from its `initialize` answer and what is known
    of it (`facts`, protocol/acp/agent_facts.py); None: it cannot (it declares no `session/fork`, or it
    is not known to read a fork point, or its version is older than the one known to)."""
    known = facts.forks_at_message
    if known is None or not declared.capabilities.sessions.fork:
        return None
    found = version(declared.info.version) if declared.info is not None else None
    return known if found is not None and found >= known.since else None


def _fork_at(declared: Initialized, facts: AgentFacts, point: ForkPoint | None, meta: Mapping[str, Any]) -> Try | None:
    """The fork that goes on from `point`, if this agent forks at a message; None: a new session, primed.
    A fork that copies the whole session would hold the turns the chat left behind."""
    how = message_fork(declared, facts) if point is not None else None
    if how is None or point is None:
        return None
    return Try(Method.FORK, point.session_id, merge_meta(meta, how.meta(point.message_id)))


def refused(attempt: Try, why: Refusal, said: str) -> Stop | None:
    """What a refusal of `attempt` means: None, the next try; else the turn's failure. `said`: the
    agent's error message (REFUSED), or what was odd about its answer (ODD)."""
    if not attempt.must:
        return None
    named = attempt.session_id is not None
    if why is Refusal.HELD:
        return Stop(FailureKind.SESSION_IN_USE, f"session {attempt.session_id} is already open in another chat; continue it there, or start a new chat")
    if why is Refusal.REFUSED:
        if named:
            return Stop(FailureKind.RESUME_FAILED, f"could not continue session {attempt.session_id}: {said}")
        return Stop(FailureKind.SESSION_NEW_FAILED, f"refused {attempt.method.value}: {said}")
    return Stop(FailureKind.RESUME_FAILED if named else FailureKind.SESSION_NEW_FAILED, f"answered {attempt.method.value} oddly: {said}")


# Spare sessions ----------------------------------------------------------------------------


class SpareFit(enum.Enum):
    """Whether a spare session made ahead (`actors/conversation/spares.py`) serves a plan."""

    FITS = "fits"
    RETOOL = "retool"  # made with other tools: it fits once the agent lists the plan's (Codex never does)
    OTHER_EDITING = "other editing"  # made with the agent's own editing the other way: an ACP session's options are fixed at session/new
    NOT_NEW = "not new"  # the plan goes on in an agent session of the chat's, or opens none: the spare waits for another chat
    OTHER_FOLDERS = "other folders"  # the chat's workspace has folders the spare's session was not given


def spare_fit(wanted: Plan, made: Plan) -> SpareFit:
    """Whether the spare opened by plan `made` serves the plan `wanted` (both plain new sessions of
    the same agent, in the same folder)."""
    if not (wanted.is_new and made.is_new):
        return SpareFit.NOT_NEW
    if wanted.others != made.others:
        return SpareFit.OTHER_FOLDERS
    if wanted.tries != made.tries or wanted.edits_handed_off != made.edits_handed_off:
        return SpareFit.OTHER_EDITING
    return SpareFit.FITS if wanted.tools == made.tools else SpareFit.RETOOL
