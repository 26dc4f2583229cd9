"""The AgentProcess actor: the ACP client for one agent definition (docs/DESIGN.md, "Actors and channels").

One connection per agent definition, multiplexing its sessions: a second conversation
with the same agent costs a `session/new`, not a process (the pool of them:
`actors/agent_pool.py`). How the agent is started and stopped is not this module's business:
the actor receives a `Connector` (`actors/agent_connection.py`; the backend's is
`symposium/launch.py`) and speaks ACP over the `AgentConnection` it returns, keeping the
agent's stderr for diagnostics.

Sessions talk to this actor only through channels: `AgentSession` sends commands on the
actor's mailbox and receives its session's events on a channel of its own, as the turn machine
knows them (`protocol/turn.py`'s `AgentEvent`: one vocabulary from the agent to the machine).
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable
import logging
import math
import os
from typing import Any

import attrs
import trio

from actors import agent_files
from actors.agent_connection import AgentConnection, Connector
from actors.flow import EVENTS_WINDOW, Receipt, Window
from actors.mailbox import answering, queued
from actors.racing import race
from protocol import auth
from protocol.confinement import write_refusal
from actors.windows import windows
from protocol.capabilities import NOTHING_DECLARED, AgentCapabilities, Initialized, read_initialize
from protocol.updates import read_prompt_result, read_session_answer, read_update
from protocol.agent_facts import AgentFacts, AgentFactsTable, OwnEdits, facts_for
from protocol.agent_options import CHOICE_UPDATES
from protocol.failures import AgentError, Failure, FailureKind, failure, resource_failure
from protocol.forking import Fork
from protocol.mcp_transport import Transport
from protocol.mcp_transport import transport as mcp_transport
from protocol.settings import Settings
from protocol.tool_policy import merge_meta
from actors.version import version
from protocol import acp, fs_edits
from protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, LineSplitter, Overlong, RpcError
from actors.peer import ConnectionClosed, Peer
from protocol.redact import Redactor
from actors.transcript import Recorder
from protocol.lm import Agent, ElizaAgent, ProcessAgent, agent_to_wire
from protocol.turn import AgentEvent, AgentGone, AgentUpdates, FileWriteRequested, PermissionRequested, PromptEnded, PromptErrored, QuestionAsked
from protocol.wire import canonical_json

log = logging.getLogger(__name__)

INITIALIZE_TIMEOUT = 60.0  # npx-installed agents can take a while on first start
EXIT_DRAIN = 1.0  # an agent that exited while something it started holds its stdout: read what it wrote first
STDERR_LINES = 20
STDERR_READ_MAX = 64 * 1024  # a stderr line longer than this is kept by its head only
CLOSE_TIMEOUT = 10.0  # an agent that does not answer session/close is not waited on longer
FILE_THREADS = 4  # worker threads an agent's file reads and writes may hold at once
# A sign-in the agent handles itself (a browser, a device code) waits on the user: longer than
# the deadline of other requests, bounded all the same (docs/DESIGN.md, "Sign-in").
AUTHENTICATE_TIMEOUT = 600.0
STDERR_LINE_MAX = 4096  # characters of a stderr line kept for an error's data
# An agent's stderr is read at most this fast (bytes/s), after a first STDERR_BURST: beyond it the
# agent waits on its own writes, as on a full pipe, instead of taking the backend's CPU from every
# other conversation. Agents that log verbosely write kilobytes a second.
STDERR_RATE = 1024 * 1024
STDERR_BURST = 1024 * 1024
STDERR_DRAIN = 1.0  # after an agent exited, how long what it left on stderr is read at full speed
# What an agent says of a session with no prompt running is about a prompt that ended (or
# replays history): dropped, but for what changes the session's state. Those are kept while
# the session has less than IDLE_BACKLOG bytes unread, so a flood between prompts costs nothing.
BETWEEN_PROMPTS = CHOICE_UPDATES | {"usage_update"}
IDLE_BACKLOG = 64 * 1024


class StderrTail:
    """The last STDERR_LINES non-blank lines of an agent's stderr, for an error's data.

    Kept raw and redacted only when read: an agent can write stderr endlessly, and redacting
    every line (though only the last few are kept) once took most of a core and slowed every
    other conversation a hundredfold. Per read the work is a split in C and a look at the
    lines that are kept.
    """

    def __init__(self, keep: int = STDERR_LINES) -> None:
        self._splitter = LineSplitter(STDERR_READ_MAX)
        self._lines: collections.deque[bytes | Overlong] = collections.deque(maxlen=keep)

    def feed(self, chunk: bytes) -> list[bytes | Overlong]:
        """Take what the agent wrote; returns the lines it completed (for whoever wants each)."""
        lines = self._splitter.feed(chunk)
        kept: list[bytes | Overlong] = []
        for raw in reversed(lines):  # from the end, until enough are kept: bounded by `keep` but for blank lines
            if len(kept) == self._lines.maxlen:
                break
            if (raw.head if isinstance(raw, Overlong) else raw).strip():
                kept.append(raw)
        self._lines.extend(reversed(kept))
        return lines

    def end(self) -> bytes | Overlong | None:
        """The end of the stream: keep an unterminated last line (often why the agent exited)."""
        last = self._splitter.leftover()
        if last is not None and (last.head if isinstance(last, Overlong) else last).strip():
            self._lines.append(last)
        return last

    def lines(self, redact: Callable[[str], str]) -> list[str]:
        """The kept lines, oldest first, each redacted now and cut to STDERR_LINE_MAX."""
        return [line for line in (tail_line(raw, redact) for raw in self._lines) if line]


def tail_line(raw: bytes | Overlong, redact: Callable[[str], str]) -> str:
    """A stderr line as it is shown: decoded, redacted, then cut (redacting first, so that a cut
    cannot leave a secret's start unrecognised)."""
    text = raw.head if isinstance(raw, Overlong) else raw
    line = redact(text.decode(errors="replace").rstrip())
    if line and (isinstance(raw, Overlong) or len(line) > STDERR_LINE_MAX):
        return line[:STDERR_LINE_MAX] + "..."
    return line


# Commands from sessions -------------------------------------------------------------------


@attrs.frozen
class _NewSession:
    cwd: str
    mcp_servers: list[dict[str, Any]]
    events: trio.MemorySendChannel[Any] = attrs.field(eq=False)
    reply: trio.MemorySendChannel[AgentSession | AgentError] = attrs.field(eq=False)
    resume: str | None = None  # an earlier session of this agent to resume or load, if it can
    must_resume: bool = False  # fail rather than start a new session when it cannot
    hand_off_edits: bool = False  # switch the agent's own file editing off, if we know how (protocol/tool_policy.py)
    fork: Fork | None = None  # fork this session instead (protocol/forking.py), else start a new one (unless `fork.must`)


@attrs.frozen
class _Prompt:
    session_id: str
    blocks: list[dict[str, Any]]


@attrs.frozen
class _Cancel:
    session_id: str
    then: tuple[Callable[[], None], ...] = attrs.field(default=(), eq=False)  # once session/cancel is out


@attrs.frozen
class _Close:
    session_id: str


@attrs.frozen
class _Call:
    """Any other request to the agent (set an option, list sessions); answered on `reply`."""

    method: str
    params: dict[str, Any]
    reply: trio.MemorySendChannel[Any] = attrs.field(eq=False)  # the result, or the RpcError
    timeout: float | None = None  # None: the agent's deadline for requests (`--agent-timeout`)


_Command = _NewSession | _Prompt | _Cancel | _Close | _Call


@attrs.define(eq=False)
class AgentSession:
    """A Session actor's handle on its ACP session; its events arrive on the Session's own channel."""

    id: str
    agent_name: str
    capabilities: AgentCapabilities
    _commands: trio.MemorySendChannel[_Command]
    loaded: bool = False  # resumed or loaded: the agent already holds the conversation
    answer: dict[str, Any] = attrs.Factory(dict)  # the agent's answer to session/new (load, resume): its choices
    edits_handed_off: bool = False  # its own file editing is off: VS Code's edit tools are bridged instead

    def _send(self, command: _Command) -> None:
        try:
            self._commands.send_nowait(command)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the agent is gone; its AgentGone event tells the session

    def prompt(self, blocks: list[dict[str, Any]]) -> None:
        """Start a prompt; its updates and its end arrive as events."""
        self._send(_Prompt(self.id, blocks))

    def cancel(self, then: tuple[Callable[[], None], ...] = ()) -> None:
        """`session/cancel`; then run `then` (answering what the agent still waits for).

        ACP wants the cancel first: answered before it, a denied permission reads to an
        agent as a failed tool, and it goes on working until the cancel lands.
        """
        self._send(_Cancel(self.id, then))

    def close(self) -> None:
        self._send(_Close(self.id))

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """A request to the agent about this session; raises RpcError, or AgentError if it
        exited or did not answer in time."""
        return await _call(self._commands, self.agent_name, method, params)

    @property
    def accepts_images(self) -> bool:
        return self.capabilities.prompt.image

    @property
    def accepts_resources(self) -> bool:
        return self.capabilities.prompt.embedded_context


async def _call(commands: trio.MemorySendChannel[_Command], name: str, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
    reply_send, reply = trio.open_memory_channel[Any](1)
    try:
        commands.send_nowait(_Call(method, params, reply_send, timeout))
        outcome = await reply.receive()
    except (trio.BrokenResourceError, trio.ClosedResourceError, trio.EndOfChannel):
        raise AgentError(failure(FailureKind.AGENT_EXITED, f"Agent {name!r} exited")) from None
    if isinstance(outcome, (RpcError, AgentError)):
        raise outcome
    return outcome


# The actor ---------------------------------------------------------------------------------


def agent_key(agent: Agent) -> str:
    """One agent definition, one key: for the pool's processes and the remembered sessions."""
    return canonical_json(agent_to_wire(agent), escaped=True)


def agent_label(agent: Agent) -> str:
    if isinstance(agent, ElizaAgent):
        return "Eliza"
    return agent.name or agent.command


class AgentProcess:
    """Owns one agent connection and routes its traffic to the sessions it serves."""

    def __init__(
        self,
        agent: Agent,
        *,
        cwd: str,
        connector: Connector,
        recorder: Recorder | None = None,
        secrets: Redactor | None = None,
        request_timeout: float = Settings().agent_timeout,
        facts: AgentFactsTable | None = None,
    ) -> None:
        self.agent = agent
        self._facts = facts or {}
        self._request_timeout = request_timeout
        self.name = agent_label(agent)
        self.cwd = cwd
        self._recorder = recorder
        self._connector = connector
        self.channel = f"agent {recorder.next_index('agent')} {self.name}" if recorder else ""
        self._commands_send, self._commands = trio.open_memory_channel[_Command](math.inf)
        self._sessions: dict[str, trio.MemorySendChannel[AgentEvent]] = {}
        # Per session: the bytes of updates handed to it and not yet taken, and its prompts
        # running. The reader waits while a window is full (backpressure, `actors/flow.py`).
        self._windows: dict[str, Window] = {}
        self._folders: dict[str, str] = {}  # session id -> the workspace folder its writes stay in
        # Its own threads for file work: a path that blocks holds these, never the backend's others.
        self._file_threads = trio.CapacityLimiter(FILE_THREADS)
        self._prompting: collections.Counter[str] = collections.Counter()
        self._stderr = StderrTail()
        self._stderr_ended: trio.Event | None = None  # set when stderr is read to its end (None: no stderr)
        self._stderr_wait: trio.CancelScope | None = None  # the rate limit's wait, cancelled to read the last words
        self._stderr_hurry = False  # the agent exited: read what it left without the rate limit
        # Agents print their configuration, keys included, and quote it in their errors: what
        # the agent says (stderr, error messages) is redacted before it is kept (for errors'
        # data.stderr), passed on, logged or recorded. `secrets` is the backend's, which its
        # log handler redacts with: every agent's env values are added to it.
        self._redactor = secrets if secrets is not None else Redactor()
        for var in agent.env if isinstance(agent, ProcessAgent) else ():
            self._redactor.add(var.value)
            if recorder is not None:
                recorder.secret(var.value)
        self._connection: AgentConnection | None = None
        self._peer: Peer | None = None
        self.initialized: Initialized = NOTHING_DECLARED  # what it declared at `initialize` (protocol/capabilities.py)
        self.auth_methods: tuple[auth.Method, ...] = ()  # its sign-in methods (protocol/auth.py), from `initialize`
        self.authenticated: str | None = None  # the method `authenticate` succeeded with on this connection
        self.auth_status: str | None = None  # who it says it is signed in as, where it pushes that (protocol/auth.py)
        self.exited = trio.Event()
        self._stopping = False
        self._broken: str | None = None  # what the agent sent that could not be read, if it did
        self.last_active = trio.current_time()
        self._closing: dict[str, trio.Event] = {}  # session id → set once its session/close is answered

    @property
    def prompts_in_flight(self) -> int:
        return sum(self._prompting.values())

    # Lifecycle -------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Start the agent, `initialize` it, then serve session commands until told to stop.

        A start-up failure is raised (as AgentError) to whoever started the actor; after
        start-up nothing escapes but cancellation: a dying agent becomes AgentGone events.
        """
        failure: AgentError | None = None
        try:
            async with trio.open_nursery() as nursery:
                try:
                    peer = await self._connect(nursery)
                    await self._initialize(peer)
                    await self._authenticate_without_asking(peer)
                except AgentError as exc:
                    failure = exc
                    nursery.cancel_scope.cancel()
                    return
                task_status.started()
                nursery.start_soon(self._watch_exit, peer, nursery.cancel_scope)
                async for command in self._commands:
                    self._handle(command, peer, nursery)
                # Mailbox closed: a graceful stop.
                await self._stop()
                nursery.cancel_scope.cancel()
        finally:
            self._commands_send.close()
            with trio.CancelScope(shield=True):
                await self._stop()
                if self._connection is not None:
                    await self._connection.aclose()
            self._refuse_queued()
            self._broadcast_exit()
            self.exited.set()
            if failure is not None:
                raise failure

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """A request to the agent outside any session (`session/list`); raises RpcError or AgentError."""
        return await _call(self._commands_send, self.name, method, params)

    async def authenticate(self, method_id: str) -> None:
        """ACP `authenticate` with one of the agent's methods, at the user's request (`lm/authenticate`):
        the agent signs in its own way, for at most AUTHENTICATE_TIMEOUT. Raises AgentError: an
        `auth_required` one, listing the methods, when the agent refuses."""
        try:
            await _call(self._commands_send, self.name, "authenticate", acp.authenticate_params(method_id), AUTHENTICATE_TIMEOUT)
        except RpcError as exc:
            raise AgentError(self.sign_in_failure(exc.message)) from None
        self.authenticated = method_id

    def sign_in_failure(self, said: str) -> Failure:
        """The failure of a request the agent refused until the user signs in: names the agent and
        lists its methods (`data.methods`), each as the extension offers it (protocol/auth.py)."""
        message = auth.sign_in_message(self.name, self.auth_methods, self._redactor.values(said))
        return self._failure(message, FailureKind.AUTH_REQUIRED, methods=[auth.to_wire(m) for m in self.auth_methods])

    def _sign_in_needed(self, exc: RpcError) -> bool:
        return auth.is_auth_required(exc.code, self.auth_methods)

    def _refuse_queued(self) -> None:
        """Commands sent just before the agent went away were never handled: a session waiting
        to open is told so (its reply channel closes: the agent exited), or it would wait forever."""
        for command in queued(self._commands):
            if isinstance(command, _NewSession):
                command.reply.close()
                command.events.close()
            elif isinstance(command, _Call):
                command.reply.close()  # its caller learns the agent exited
        self._commands.close()

    def stop(self) -> None:
        """Ask the actor to end; its connection stops the agent, bounded."""
        self._stopping = True
        self._commands_send.close()

    async def _connect(self, nursery: trio.Nursery) -> Peer:
        try:
            connection = self._connection = await self._connector(self.agent, self.cwd, nursery)
        except (OSError, ImportError) as exc:
            # Whatever starting needs (a pipe, a module the connector imports on first use) may
            # find the descriptors exhausted: that fails this start, never the backend.
            failure = resource_failure(f"start agent {self.name!r}", exc) if isinstance(exc, OSError) else None
            raise AgentError(failure or self._failure(f"Cannot start agent {self._named()}: {exc}", FailureKind.SPAWN_FAILED)) from None
        if connection.stderr is not None:
            self._stderr_ended = trio.Event()
            nursery.start_soon(self._read_stderr, connection.stderr)
        stream = connection.stream
        tracer = self._recorder.channel(self.channel) if self._recorder else None
        # An unreadable line may have been the reply a prompt waits for: give the agent up
        # (its turns fail, saying why) rather than leave that prompt waiting forever.
        peer = Peer(stream, name=f"agent {self.name}", tracer=tracer, unreadable_is_fatal=True, flow=self._room)
        peer.on_notifications("session/update", self._on_updates)
        peer.on_request("session/request_permission", self._on_permission)
        peer.on_request("elicitation/create", self._on_question)
        peer.on_request("fs/write_text_file", self._on_write)
        peer.on_notification("$/cancel_request", self._on_cancel_request)
        peer.on_notification(auth.STATUS_UPDATE, self._on_auth_status)
        self._peer = peer
        nursery.start_soon(peer.serve)
        return peer

    async def _read_stderr(self, stream: trio.abc.ReceiveStream) -> None:
        # Every line is passed on (redacted) only when someone reads them: a transcript being
        # recorded, or debug logging. Otherwise an agent's stderr costs a split per read.
        each = self._recorder is not None or log.isEnabledFor(logging.DEBUG)
        allowance, then = float(STDERR_BURST), trio.current_time()
        try:
            async for chunk in stream:
                now = trio.current_time()
                allowance = min(STDERR_BURST, allowance + (now - then) * STDERR_RATE) - len(chunk)
                then = now
                if allowance < 0 and not self._stderr_hurry:  # a rate limit (a token bucket), not a synchronisation
                    with trio.CancelScope() as self._stderr_wait:
                        await trio.sleep(-allowance / STDERR_RATE)
                lines = self._stderr.feed(chunk)
                if each:
                    for raw in lines:
                        self._stderr_line(raw)
            last = self._stderr.end()  # a last line without a newline (often why it exited)
            if each and last is not None:
                self._stderr_line(last)
        finally:
            assert self._stderr_ended is not None
            self._stderr_ended.set()

    def _stderr_line(self, raw: bytes | Overlong) -> None:
        line = tail_line(raw, self._redactor.free_text)
        if line:
            log.debug("agent %s stderr: %s", self.name, line)
            if self._recorder is not None:
                self._recorder.stderr(self.channel, line)

    async def _initialize(self, peer: Peer) -> None:
        try:
            with trio.fail_after(INITIALIZE_TIMEOUT):
                result = await peer.request("initialize", acp.initialize_params(version()))
        except trio.TooSlowError:
            raise AgentError(self._failure(f"Agent {self._named()} did not answer initialize within {INITIALIZE_TIMEOUT:.0f} s", FailureKind.INITIALIZE_TIMEOUT)) from None
        except ConnectionClosed:
            if peer.failure is not None:
                raise AgentError(self._failure(self._unreadable_note(peer.failure), FailureKind.AGENT_PROTOCOL_ERROR)) from None
            await self._reap()
            raise AgentError(self._failure(f"Agent {self._named()} exited during start-up{self._exit_note()}", FailureKind.EXITED)) from None
        except RpcError as exc:
            raise AgentError(self._failure(f"Agent {self._named()} refused initialize: {exc.message}", FailureKind.INITIALIZE_FAILED)) from None
        self.initialized = read_initialize(result)
        if self.initialized.odd:
            log.warning("agent %s: initialize: taken as absent, not of the schema's type: %s", self.name, ", ".join(self.initialized.odd))
        command = (self.agent.command, self.agent.args) if isinstance(self.agent, ProcessAgent) else (None, ())
        self.auth_methods = auth.methods(self.initialized.auth_methods, *command)

    @property
    def capabilities(self) -> AgentCapabilities:
        """What the agent declared it can do (none before `initialize` was answered)."""
        return self.initialized.capabilities

    async def _authenticate_without_asking(self, peer: Peer) -> None:
        """`authenticate` with the method the agent's environment already satisfies (an API key in
        its `env`), before any session: some agents open none until it is called. A refusal is
        only logged: `session/new` then says what the agent wants."""
        env = dict(os.environ)
        if isinstance(self.agent, ProcessAgent):
            env.update((var.name, var.value) for var in self.agent.env)
        method = auth.without_asking(self.auth_methods, env)
        if method is None:
            return
        try:
            await self._request(peer, "authenticate", acp.authenticate_params(method.id))
        except RpcError as exc:
            log.warning("agent %s refused authenticate with %s: %s", self.name, method.id, self._redactor.values(exc.message))
            return
        except AgentError as exc:
            log.warning("%s", exc.error.message)
            return
        log.info("agent %s: signed in with %s", self.name, method.id)
        self.authenticated = method.id

    async def _watch_exit(self, peer: Peer, scope: trio.CancelScope) -> None:
        """The agent is gone when its output ends or its process exits, whichever comes first:
        a child it started may hold its stdout open long after it died."""

        async def process_exited() -> None:
            assert self._connection is not None
            await self._connection.wait()
            with trio.move_on_after(EXIT_DRAIN):
                await peer.eof.wait()  # what it wrote before it exited is read first

        await race(process_exited, peer.eof.wait)
        if peer.failure is not None:
            # Still running, but it cannot be understood: fail its sessions now, then stop it.
            self._broken = peer.failure
            log.warning("agent %s: %s; stopping it", self.name, peer.failure)
        else:
            await self._reap()
            if self._stopping:
                log.info("agent %s exited%s", self.name, self._exit_note())
            else:
                log.warning("agent %s exited unexpectedly%s", self.name, self._exit_note())
        self._broadcast_exit()
        self._commands_send.close()
        scope.cancel()

    async def _request(self, peer: Peer, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        """`peer.request` within the agent's deadline for anything but a prompt (or `timeout`);
        past it, raises AgentError naming the agent and the step (`data.kind` agent_timeout, `data.step`)."""
        timeout = self._request_timeout if timeout is None else timeout
        with trio.move_on_after(timeout):
            return await peer.request(method, params)
        log.warning("agent %s did not answer %s within %g s", self.name, method, timeout)
        raise AgentError(self._failure(f"Agent {self.name!r} did not answer {method} within {timeout:g} s", FailureKind.AGENT_TIMEOUT, step=method))

    @property
    def usable(self) -> bool:
        """Running and understood: new sessions may be opened on it."""
        return not (self.exited.is_set() or self._stopping or self._broken)

    def _unreadable_note(self, problem: str) -> str:
        return f"Agent {self.name!r} sent a line that is not valid JSON-RPC ({problem}); it was stopped"

    async def _reap(self) -> None:
        if self._connection is not None:
            await self._connection.ended()
        if self._stderr_ended is not None:
            # Its last words (why it exited) may still wait behind the stderr rate limit: read
            # them at full speed, for at most STDERR_DRAIN (a child may hold stderr open).
            self._stderr_hurry = True
            if self._stderr_wait is not None:
                self._stderr_wait.cancel()
            with trio.move_on_after(STDERR_DRAIN):
                await self._stderr_ended.wait()
            self._stderr_hurry = False

    async def _stop(self) -> None:
        if self._connection is not None:
            await self._connection.stop()

    def _named(self) -> str:
        """The agent for a start-up failure: its name and the command that failed."""
        if isinstance(self.agent, ProcessAgent):
            return f"{self.name!r} ({' '.join([self.agent.command, *self.agent.args])})"
        return repr(self.name)

    def _exit_note(self) -> str:
        if self._connection is not None and self._connection.exit_code is not None:
            return f" (exit code {self._connection.exit_code})"
        return ""

    def _failure(self, message: str, kind: FailureKind, **details: Any) -> Failure:
        return failure(kind, self._redactor.values(message), agent=self.name, stderr=self._stderr.lines(self._redactor.free_text), **details)

    def _scrubbed(self, exc: RpcError) -> RpcError:
        """The agent's error as it is passed on: its message redacted, its data (anything at all) left out."""
        return RpcError(exc.code, self._redactor.values(exc.message))

    def _broadcast_exit(self) -> None:
        if not self._sessions:
            return
        if self._broken is not None:
            error = self._failure(self._unreadable_note(self._broken), FailureKind.AGENT_PROTOCOL_ERROR)
        else:
            error = self._failure(f"Agent {self.name!r} exited{self._exit_note()}", FailureKind.AGENT_EXITED)
        for send in self._sessions.values():
            try:
                send.send_nowait(AgentGone(error))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            send.close()
        self._sessions.clear()
        for window in self._windows.values():
            window.close()
        self._windows.clear()

    # Commands ----------------------------------------------------------------------------

    @property
    def facts(self) -> AgentFacts:
        """What is known of this agent beyond what it declares, by the `agentInfo.name` of its
        `initialize` (protocol/agent_facts.py); nothing before it answered."""
        return facts_for(self._facts, self.initialized)

    @property
    def own_edits(self) -> OwnEdits | None:
        """How this agent's own file editing is switched off, if we know (from its `initialize`)."""
        return self.facts.own_edits

    @property
    def mcp_transport(self) -> Transport:
        """How `vscode_tools` is offered to this agent: stdio, or HTTP to one that takes no stdio
        MCP server (protocol/mcp_transport.py)."""
        return mcp_transport(self.capabilities, http_only=self.facts.http_mcp_only)

    def hands_off(self, asked: bool) -> bool:
        """Whether a session asked to hand its file editing to VS Code's tools does: only where we
        know how to switch this agent's own editing off (docs/DESIGN.md, "Tool bridge")."""
        return asked and self.own_edits is not None

    async def new_session(
        self,
        cwd: str,
        mcp_servers: list[dict[str, Any]],
        events: trio.MemorySendChannel[Any],
        resume: str | None = None,
        must_resume: bool = False,
        hand_off_edits: bool = False,
        fork: Fork | None = None,
    ) -> AgentSession:
        reply_send, reply = trio.open_memory_channel[AgentSession | AgentError](1)
        try:
            self._commands_send.send_nowait(_NewSession(cwd, mcp_servers, events.clone(), reply_send, resume, must_resume, hand_off_edits, fork))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise AgentError(self._failure(f"Agent {self.name!r} is not running", FailureKind.AGENT_EXITED)) from None
        with reply:  # closed if the caller gives up (lm/cancel): the session opened is then closed, not kept
            try:
                outcome = await reply.receive()
            except trio.EndOfChannel:
                raise AgentError(self._failure(f"Agent {self.name!r} exited{self._exit_note()}", FailureKind.AGENT_EXITED)) from None
        if isinstance(outcome, AgentError):
            raise outcome
        return outcome

    def _handle(self, command: _Command, peer: Peer, nursery: trio.Nursery) -> None:
        self.last_active = trio.current_time()
        match command:
            case _NewSession():
                nursery.start_soon(self._open_session, command, peer, nursery)
            case _Prompt(session_id=sid, blocks=blocks):
                nursery.start_soon(self._prompt, peer, sid, blocks)
            case _Cancel(session_id=sid, then=then):
                nursery.start_soon(self._cancel, peer, sid, then)
            case _Close(session_id=sid):
                send = self._unroute(sid)
                if send is not None:
                    send.close()
                    # Not while stopping: the agent is about to go, and a close would only race its
                    # stop (and make recordings of the same run differ from one run to the next).
                    if self._closes_sessions() and not self._stopping:
                        self._closing[sid] = trio.Event()
                        nursery.start_soon(self._close_session, peer, sid, self._closing[sid])
            case _Call():
                nursery.start_soon(self._call, peer, command)

    def _resume_method(self) -> str | None:
        """How this agent takes back an earlier session: `session/resume` (no replay) or `session/load`."""
        sessions = self.capabilities.sessions
        if sessions.resume:
            return "session/resume"
        return "session/load" if sessions.load else None

    def _closes_sessions(self) -> bool:
        """Whether the agent frees a session on `session/close` (so forgotten ones cost it nothing)."""
        return self.capabilities.sessions.close

    async def _close_session(self, peer: Peer, session_id: str, done: trio.Event) -> None:
        try:
            with trio.move_on_after(CLOSE_TIMEOUT):
                await peer.request("session/close", {"sessionId": session_id})
        except (RpcError, ConnectionClosed) as exc:
            log.debug("agent %s: session/close of %s: %s", self.name, session_id, exc)
        finally:
            done.set()
            if self._closing.get(session_id) is done:
                del self._closing[session_id]

    async def _open_session(self, command: _NewSession, peer: Peer, nursery: trio.Nursery) -> None:
        with command.reply:  # closed however this ends: the Session waiting on it learns the agent is gone
            try:
                outcome = await self._session_for(command, peer)
            except AgentError as exc:
                outcome = exc
            except ConnectionClosed:
                outcome = None  # the reply channel closes; the caller reports the exit
            if not isinstance(outcome, AgentSession):
                command.events.close()
                if outcome is not None:
                    with contextlib.suppress(trio.BrokenResourceError):  # its conversation gave up waiting
                        command.reply.send_nowait(outcome)
                return
            try:
                command.reply.send_nowait(outcome)
            except trio.BrokenResourceError:
                # Its conversation gave up waiting (lm/cancel): nobody will use the session.
                log.info("agent %s: session %s opened after its conversation gave up; closing it", self.name, outcome.id)
                self._handle(_Close(outcome.id), peer, nursery)

    async def _session_for(self, command: _NewSession, peer: Peer) -> AgentSession | AgentError:
        """The session a conversation asked for: resumed (or loaded) if it named one and the
        agent can, else new. Routed to the conversation's events before it is returned."""
        if command.resume and (closing := self._closing.get(command.resume)) is not None:
            await closing.wait()  # a session closed a moment ago is taken back only once the agent has closed it
        method = self._resume_method() if command.resume else None
        # Fixed for the session's life: Claude Code reads its options once, at session/new.
        handing_off = self.own_edits if command.hand_off_edits else None
        meta = merge_meta(acp.SESSION_META, handing_off.meta) if handing_off is not None else acp.SESSION_META
        if command.fork is not None:
            forked = await self._forked(command, command.fork, peer, meta, handing_off is not None)
            if forked is not None:
                return forked
        if command.resume and command.resume in self._sessions:
            # Another live conversation holds it (two chats continued from one token): the
            # agent's replies go to one route per session, so a second would take the first's.
            if command.must_resume:
                message = f"Agent {self.name!r} session {command.resume} is already open in another chat; continue it there, or start a new chat"
                return AgentError(self._failure(message, FailureKind.SESSION_IN_USE))
            log.info("agent %s: session %s is held by another conversation; starting a new one", self.name, command.resume)
        elif command.resume and method is not None:
            # Routed before asking, so the history a loading agent replays reaches the
            # session, which drops it: the user saw it already.
            self._sessions[command.resume] = command.events
            self._folders[command.resume] = command.cwd
            params = (acp.resume_session_params if method == "session/resume" else acp.load_session_params)(command.resume, command.cwd, command.mcp_servers, meta)
            try:
                answer = await self._request(peer, method, params)
            except RpcError as exc:
                self._unroute(command.resume)
                if command.must_resume:
                    return AgentError(self._failure(f"Agent {self.name!r} could not continue session {command.resume}: {exc.message}", FailureKind.RESUME_FAILED))
                log.info("agent %s could not resume session %s (%s); starting a new one", self.name, command.resume, exc.message)
            except BaseException:
                self._unroute(command.resume)
                raise
            else:
                answer = read_session_answer(answer)
                return AgentSession(
                    command.resume, self.name, self.capabilities, self._commands_send, loaded=True, answer=answer, edits_handed_off=handing_off is not None
                )
        elif command.must_resume:
            return AgentError(self._failure(f"Agent {self.name!r} cannot continue earlier sessions", FailureKind.RESUME_FAILED))
        try:
            result = read_session_answer(await self._request(peer, "session/new", acp.new_session_params(command.cwd, command.mcp_servers, meta)))
            session_id = result.get("sessionId")
            if session_id is None:
                raise TypeError("no sessionId string")
        except RpcError as exc:
            if self._sign_in_needed(exc):
                return AgentError(self.sign_in_failure(exc.message))
            return AgentError(self._failure(f"Agent {self.name!r} refused session/new: {exc.message}", FailureKind.SESSION_NEW_FAILED))
        except (KeyError, TypeError) as exc:
            return AgentError(self._failure(f"Agent {self.name!r} answered session/new oddly: {exc}", FailureKind.SESSION_NEW_FAILED))
        if session_id in self._sessions:
            return AgentError(self._failure(f"Agent {self.name!r} answered session/new with session {session_id}, which another chat holds", FailureKind.SESSION_NEW_FAILED))
        self._sessions[session_id] = command.events
        self._folders[session_id] = command.cwd
        return AgentSession(session_id, self.name, self.capabilities, self._commands_send, answer=result, edits_handed_off=handing_off is not None)

    async def _forked(self, command: _NewSession, fork: Fork, peer: Peer, meta: dict[str, Any], handed_off: bool) -> AgentSession | AgentError | None:
        """The session `session/fork` makes of `fork.session_id` (the agent holds the history up
        to the fork point: no transcript is sent); None when the agent refused and a new session,
        primed, is to be made instead (docs/DESIGN.md, "Forks")."""
        if (closing := self._closing.get(fork.session_id)) is not None:
            await closing.wait()  # a session closed a moment ago is forked only once the agent has closed it
        params = acp.fork_session_params(fork.session_id, command.cwd, command.mcp_servers, merge_meta(meta, fork.meta))
        try:
            result = read_session_answer(await self._request(peer, "session/fork", params))
            session_id = result.get("sessionId")
            if session_id is None or session_id in self._sessions:
                raise TypeError("sessionId is not a new session's")
        except RpcError as exc:
            if fork.must:
                return AgentError(self._failure(f"Agent {self.name!r} could not continue session {fork.session_id}: {exc.message}", FailureKind.RESUME_FAILED))
            log.info("agent %s could not fork session %s (%s); starting a new one, primed", self.name, fork.session_id, exc.message)
            return None
        except (KeyError, TypeError) as exc:
            if fork.must:
                return AgentError(self._failure(f"Agent {self.name!r} answered session/fork oddly: {exc}", FailureKind.RESUME_FAILED))
            log.info("agent %s answered session/fork oddly (%s); starting a new session, primed", self.name, exc)
            return None
        log.info("agent %s: session %s forked from %s", self.name, session_id, fork.session_id)
        self._sessions[session_id] = command.events
        self._folders[session_id] = command.cwd
        return AgentSession(session_id, self.name, self.capabilities, self._commands_send, loaded=True, answer=result, edits_handed_off=handed_off)

    async def _prompt(self, peer: Peer, session_id: str, blocks: list[dict[str, Any]]) -> None:
        self._prompting[session_id] += 1
        try:
            result = await peer.request("session/prompt", {"sessionId": session_id, "prompt": blocks})
        except RpcError as exc:
            signing_in = self.sign_in_failure(exc.message) if self._sign_in_needed(exc) else None
            self._deliver(session_id, PromptErrored(self._scrubbed(exc), signing_in))
            return
        except ConnectionClosed:
            return  # AgentGone follows
        finally:
            self._prompting[session_id] -= 1
            if self._prompting[session_id] <= 0:
                del self._prompting[session_id]
            self.last_active = trio.current_time()
        ended = read_prompt_result(result)
        self._deliver(session_id, PromptEnded(ended.get("stopReason", "end_turn"), ended.get("usage")))

    async def _call(self, peer: Peer, command: _Call) -> None:
        with command.reply:
            try:
                result = await self._request(peer, command.method, command.params, command.timeout)
            except AgentError as exc:
                command.reply.send_nowait(exc)
            except RpcError as exc:
                command.reply.send_nowait(self._scrubbed(exc))
            except ConnectionClosed:
                return  # the reply channel closes: the caller reports the exit
            else:
                command.reply.send_nowait(result)

    async def _cancel(self, peer: Peer, session_id: str, then: tuple[Callable[[], None], ...]) -> None:
        try:
            await peer.notify("session/cancel", {"sessionId": session_id})
        except ConnectionClosed:
            pass
        for answer in then:
            answer()

    def _deliver(self, session_id: str, event: AgentEvent) -> bool:
        send = self._sessions.get(session_id)
        if send is None:
            log.debug("agent %s: event for unknown session %s dropped", self.name, session_id)
            return False
        try:
            send.send_nowait(event)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._unroute(session_id)
            return False
        return True

    def _unroute(self, session_id: str) -> trio.MemorySendChannel[AgentEvent] | None:
        """Stop routing to a session: its events channel (returned, for the caller to close)
        and its window, closed: what it left unread is nobody's, and the reader reads on."""
        if (window := self._windows.pop(session_id, None)) is not None:
            window.close()
        self._folders.pop(session_id, None)
        return self._sessions.pop(session_id, None)

    # Agent → client traffic ------------------------------------------------------------------

    def _on_updates(self, batch: list[Any], size: int) -> None:
        share = size // len(batch) if batch else 0  # bytes per update, near enough: one session streams at a time
        session = ""  # the session of the run of updates being gathered
        updates: list[dict[str, Any]] = []
        for params in batch:
            if type(params) is dict and (update := read_update(params.get("update"))) is not None:
                if type(to := params.get("sessionId")) is not str:
                    to = str(to)
                if to != session:
                    if updates:
                        self._deliver_updates(session, updates, share * len(updates))
                    session, updates = to, []
                updates.append(update)
        if updates:
            self._deliver_updates(session, updates, share * len(updates))

    def _deliver_updates(self, session_id: str, updates: list[dict[str, Any]], size: int) -> None:
        """Updates to their session, counted in its window; between its prompts, only those
        that change its state, and only while it has little unread (see BETWEEN_PROMPTS)."""
        if session_id not in self._sessions:
            log.debug("agent %s: updates for unknown session %s dropped", self.name, session_id)
            return
        window = self._windows.get(session_id)
        if window is None:
            window = self._windows[session_id] = Window(EVENTS_WINDOW)
        if session_id not in self._prompting:
            kept = [u for u in updates if u.get("sessionUpdate") in BETWEEN_PROMPTS] if window.out < IDLE_BACKLOG else []
            if len(kept) < len(updates):
                log.debug("agent %s: %d update(s) for session %s between prompts dropped", self.name, len(updates) - len(kept), session_id)
            if not kept:
                return
            size = size * len(kept) // len(updates)
            updates = kept
        if self._deliver(session_id, AgentUpdates(tuple(updates), Receipt(size, window))):
            window.spend(size)

    async def _room(self) -> None:
        """Before reading on: wait while a session has too much unread (its Session is
        waiting for VS Code to read). A session's window goes with its route (`_unroute`)."""
        for window in list(self._windows.values()):
            await window.room()

    async def _on_auth_status(self, params: Any) -> None:
        self.auth_status = auth.status_label(params)

    async def _on_cancel_request(self, params: Any) -> None:
        """The agent withdrew one of its requests (e.g. a permission): answer it -32800."""
        if isinstance(params, dict):
            self._peer.cancel_inbound(params.get("requestId", params.get("id")))  # type: ignore[union-attr]

    async def _on_question(self, params: Any, id: Any) -> dict[str, Any]:
        """`elicitation/create`: a question for the user, to its session's Session (the turn
        machine decides how it is asked); "cancel" when nobody can ask it."""
        if not isinstance(params, dict):
            return {"action": "cancel"}
        handle, reply = answering()
        if not self._deliver(str(params.get("sessionId")), QuestionAsked(handle, params)):
            return {"action": "cancel"}
        try:
            return await reply.receive()
        except trio.EndOfChannel:
            return {"action": "cancel"}

    async def _on_write(self, params: Any, id: Any) -> dict[str, Any]:
        """`fs/write_text_file`: to its session's Session, whose turn machine routes it through VS
        Code's edit tools or has it written on disk here (docs/DESIGN.md, "Edits through the client")."""
        if not isinstance(params, dict) or not isinstance(params.get("path"), str) or not isinstance(params.get("content"), str):
            raise RpcError(INVALID_PARAMS, "fs/write_text_file takes a path and a content")
        path, content = params["path"], params["content"]
        if not os.path.isabs(path):
            raise RpcError(INVALID_PARAMS, f"not an absolute path: {path!r}")
        folder = self._folders.get(str(params.get("sessionId")))
        try:
            before, diffable = await trio.to_thread.run_sync(self._checked_write, path, folder, limiter=self._file_threads)
        except agent_files.FileError as exc:
            raise RpcError(INVALID_PARAMS, str(exc)) from None
        handle, reply = answering()
        if not self._deliver(str(params.get("sessionId")), FileWriteRequested(handle, path, content, before, diffable)):
            raise RpcError(INTERNAL_ERROR, "no conversation of this session is open: the file is unchanged")
        try:
            outcome = await reply.receive()
        except trio.EndOfChannel:
            outcome = fs_edits.CANCELLED
        if isinstance(outcome, fs_edits.WriteOnDisk):
            try:
                await trio.to_thread.run_sync(agent_files.write_text, path, content, limiter=self._file_threads)
            except agent_files.FileError as exc:
                raise RpcError(INTERNAL_ERROR, str(exc)) from None
            return {}
        if isinstance(outcome, str):
            raise RpcError(INTERNAL_ERROR, outcome)
        return {}

    @staticmethod
    def _checked_write(path: str, folder: str | None) -> tuple[str | None, bool]:
        """On a worker thread: refuse a write outside `folder` (symlinks followed), under `.git/`, or
        to what is no regular file (protocol/confinement.py); else what the file holds now."""
        roots = [agent_files.resolved(folder)] if folder else []
        refusal = write_refusal(agent_files.resolved(path), roots, windows=windows())
        if refusal is not None:
            raise agent_files.FileError(refusal)
        return agent_files.current(path)

    async def _on_permission(self, params: Any, id: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            return {"outcome": {"outcome": "cancelled"}}
        handle, reply = answering()
        if not self._deliver(str(params.get("sessionId")), PermissionRequested(handle, params)):
            return {"outcome": {"outcome": "cancelled"}}
        try:
            outcome = await reply.receive()
        except trio.EndOfChannel:
            outcome = {"outcome": "cancelled"}
        return {"outcome": outcome}
