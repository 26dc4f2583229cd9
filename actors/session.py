"""The Session actor: one per conversation, one ACP session (DESIGN §5).

It takes turns from a peekable mailbox, prompts the agent with what is new, and streams
the agent's updates back as parts. When the agent needs VS Code (a permission), it emits
a tool call, completes the VS Code response, and *peeks* the next turn: exactly the
awaited result continues the same agent turn; anything else cancels the agent's turn and
is then taken as a fresh prompt.

Cancellation from VS Code arrives as the turn's cancel scope being cancelled by History.
"""

from __future__ import annotations

import logging
import uuid

import trio

from actors.agent_process import (
    AgentError,
    AgentExited,
    AgentPool,
    AgentSession,
    PermissionAsked,
    PromptDone,
    PromptFailed,
    Update,
)
from actors.mailbox import PeekableMailbox
from actors.messages import CompleteEvent, FailedEvent, PartEvent, SessionEvent, Turn, session_failure
from actors.rendering import (
    EMPTY_REPLY,
    STOP_NOTES,
    ToolCallTracker,
    agent_action_parameters,
    awaited_results,
    build_prompt,
    choose_option,
    render_update,
)
from protocol import acp
from protocol.jsonrpc import RpcError
from protocol.lm import AGENT_ACTION_TOOL, Agent, Part, TextPart, ToolCallPart

log = logging.getLogger(__name__)

CANCEL_DRAIN_TIMEOUT = 10.0  # how long a cancelled prompt may take to report its stop reason


class _Retired(Exception):
    """The conversation cannot go on (agent gone, or it ignored a cancel)."""


class SessionActor:
    def __init__(
        self,
        conversation: str,
        agent: Agent,
        pool: AgentPool,
        mailbox: trio.MemoryReceiveChannel[Turn],
        outbox: trio.MemorySendChannel[SessionEvent],
    ) -> None:
        self.conversation = conversation
        self.agent = agent
        self._pool = pool
        self._mailbox = PeekableMailbox(mailbox)
        self._outbox = outbox
        self._tracker = ToolCallTracker()
        self._visible = False  # the current VS Code response has a text or tool-call part
        self._session: AgentSession | None = None

    async def run(self) -> None:
        try:
            first = await self._mailbox.peek()
        except trio.EndOfChannel:
            return
        try:
            self._session = await self._pool.open_session(self.agent, first.cwd, [])
        except AgentError as exc:
            self._fail(first, exc.error, retire=True)
            return
        try:
            while True:
                try:
                    turn = await self._mailbox.receive()
                except trio.EndOfChannel:
                    break
                await self._run_turn(turn, self._session)
        except _Retired:
            pass
        finally:
            self._session.close()

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

    # One agent turn, possibly spanning several VS Code requests ----------------------------------

    async def _run_turn(self, turn: Turn, session: AgentSession) -> None:
        self._visible = False
        blocks = build_prompt(turn, accepts_images=session.accepts_images)
        if not blocks:
            self._part(turn, TextPart("*(Nothing new to send to the agent.)*"))
            self._complete(turn)
            return
        session.prompt(blocks)
        request = turn
        while True:
            outcome = None
            with request.scope:
                outcome = await self._pump(request, session)
            if outcome is None:  # VS Code cancelled (lm/cancel, or a newer request)
                await self._cancel_agent_turn(session)
                return
            match outcome:
                case PromptDone(stop_reason=stop):
                    if stop in STOP_NOTES:
                        self._part(request, TextPart(STOP_NOTES[stop]))
                    self._complete(request)
                    return
                case PromptFailed(error=error):
                    self._fail(request, session_failure(f"The agent failed: {error.message}", kind="prompt_failed", code=error.code), retire=False)
                    return
                case AgentExited(error=error):
                    self._fail(request, error, retire=True)
                    raise _Retired
                case PermissionAsked() as ask:
                    following = await self._ask_vscode(request, ask)
                    if following is None:
                        await self._cancel_agent_turn(session)
                        return
                    request = following
                    self._visible = False

    async def _pump(self, request: Turn, session: AgentSession) -> PromptDone | PromptFailed | AgentExited | PermissionAsked:
        """Forward agent updates until the prompt ends or the agent needs VS Code."""
        async for event in session.events:
            match event:
                case Update(update=update):
                    for part in render_update(update, self._tracker):
                        self._part(request, part)
                case PermissionAsked() as ask:
                    if request.offers_agent_action:
                        return ask
                    # Nobody to ask: reject, so the agent knows and carries on (a bare
                    # `cancelled` would end the whole turn with nothing to show).
                    reject = choose_option(ask.params.get("options"), allow=False)
                    ask.answer(acp.selected_outcome(reject) if reject else acp.CANCELLED_OUTCOME)
                case PromptDone() | PromptFailed() | AgentExited():
                    return event
        return AgentExited(session_failure("The agent connection closed", kind="agent_exited"))

    async def _ask_vscode(self, request: Turn, ask: PermissionAsked) -> Turn | None:
        """Surface a permission as a tool call; returns the turn that approved it, if one did."""
        call_id = f"sym-{uuid.uuid4()}"
        self._part(request, ToolCallPart(call_id, AGENT_ACTION_TOOL, agent_action_parameters(ask.params)))
        self._complete(request)
        try:
            following = await self._mailbox.peek()
        except trio.EndOfChannel:
            ask.answer(acp.CANCELLED_OUTCOME)
            return None
        option = choose_option(ask.params.get("options"), allow=True)
        if awaited_results(following, [call_id]) is None or option is None:
            ask.answer(acp.CANCELLED_OUTCOME)
            return None
        ask.answer(acp.selected_outcome(option))
        return self._mailbox.consume()

    async def _cancel_agent_turn(self, session: AgentSession) -> None:
        """`session/cancel`, deny what is pending, and wait (bounded) for the stop reason.

        Draining the cancelled prompt's end here is what keeps the next turn from ending
        early on a stale stop reason (predecessor bug 11).
        """
        session.cancel()
        with trio.move_on_after(CANCEL_DRAIN_TIMEOUT):
            async for event in session.events:
                match event:
                    case PermissionAsked() as ask:
                        ask.answer(acp.CANCELLED_OUTCOME)
                    case PromptDone() | PromptFailed():
                        self._tracker = ToolCallTracker()
                        return
                    case AgentExited(error=error):
                        self._fail(None, error, retire=True)
                        raise _Retired
        log.warning("agent %s did not end a cancelled turn within %.0f s; retiring the conversation", session.agent_name, CANCEL_DRAIN_TIMEOUT)
        self._fail(None, session_failure("The agent did not stop after a cancel", kind="cancel_timeout"), retire=True)
        raise _Retired
