"""The History actor with real Sessions and the in-process Eliza: the routing rules of docs/DESIGN.md, "History and matching"."""

from __future__ import annotations

import math
import os

import trio

from actors.agent.pool import AgentPool
from actors.bridge.listener import BridgeListener
from actors.conversation.history import ChatRequest, HistoryActor
from protocol.history.channels import FailedEvent, PartEvent, Reply, SessionEvent
from protocol.history.markers import MarkerCodec
from protocol.shared.failures import FailureKind, failure
from protocol.shared.settings import Settings
from protocol.vscode.lm import (
    AGENT_ACTION_APPROVED,
    AGENT_ACTION_TOOL,
    ChatParams,
    ElizaAgent,
    MarkerPart,
    Message,
    Options,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    to_wire,
)
from symposium import launch

AGENT = ElizaAgent(deterministic=True)


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def ask(history: HistoryActor, request_id: int, *messages: Message, tools: tuple[Tool, ...] = ()) -> trio.MemoryReceiveChannel[Reply]:
    send, receive = trio.open_memory_channel[Reply](math.inf)
    history.mailbox.send_nowait(ChatRequest(request_id, ChatParams("m", tuple(to_wire(m) for m in messages), AGENT, Options(tools)), send))
    return receive


async def collect(replies: trio.MemoryReceiveChannel[Reply]) -> list[Reply]:
    return [reply async for reply in replies]


async def start_history(nursery: trio.Nursery) -> HistoryActor:
    history = HistoryActor(AgentPool(nursery, cwd=os.getcwd(), connector=launch.connect), Settings(), MarkerCodec(b"k" * 32), bridges=BridgeListener(nursery, launch.RELAY))
    nursery.start_soon(history.run)
    return history


async def test_stale_events_of_an_older_turn_never_reach_the_newer_request(nursery: trio.Nursery) -> None:
    history = await start_history(nursery)
    with trio.fail_after(30):
        old = ask(history, 1, user("count slowly to 100"))
        assert (await old.receive()).part is not None
        [conversation] = list(history._live)  # the one conversation, for the forged events below
        new = ask(history, 2, user("count slowly to 100"), user("Hello"))
        old_replies = await collect(old)
        assert old_replies[-1].error is not None and old_replies[-1].error.kind == "cancelled"
        # Events of turn 1 arriving late (as they would from a session still winding down).
        for _ in range(3):
            history.mailbox.send_nowait(SessionEvent(conversation, 1, PartEvent(TextPart("STALE"))))
        new_replies = await collect(new)
    text = "".join(r.part.value for r in new_replies if isinstance(r.part, TextPart))
    assert "STALE" not in text
    assert text == "How do you do. Please state your problem."
    assert new_replies[-1].complete


async def test_an_agent_lost_on_the_replaced_turn_does_not_fail_the_request_that_replaced_it(nursery: trio.Nursery) -> None:
    history = await start_history(nursery)
    with trio.fail_after(30):
        old = ask(history, 1, user("count slowly to 100"))
        assert (await old.receive()).part is not None
        [conversation] = list(history._live)
        new = ask(history, 2, user("count slowly to 100"), user("Hello"))
        await collect(old)
        # What a Session says when its agent exits while it still holds turn 1: the agent is
        # gone, the conversation retired. Request 2 never reached that agent.
        exited = failure(FailureKind.AGENT_EXITED, "Agent 'eliza' exited")
        history.mailbox.send_nowait(SessionEvent(conversation, 1, FailedEvent(exited, retire=True)))
        new_replies = await collect(new)
    assert new_replies[-1].complete, new_replies[-1].error
    text = "".join(r.part.value for r in new_replies if isinstance(r.part, TextPart))
    assert text == "How do you do. Please state your problem."
    assert conversation not in history._live  # it went on in a new conversation


async def test_every_request_gets_exactly_one_answer_at_shutdown(nursery: trio.Nursery) -> None:
    history = await start_history(nursery)
    with trio.fail_after(30):
        a = ask(history, 1, user("count slowly to 100"))
        b = ask(history, 2, user("count slowly to 50"))
        await a.receive()
        await b.receive()
        await history.shutdown()
        for replies in (a, b):
            ends = [r for r in await collect(replies) if r.complete or r.error]
            assert len(ends) == 1 and ends[0].error is not None and ends[0].error.kind == "shutdown"


async def test_an_agent_stopped_while_idle_is_restarted_transparently(nursery: trio.Nursery, autojump_clock: trio.abc.Clock) -> None:
    pool = AgentPool(nursery, cwd=os.getcwd(), connector=launch.connect, idle=60)
    history = HistoryActor(pool, Settings(), MarkerCodec(b"k" * 32), bridges=BridgeListener(nursery, launch.RELAY))
    nursery.start_soon(history.run)
    first = await collect(ask(history, 1, user("Hello")))
    reply = "".join(r.part.value for r in first if isinstance(r.part, TextPart))
    assert reply == "How do you do. Please state your problem."
    await trio.sleep(300)  # virtual time: the agent is stopped for idleness meanwhile
    assert pool.started == 1 and not pool._agents
    again = await collect(ask(history, 2, user("Hello"), Message("assistant", (TextPart(reply),)), user("I feel sad")))
    assert again[-1].complete
    assert "".join(r.part.value for r in again if isinstance(r.part, TextPart)) == "Do you often feel sad?"
    assert pool.started == 2  # a new agent, primed with the conversation so far


# Releasing conversations (on trio's virtual clock) --------------------------------------------------

AGENT_ACTION = Tool(AGENT_ACTION_TOOL, "Request permission", {"type": "object"})


def text_of(replies: list[Reply]) -> str:
    return "".join(r.part.value for r in replies if isinstance(r.part, TextPart))


def as_assistant(replies: list[Reply]) -> Message:
    """Our reply as a consumer sends it back: the marker first, then the text and tool calls."""
    parts = [r.part for r in replies if isinstance(r.part, MarkerPart)]
    if text := text_of(replies):
        parts.append(TextPart(text))
    parts += [r.part for r in replies if isinstance(r.part, ToolCallPart)]
    return Message("assistant", tuple(parts))


def holds_nothing_of(history: HistoryActor, conversation: str) -> bool:
    return (
        conversation not in history._live
        and conversation not in history._releases
        and conversation not in history._ending
        and conversation not in history._by_request.values()
        and conversation not in history._conversations
        and history._conversations.indexed == len([c for c in history._live.values() if not c.record.throwaway])
    )


async def start_releasing(nursery: trio.Nursery, **settings: float) -> HistoryActor:
    pool = AgentPool(nursery, cwd=os.getcwd(), connector=launch.connect, idle=10**6)
    history = HistoryActor(pool, Settings(**settings), MarkerCodec(b"k" * 32), bridges=BridgeListener(nursery, launch.RELAY))  # type: ignore[arg-type]
    nursery.start_soon(history.run)
    return history


async def test_an_idle_conversation_is_released_and_its_marker_brings_it_back(nursery: trio.Nursery, autojump_clock: trio.abc.Clock) -> None:
    history = await start_releasing(nursery, conversation_idle=60)
    first = await collect(ask(history, 1, user("Hello")))
    [conversation] = list(history._live)
    await trio.sleep(59)
    assert conversation in history._live
    await trio.sleep(2)  # virtual time: idle for a minute, so released
    assert holds_nothing_of(history, conversation) and not history._live
    again = await collect(ask(history, 2, user("Hello"), as_assistant(first), user("I feel sad")))
    assert again[-1].complete and text_of(again) == "Do you often feel sad?"
    assert list(history._live) == [conversation]  # the same conversation, back through the restart path


async def test_a_streaming_conversation_is_not_released_however_long_it_streams(nursery: trio.Nursery, autojump_clock: trio.abc.Clock) -> None:
    history = await start_releasing(nursery, conversation_idle=10, max_conversations=1)
    counting = ask(history, 1, user("count slowly to 200"))  # 50 s of virtual time
    await counting.receive()
    others = [await collect(ask(history, n, user(f"Hello {n}"))) for n in range(2, 5)]  # over the limit meanwhile
    replies = await collect(counting)
    assert replies[-1].complete and text_of(replies).split()[-1] == "200"
    assert all(o[-1].complete for o in others)


async def test_a_conversation_waiting_on_vscode_outlasts_idle_time_and_goes_only_under_pressure(
    nursery: trio.Nursery, autojump_clock: trio.abc.Clock
) -> None:
    history = await start_releasing(nursery, conversation_idle=60, max_conversations=1)
    asked = await collect(ask(history, 1, user("run ls"), tools=(AGENT_ACTION,)))
    [call] = [r.part for r in asked if isinstance(r.part, ToolCallPart)]
    [waiting] = list(history._live)
    await trio.sleep(600)
    assert waiting in history._live  # the permission card may still be on screen
    approved = Message("user", (ToolResultPart(call.tool_call_id, (TextPart(AGENT_ACTION_APPROVED),)),))
    done = await collect(ask(history, 2, user("run ls"), as_assistant(asked), approved, tools=(AGENT_ACTION,)))
    assert done[-1].complete and "ls" in text_of(done)

    asked = await collect(ask(history, 3, user("run pwd"), tools=(AGENT_ACTION,)))
    [call] = [r.part for r in asked if isinstance(r.part, ToolCallPart)]
    [waiting] = list(history._live)  # the finished conversation went: two live, limit one
    streaming = ask(history, 4, user("count slowly to 20"))  # over the limit, nothing idle: the waiting one goes
    await streaming.receive()
    assert holds_nothing_of(history, waiting)
    assert (await collect(streaming))[-1].complete
    # The user answers the card after all: the conversation comes back and the request is answered.
    approved = Message("user", (ToolResultPart(call.tool_call_id, (TextPart(AGENT_ACTION_APPROVED),)),))
    late = await collect(ask(history, 5, user("run pwd"), as_assistant(asked), approved, tools=(AGENT_ACTION,)))
    assert len([r for r in late if r.complete or r.error]) == 1 and late[-1].complete
