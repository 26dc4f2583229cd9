"""The AgentProcess actor: the ACP client for one agent definition (docs/DESIGN.md, "Actors and channels").

One connection per agent definition, multiplexing its sessions: a second conversation
with the same agent costs a `session/new`, not a process (the pool of them:
`actors/agent/pool.py`). How the agent is started and stopped is not this module's business:
the actor receives a `Connector` (`actors/agent/connection.py`; the backend's is
`symposium/launch.py`) and speaks ACP over the `AgentConnection` it returns, keeping the
agent's stderr for diagnostics.

Sessions talk to this actor only through channels: `AgentSession` sends commands on the
actor's mailbox and receives its session's events on a channel of its own, as the turn machine
knows them (`protocol/turn/machine.py`'s `AgentEvent`: one vocabulary from the agent to the machine).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Callable
from typing import Any

import trio

from actors.agent.client_handlers import ClientHandlers
from actors.agent.connection import AgentConnection, Connector
from actors.agent.routes import SessionRoutes
from actors.agent.session_handle import AgentSession, Call, Cancel, Close, Command, OpenSession, Prompt, call_agent
from actors.agent.stderr_tail import StderrReader, StderrTail, tail_line
from actors.shared.mailbox import queued
from actors.shared.peer import ConnectionClosed, Peer
from actors.shared.racing import race
from actors.shared.version import version
from actors.store.transcript import Recorder
from protocol.acp import auth
from protocol.acp import schema as acp
from protocol.acp.agent_facts import AgentFacts, AgentFactsTable, facts_for
from protocol.acp.capabilities import NOTHING_DECLARED, AgentCapabilities, Initialized, read_initialize
from protocol.acp.updates import read_prompt_result, read_session_answer
from protocol.shared.failures import AgentError, Failure, FailureKind, failure, resource_failure
from protocol.shared.jsonrpc import Overlong, Response, RpcError
from protocol.shared.redact import Redactor
from protocol.shared.settings import Settings
from protocol.turn.events import AgentGone, PromptEnded, PromptErrored
from protocol.turn.opening import Chat, Method, Plan, Refusal, Try, plan_opening, refused
from protocol.vscode.agent_identity import agent_label
from protocol.vscode.lm import Agent, ProcessAgent

log = logging.getLogger(__name__)

INITIALIZE_TIMEOUT = 60.0  # npx-installed agents can take a while on first start
EXIT_DRAIN = 1.0  # an agent that exited while something it started holds its stdout: read what it wrote first
CLOSE_TIMEOUT = 10.0  # an agent that does not answer session/close is not waited on longer
# A sign-in the agent handles itself (a browser, a device code) waits on the user: longer than
# the deadline of other requests, bounded all the same (docs/DESIGN.md, "Sign-in").
AUTHENTICATE_TIMEOUT = 600.0


# The actor ---------------------------------------------------------------------------------


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
        self._commands_send, self._commands = trio.open_memory_channel[Command](math.inf)
        self._routes = SessionRoutes(self.name)  # the sessions it serves, each to its Session
        self._stderr = StderrTail()
        self._stderr_reader: StderrReader | None = None  # None: no stderr
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
        self.initialized: Initialized = NOTHING_DECLARED  # what it declared at `initialize` (protocol/acp/capabilities.py)
        self.auth_methods: tuple[auth.Method, ...] = ()  # its sign-in methods (protocol/acp/auth.py), from `initialize`
        self.authenticated: str | None = None  # the method `authenticate` succeeded with on this connection
        self.auth_status: str | None = None  # who it says it is signed in as, where it pushes that (protocol/acp/auth.py)
        self.exited = trio.Event()
        self._stopping = False
        self._broken: str | None = None  # what the agent sent that could not be read, if it did
        self.last_active = trio.current_time()
        self._closing: dict[str, trio.Event] = {}  # session id → set once its session/close is answered

    @property
    def prompts_in_flight(self) -> int:
        return self._routes.prompts_in_flight

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
        return await call_agent(self._commands_send, self.name, method, params)

    async def authenticate(self, method_id: str) -> None:
        """ACP `authenticate` with one of the agent's methods, at the user's request (`lm/authenticate`):
        the agent signs in its own way, for at most AUTHENTICATE_TIMEOUT. Raises AgentError: an
        `auth_required` one, listing the methods, when the agent refuses."""
        try:
            await call_agent(self._commands_send, self.name, "authenticate", acp.authenticate_params(method_id), AUTHENTICATE_TIMEOUT)
        except RpcError as exc:
            raise AgentError(self.sign_in_failure(exc.message)) from None
        self.authenticated = method_id

    def sign_in_failure(self, said: str) -> Failure:
        """The failure of a request the agent refused until the user signs in: names the agent and
        lists its methods (`data.methods`), each as the extension offers it (protocol/acp/auth.py)."""
        message = auth.sign_in_message(self.name, self.auth_methods, self._redactor.values(said))
        return self._failure(message, FailureKind.AUTH_REQUIRED, methods=[auth.to_wire(m) for m in self.auth_methods])

    def _sign_in_needed(self, exc: RpcError) -> bool:
        return auth.is_auth_required(exc.code, self.auth_methods)

    def _refuse_queued(self) -> None:
        """Commands sent just before the agent went away were never handled: a session waiting
        to open is told so (its reply channel closes: the agent exited), or it would wait forever."""
        for command in queued(self._commands):
            if isinstance(command, OpenSession):
                command.reply.close()
                command.events.close()
            elif isinstance(command, Call):
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
            # Every line is passed on (redacted) only when someone reads them: a transcript being
            # recorded, or debug logging. Otherwise an agent's stderr costs a split per read.
            each = self._stderr_line if self._recorder is not None or log.isEnabledFor(logging.DEBUG) else None
            self._stderr_reader = StderrReader(self._stderr, each)
            nursery.start_soon(self._stderr_reader.read, connection.stderr)
        stream = connection.stream
        tracer = self._recorder.channel(self.channel) if self._recorder else None
        # An unreadable line may have been the reply a prompt waits for: give the agent up
        # (its turns fail, saying why) rather than leave that prompt waiting forever.
        peer = Peer(stream, name=f"agent {self.name}", tracer=tracer, unreadable_is_fatal=True, flow=self._routes.room)
        ClientHandlers(self._routes, cancel_inbound=peer.cancel_inbound, on_status=self._signed_in_as).register(peer)
        self._peer = peer
        nursery.start_soon(peer.serve)
        return peer

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
        program, args = (self.agent.command, self.agent.args) if isinstance(self.agent, ProcessAgent) else (None, ())
        self.auth_methods = auth.methods(self.initialized.auth_methods, program, args, keys=self.facts.keys, key_method=self.facts.key_method, documented=self.facts.documented_env)

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
        if self._stderr_reader is not None:
            await self._stderr_reader.drain()  # its last words: why it exited

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

    def _signed_in_as(self, status: str | None) -> None:
        self.auth_status = status

    def _broadcast_exit(self) -> None:
        if not self._routes:
            return
        if self._broken is not None:
            error = self._failure(self._unreadable_note(self._broken), FailureKind.AGENT_PROTOCOL_ERROR)
        else:
            error = self._failure(f"Agent {self.name!r} exited{self._exit_note()}", FailureKind.AGENT_EXITED)
        self._routes.end(AgentGone(error))

    # Commands ----------------------------------------------------------------------------

    @property
    def facts(self) -> AgentFacts:
        """What is known of this agent beyond what it declares, by the `agentInfo.name` of its
        `initialize` (protocol/acp/agent_facts.py); nothing before it answered."""
        return facts_for(self._facts, self.initialized)

    def plan(self, chat: Chat) -> Plan:
        """How `chat`'s session is opened with this agent (protocol/turn/opening.py): from what it
        declared at `initialize` and what is known of it."""
        return plan_opening(self.initialized, self.facts, chat)

    async def open_session(self, plan: Plan, cwd: str, mcp_servers: list[dict[str, Any]], events: trio.MemorySendChannel[Any]) -> AgentSession:
        """The session `plan` opens, in the absolute folder `cwd`, its events sent on `events`;
        raises AgentError when it opens none (`_carried_out`)."""
        reply_send, reply = trio.open_memory_channel[AgentSession | AgentError](1)
        try:
            self._commands_send.send_nowait(OpenSession(plan, cwd, mcp_servers, events.clone(), reply_send))
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

    def _handle(self, command: Command, peer: Peer, nursery: trio.Nursery) -> None:
        self.last_active = trio.current_time()
        match command:
            case OpenSession():
                nursery.start_soon(self._open_session, command, peer, nursery)
            case Prompt(session_id=sid, blocks=blocks):
                nursery.start_soon(self._prompt, peer, sid, blocks)
            case Cancel(session_id=sid, then=then):
                nursery.start_soon(self._cancel, peer, sid, then)
            case Close(session_id=sid):
                send = self._routes.unroute(sid)
                if send is not None:
                    send.close()
                    # Not while stopping: the agent is about to go, and a close would only race its
                    # stop (and make recordings of the same run differ from one run to the next).
                    if self._closes_sessions() and not self._stopping:
                        self._closing[sid] = trio.Event()
                        nursery.start_soon(self._close_session, peer, sid, self._closing[sid])
            case Call():
                nursery.start_soon(self._call, peer, command)

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

    async def _open_session(self, command: OpenSession, peer: Peer, nursery: trio.Nursery) -> None:
        with command.reply:  # closed however this ends: the Session waiting on it learns the agent is gone
            try:
                outcome = await self._carried_out(command, peer)
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
                self._handle(Close(outcome.id), peer, nursery)

    async def _carried_out(self, command: OpenSession, peer: Peer) -> AgentSession | AgentError:
        """The plan's tries in order until one opens the session, routed to the conversation's
        events before it is returned: the one place a session is opened (docs/DESIGN.md, "Opening a
        session"). What a refusal means, the next try or the turn's failure, is the plan's."""
        plan = command.plan
        if plan.stop is not None:
            return AgentError(self._failure(f"Agent {self.name!r} {plan.stop.message}", plan.stop.kind))
        for index, attempt in enumerate(plan.tries):
            outcome = await self._try(attempt, command, peer)
            if isinstance(outcome, AgentSession):
                return outcome
            why, said, sign_in = outcome
            stop = refused(attempt, why, said)
            if stop is not None:
                return AgentError(self.sign_in_failure(said) if sign_in else self._failure(f"Agent {self.name!r} {stop.message}", stop.kind))
            after = plan.tries[index + 1].method.value if index + 1 < len(plan.tries) else "nothing"
            log.info("agent %s: %s of session %s %s (%s); trying %s", self.name, attempt.method.value, attempt.session_id, why.value, said, after)
        # Not reached: every plan ends with a try that must succeed, or stops (tests/unit/test_opening.py).
        return AgentError(self._failure(f"Agent {self.name!r} opened no session", FailureKind.SESSION_NEW_FAILED))

    async def _try(self, attempt: Try, command: OpenSession, peer: Peer) -> AgentSession | tuple[Refusal, str, bool]:
        """One try: the session it opened, or why it opened none (and whether the agent wants a
        sign-in first). A session taken back is routed before asking, so the history a loading
        agent replays reaches the Session, which drops it: the user saw it already."""
        if attempt.session_id is not None and (closing := self._closing.get(attempt.session_id)) is not None:
            await closing.wait()  # a session closed a moment ago is taken back or forked only once the agent has closed it
        taken = attempt.session_id if attempt.exclusive else None  # the session itself: routed to this chat alone
        if taken is not None:
            if taken in self._routes:
                return Refusal.HELD, "another chat holds it", False
            self._routes.route(taken, command.events, command.cwd, command.plan.others)
        try:
            answer = read_session_answer(await self._request(peer, attempt.method.value, attempt.params(command.cwd, command.mcp_servers, command.plan.additional_directories)))
        except RpcError as exc:
            if taken is not None:
                self._routes.unroute(taken)
            return Refusal.REFUSED, exc.message, self._sign_in_needed(exc)
        except BaseException:
            if taken is not None:
                self._routes.unroute(taken)
            raise
        session_id = taken or answer.get("sessionId")
        if session_id is None:
            return Refusal.ODD, "no sessionId string", False
        if taken is None:
            if session_id in self._routes:
                return Refusal.ODD, f"session {session_id}, which another chat holds", False
            self._routes.route(session_id, command.events, command.cwd, command.plan.others)
        if attempt.method is Method.FORK:
            log.info("agent %s: session %s forked from %s", self.name, session_id, attempt.session_id)
        return AgentSession(
            session_id, self.name, self.capabilities, self._commands_send, holds_history=not attempt.primes, answer=answer, edits_handed_off=command.plan.edits_handed_off
        )

    async def _prompt(self, peer: Peer, session_id: str, blocks: list[dict[str, Any]]) -> None:
        """A prompt: its end goes to the session as the answer is read (`Peer.request`'s `answered`),
        so that what the agent says or asks after it is never taken for part of it."""
        self._routes.prompt_started(session_id)
        running = True

        def ended(response: Response) -> None:
            nonlocal running
            running = False
            self._routes.prompt_ended(session_id)
            self.last_active = trio.current_time()
            if (exc := response.error) is not None:
                signing_in = self.sign_in_failure(exc.message) if self._sign_in_needed(exc) else None
                self._routes.deliver(session_id, PromptErrored(self._scrubbed(exc), signing_in))
            else:
                result = read_prompt_result(response.result)
                self._routes.deliver(session_id, PromptEnded(result.get("stopReason", "end_turn"), result.get("usage")))

        try:
            await peer.request("session/prompt", {"sessionId": session_id, "prompt": blocks}, answered=ended)
        except (RpcError, ConnectionClosed):
            pass  # answered through `ended`; or the agent is gone, and AgentGone follows
        finally:
            if running:
                self._routes.prompt_ended(session_id)
                self.last_active = trio.current_time()

    async def _call(self, peer: Peer, command: Call) -> None:
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
