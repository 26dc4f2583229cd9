"""The Session actor: one per conversation, one ACP session (DESIGN §5).

It takes turns from a peekable mailbox, prompts the agent with what is new, and streams
the agent's updates back as parts. When the agent needs VS Code (a permission, or one of
VS Code's tools through the ToolBridge), it emits tool call(s), completes the VS Code
response, and *peeks* the next turn: exactly the awaited results continue the same agent
turn; anything else cancels the agent's turn and is then taken as a fresh prompt.

Cancellation from VS Code arrives as the turn's cancel scope being cancelled by History.
Events from the agent connection and from the ToolBridge arrive on one channel the
Session owns, so one loop sees them in the order they happened.
"""

from __future__ import annotations

import collections
import logging
import math
import os
import uuid
from collections.abc import Callable, Iterator
from functools import partial

import attrs
import trio

from actors.agent_process import (
    AgentError,
    AgentEvent,
    AgentExited,
    AgentPool,
    AgentSession,
    PermissionAsked,
    PromptDone,
    PromptFailed,
    Updates,
    agent_key,
)
from actors.agent_options import (
    MODE,
    Choice,
    UsageMeter,
    Value,
    after_set,
    bypasses_permissions,
    find,
    is_model_key,
    next_change,
    pending_options,
    read_choices,
    set_request,
    updated,
)
from actors.mailbox import PeekableMailbox
from actors.session_store import SessionStore
from actors.settings import Settings
from actors.messages import CompleteEvent, FailedEvent, PartEvent, SessionEvent, Turn, session_failure
from actors.rendering import (
    EMPTY_REPLY,
    REFUSED_NOTE,
    STOP_NOTES,
    ToolCallTracker,
    agent_action_parameters,
    approves,
    awaited_results,
    bridged_tool,
    build_prompt,
    latest_system,
    permission_outcome,
    render_updates,
)
from actors.tool_bridge import BridgeListener, ToolBridge, ToolCalled
from protocol import acp
from protocol.jsonrpc import RpcError
from protocol.transcript import Recorder
from protocol.lm import AGENT_ACTION_TOOL, Agent, Part, TextPart, ToolCallPart, ToolResultPart

log = logging.getLogger(__name__)

GATHER_WINDOW = 0.02  # tool calls the agent makes within this of each other go to VS Code together

Event = AgentEvent | ToolCalled


class _Retired(Exception):
    """The conversation cannot go on (agent gone, or it ignored a cancel)."""


@attrs.frozen
class _NeedsTools:
    calls: tuple[tuple[str, ToolCalled], ...]  # (our toolCallId, the agent's call), already emitted


class SessionActor:
    def __init__(
        self,
        conversation: str,
        agent: Agent,
        pool: AgentPool,
        mailbox: trio.MemoryReceiveChannel[Turn],
        outbox: trio.MemorySendChannel[SessionEvent],
        *,
        after: trio.Event | None = None,
        bridges: BridgeListener,
        settings: Settings,
        recorder: Recorder | None = None,
        store: SessionStore | None = None,
    ) -> None:
        self.conversation = conversation
        self.agent = agent
        self._pool = pool
        self._mailbox = PeekableMailbox(mailbox)
        self._outbox = outbox
        self._bridges = bridges
        self._after = after  # the previous Session of this conversation (released), still ending
        self._settings = settings
        self._recorder = recorder
        self._store = store
        self._events_send, self._events = trio.open_memory_channel[Event](math.inf)
        self._backlog: collections.deque[Event] = collections.deque()
        self._tracker = ToolCallTracker()
        self._visible = False  # the current VS Code response has a text or tool-call part
        self._system_sent: str | None = None  # the system message last forwarded (if forwarding)
        self._owed: list[Callable[[], None]] = []  # answers the agent gets once session/cancel is out
        self._choices: tuple[Choice, ...] = ()  # what the agent offers for this session, as it stands
        self._applied: dict[str, str | bool] = {}  # the options' values as last wanted and seen to
        self._before: dict[str, str | bool | None] = {}  # options we set: their values before we did
        self._warned: set[tuple[str, str | bool]] = set()  # options we could not set, said once
        self._meter = UsageMeter()

    async def run(self) -> None:
        if self._after is not None:
            await self._after.wait()  # it closes its agent session first: ours may load that one
        try:
            first = await self._mailbox.peek()
        except trio.EndOfChannel:
            return
        resume = self._store.find(self.conversation, agent_key(self.agent)) if first.resumable and self._store else None
        catalog = self._pool.catalog
        # A chat opened to continue one of the agent's own sessions names it in its opening.
        named = catalog.continued(agent_key(self.agent), first.context) if catalog is not None and resume is None else None
        resume = named or resume
        # A session made ahead (actors/warm.py) comes with its bridge and its events channel.
        spare = await self._pool.spares.take(self.agent, first.cwd, first.tools) if self._pool.spares and not resume else None
        if spare is not None:
            self._events_send, self._events = spare.events_send, spare.events
        bridge = spare.bridge if spare else ToolBridge(self._events_send, self._bridges, recorder=self._recorder)
        async with trio.open_nursery() as nursery:
            try:
                if spare is None:
                    await nursery.start(bridge.run, first.tools)  # raises AgentError when it cannot listen
                session = spare.session if spare else await self._pool.open_session(
                    self.agent, resume[1] if resume else first.cwd, [bridge.entry()], self._events_send, resume[0] if resume else None, named is not None
                )
            except AgentError as exc:
                self._fail(first, exc.error, retire=True)
            else:
                if self._store is not None:
                    self._store.save(self.conversation, agent_key(self.agent), session.id, os.path.abspath(first.cwd or os.getcwd()))
                if session.loaded:
                    self._drop_replayed_history()
                self._take_choices(session)
                try:
                    await self._serve(session, bridge)
                except _Retired:
                    pass
                finally:
                    session.close()
            bridge.close()

    async def _serve(self, session: AgentSession, bridge: ToolBridge) -> None:
        while True:
            try:
                turn = await self._mailbox.receive()
            except trio.EndOfChannel:
                return
            if session.loaded and turn.context:
                turn = attrs.evolve(turn, context=())  # the loaded session holds the history already
            await self._run_turn(turn, session, bridge)

    def _take_choices(self, session: AgentSession) -> None:
        self._choices = read_choices(session.answer)
        if self._pool.catalog is not None and not session.loaded:
            self._pool.catalog.learn_choices(agent_key(self.agent), self._choices)
        mode = find(self._choices, MODE)
        if mode is not None and isinstance(mode.current, str) and bypasses_permissions(Value(mode.current, mode.label(mode.current))):
            log.warning("agent %s starts its sessions in mode %r: it acts without asking permission", session.agent_name, mode.label(mode.current))

    async def _apply_options(self, turn: Turn, session: AgentSession) -> bool:
        """Set what the turn wants of the agent's options, where it changed, before prompting
        (the model first); options an earlier turn set and this one no longer names go back to
        what they were (`agent_options.pending_options`).

        A model the agent does not offer fails the turn (the user picked it); another option
        it does not offer is logged and left as it is.
        """
        asked = dict(turn.options)
        wanted = pending_options(asked, self._applied, self._before)
        done: list[str] = []
        while (step := next_change(self._choices, wanted, done)) is not None:
            key, change = step
            done.append(key)
            if isinstance(change, str):
                if not self._option_problem(turn, session, key, wanted[key], f"agent {session.agent_name!r} {change}"):
                    return False
                continue
            method, params = set_request(session.id, change)
            try:
                answer = await session.call(method, params)
            except RpcError as exc:
                if not self._option_problem(turn, session, key, change.value, f"agent {session.agent_name!r} refused {change.choice.name} {change.value!r}: {exc.message}"):
                    return False
                continue
            except AgentError as exc:
                self._fail(turn, exc.error, retire=True)
                raise _Retired from None
            self._before.setdefault(key, change.choice.current)
            self._choices = after_set(self._choices, change.choice, change.value, answer)
            log.info("agent %s, conversation %s: %s set to %s", session.agent_name, self.conversation[:8], change.choice.name, change.choice.label(change.value))
        for key in wanted:
            if key in asked:
                self._applied[key] = asked[key]
            else:
                self._applied.pop(key, None)  # set back
        return True

    def _option_problem(self, turn: Turn, session: AgentSession, key: str, value: str | bool, problem: str) -> bool:
        """Fails the turn for the model the user picked; logs (once) any other option. Whether to go on."""
        if is_model_key(key):
            self._fail(turn, session_failure(f"Cannot use this model: {problem}", kind="option_refused", option=key), retire=False)
            return False
        if (key, value) not in self._warned:
            self._warned.add((key, value))
            log.warning("option %s=%r not set: %s", key, value, problem)
        return True

    def _drop_replayed_history(self) -> None:
        """`session/load` replays the conversation as updates; the user has seen it."""
        self._backlog.extend(event for event in self._waiting() if not isinstance(event, Updates))

    # Emitting to History ------------------------------------------------------------------

    def _send(self, turn: Turn | None, event: PartEvent | CompleteEvent | FailedEvent) -> None:
        try:
            self._outbox.send_nowait(SessionEvent(self.conversation, turn.number if turn else None, event))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # History is shutting down

    def _part(self, turn: Turn, part: Part) -> None:
        if isinstance(part, (TextPart, ToolCallPart)):
            self._visible = True
        self._send(turn, PartEvent(part))

    def _complete(self, turn: Turn) -> None:
        if not self._visible:
            self._part(turn, TextPart(EMPTY_REPLY))  # consumers report a bare end as "no response"
        self._send(turn, CompleteEvent())

    def _fail(self, turn: Turn | None, error: RpcError, *, retire: bool) -> None:
        self._send(turn, FailedEvent(error, retire))

    # Events --------------------------------------------------------------------------------

    def _waiting(self) -> Iterator[Event]:
        """The events already queued, taken without waiting."""
        while True:
            try:
                yield self._events.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                return

    async def _next_event(self) -> Event:
        if self._backlog:
            await trio.lowlevel.checkpoint()
            return self._backlog.popleft()
        return await self._events.receive()

    async def _gather_calls(self, request: Turn, first: ToolCalled) -> tuple[tuple[str, ToolCalled], ...]:
        """Emit the agent's tool call, and any it makes right after, in one VS Code response.

        Each part goes out at once; the response completes once the agent has been quiet
        for GATHER_WINDOW, so calls the agent makes together run in parallel in VS Code.
        """
        calls = [self._emit_call(request, first)]
        try:
            while True:
                with trio.move_on_after(GATHER_WINDOW):
                    event = await self._next_event()
                    if isinstance(event, ToolCalled):
                        calls.append(self._emit_call(request, event))
                        continue
                    self._backlog.appendleft(event)
                return tuple(calls)
        except trio.Cancelled:
            self._backlog.extendleft(call for _, call in reversed(calls))  # still owed an answer
            raise

    def _emit_call(self, request: Turn, call: ToolCalled) -> tuple[str, ToolCalled]:
        # Our own id: unique across the conversation, whatever ids the agent uses (seed 004 §3.3).
        call_id = f"sym-{uuid.uuid4()}"
        self._part(request, ToolCallPart(call_id, call.name, call.arguments if call.arguments is not None else {}))
        return call_id, call

    # One agent turn, possibly spanning several VS Code requests ----------------------------------

    def _agent_gone(self) -> AgentExited | None:
        """An agent that exited while the conversation was idle (stopped for idleness, crashed)."""
        self._backlog.extend(self._waiting())
        return next((e for e in self._backlog if isinstance(e, AgentExited)), None)

    async def _run_turn(self, turn: Turn, session: AgentSession, bridge: ToolBridge) -> None:
        if (gone := self._agent_gone()) is not None:
            # Nothing of this turn was started: History retries it as a new conversation.
            self._fail(None, gone.error, retire=True)
            raise _Retired
        self._visible = False
        bridge.update_tools(turn.tools)
        system = latest_system(turn) if self._settings.forward_system else None
        if system == self._system_sent:
            system = None  # forwarded already; Copilot re-renders it every request
        else:
            self._system_sent = system
        blocks = build_prompt(turn, accepts_images=session.accepts_images, accepts_resources=session.accepts_resources, system=system)
        if not blocks:
            self._part(turn, TextPart("*(Nothing new to send to the agent.)*"))
            self._complete(turn)
            return
        request = turn
        refused = False  # the user said no to the agent's last permission
        prompted = False
        while True:
            outcome = None
            with request.scope:
                if not prompted:
                    # The agent's options first (the model the user picked, the mode in settings).
                    if not await self._apply_options(turn, session):
                        return  # the turn failed, saying why
                    self._meter.start_turn(blocks)
                    session.prompt(blocks)
                    prompted = True
                outcome = await self._pump(request, bridge)
            if outcome is None:  # VS Code cancelled (lm/cancel, or a newer request)
                if prompted:
                    await self._cancel_agent_turn(session)
                return
            match outcome:
                case PromptDone(stop_reason=stop, usage=usage):
                    self._report_usage(request, session, usage)
                    if stop == "cancelled" and refused:
                        # Some agents' only "no" ends their turn (Codex's `abort`): say why.
                        self._part(request, TextPart(REFUSED_NOTE))
                    elif stop in STOP_NOTES:
                        self._part(request, TextPart(STOP_NOTES[stop]))
                    self._complete(request)
                    return
                case PromptFailed(error=error):
                    failure = session_failure(f"The agent failed: {error.message}", kind="prompt_failed", code=error.code)
                    self._fail(request, failure, retire=False)
                    return
                case AgentExited(error=error):
                    self._fail(request, error, retire=True)
                    raise _Retired
                case PermissionAsked() as ask:
                    following, refused = await self._ask_permission(request, ask)
                case _NeedsTools(calls=calls):
                    following, refused = await self._run_vscode_tools(request, calls), False
            if following is None:
                await self._cancel_agent_turn(session)
                return
            request = following
            bridge.update_tools(request.tools)
            self._visible = False

    def _report_usage(self, turn: Turn, session: AgentSession, prompt_usage: dict | None) -> None:
        """The log shows what the turn cost; the catalog learns the context window and bytes per token."""
        usage = self._meter.finish(prompt_usage)
        if usage.reported:
            log.info("agent %s, conversation %s, turn usage: %s", session.agent_name, self.conversation[:8], usage.describe())
        if self._pool.catalog is not None:
            self._pool.catalog.learn_usage(agent_key(self.agent), turn.model_id, usage)

    def _observe(self, updates: list[dict]) -> list[Part]:
        """Agent updates: what they change of the session's options and usage, and their parts."""
        self._meter.observe_all(updates)
        for update in updates:
            if (choices := updated(self._choices, update)) is not None:
                self._choices = choices
        return render_updates(updates, self._tracker)

    async def _pump(self, request: Turn, bridge: ToolBridge) -> PromptDone | PromptFailed | AgentExited | PermissionAsked | _NeedsTools:
        """Forward agent updates until the prompt ends or the agent needs VS Code."""
        while True:
            event = await self._next_event()
            match event:
                case Updates(updates=updates):
                    # Updates that are already waiting go out with these, merged.
                    for more in () if self._backlog else self._waiting():
                        if not isinstance(more, Updates):
                            self._backlog.append(more)
                            break
                        updates = [*updates, *more.updates]
                    for part in self._observe(updates):
                        self._part(request, part)
                case PermissionAsked() as ask:
                    if bridged_tool(ask.params, bridge.tool_names()) is not None:
                        # VS Code confirms its own tools when it runs them.
                        ask.answer(permission_outcome(ask.params.get("options"), allow=True))
                    elif request.offers_agent_action:
                        return ask
                    else:
                        # Nobody to ask: reject, so the agent knows and carries on (a bare
                        # `cancelled` would end the whole turn with nothing to show).
                        ask.answer(permission_outcome(ask.params.get("options"), allow=False))
                case ToolCalled():
                    return _NeedsTools(await self._gather_calls(request, event))
                case PromptDone() | PromptFailed() | AgentExited():
                    return event

    async def _ask_permission(self, request: Turn, ask: PermissionAsked) -> tuple[Turn | None, bool]:
        """Surface a permission as a tool call; returns the turn that answered it, if one did,
        and whether the answer was "no".

        Its result approves only if it is exactly the approval token; any other result (Skip,
        a disabled tool, invalid input, an error) rejects, and the agent's turn goes on in the
        response to that result. A next turn that is not the result (the user moved on) is None.
        """
        call_id = f"sym-{uuid.uuid4()}"
        self._part(request, ToolCallPart(call_id, AGENT_ACTION_TOOL, agent_action_parameters(ask.params)))
        self._complete(request)
        results = await self._peek_results([call_id])
        if results is None:
            self._owed.append(lambda: ask.answer(acp.CANCELLED_OUTCOME))  # after session/cancel
            return None, False
        allow = approves(results[call_id])
        ask.answer(permission_outcome(ask.params.get("options"), allow=allow))
        return self._mailbox.consume(), not allow

    async def _run_vscode_tools(self, request: Turn, calls: tuple[tuple[str, ToolCalled], ...]) -> Turn | None:
        """Complete the response VS Code runs the calls from; returns the turn with their results."""
        self._complete(request)
        results = await self._peek_results([call_id for call_id, _ in calls])
        if results is None:
            for _, call in calls:
                self._owed.append(partial(call.answer, "VS Code did not run the tool: the user cancelled or moved on"))
            return None
        for call_id, call in calls:
            call.answer(results[call_id])
        return self._mailbox.consume()

    async def _peek_results(self, ids: list[str]) -> dict[str, ToolResultPart] | None:
        """The peek/consume rule: the next turn's results if it is exactly them, else None."""
        try:
            following = await self._mailbox.peek()
        except trio.EndOfChannel:
            return None
        return awaited_results(following, ids)

    async def _cancel_agent_turn(self, session: AgentSession) -> None:
        """`session/cancel`, deny what is pending, and wait (bounded) for the stop reason.

        Draining the cancelled prompt's end here is what keeps the next turn from ending
        early on a stale stop reason (predecessor bug 11).
        """
        owed, self._owed = tuple(self._owed), []
        session.cancel(then=owed)
        with trio.move_on_after(self._settings.cancel_timeout):
            while True:
                match await self._next_event():
                    case Updates(updates=updates):
                        self._meter.observe_all(updates)  # what it cost still counts
                    case PermissionAsked() as ask:
                        ask.answer(acp.CANCELLED_OUTCOME)
                    case ToolCalled() as call:
                        call.answer("the turn was cancelled")
                    case PromptDone() | PromptFailed():
                        self._tracker = ToolCallTracker()
                        return
                    case AgentExited(error=error):
                        self._fail(None, error, retire=True)
                        raise _Retired
        log.warning(
            "agent %s did not end a cancelled turn within %.1f s; retiring the conversation", session.agent_name, self._settings.cancel_timeout
        )
        self._fail(None, session_failure("The agent did not stop after a cancel", kind="cancel_timeout"), retire=True)
        raise _Retired

