"""The History actor with real Sessions and the in-process Eliza: routing rules the predecessor broke."""

from __future__ import annotations

import math
import os

import trio

from actors.agent_process import AgentPool
from actors.history import ChatRequest, HistoryActor
from actors.messages import PartEvent, Reply, SessionEvent
from actors.markers import MarkerCodec
from actors.settings import Settings
from protocol.lm import ChatParams, ElizaAgent, Message, TextPart, to_wire

AGENT = ElizaAgent(deterministic=True)


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def ask(history: HistoryActor, request_id: int, *messages: Message) -> trio.MemoryReceiveChannel[Reply]:
    send, receive = trio.open_memory_channel[Reply](math.inf)
    history.mailbox.send_nowait(ChatRequest(request_id, ChatParams("m", tuple(to_wire(m) for m in messages), AGENT), send))
    return receive


async def collect(replies: trio.MemoryReceiveChannel[Reply]) -> list[Reply]:
    return [reply async for reply in replies]


async def start_history(nursery: trio.Nursery) -> HistoryActor:
    history = HistoryActor(AgentPool(nursery, cwd=os.getcwd()), Settings(), MarkerCodec(b"k" * 32))
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
        assert old_replies[-1].error is not None and old_replies[-1].error.code == -32800
        # Events of turn 1 arriving late (as they would from a session still winding down).
        for _ in range(3):
            history.mailbox.send_nowait(SessionEvent(conversation, 1, PartEvent(TextPart("STALE"))))
        new_replies = await collect(new)
    text = "".join(r.part.value for r in new_replies if isinstance(r.part, TextPart))
    assert "STALE" not in text
    assert text == "How do you do. Please state your problem."
    assert new_replies[-1].complete


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
            assert len(ends) == 1 and ends[0].error is not None and ends[0].error.data["kind"] == "shutdown"


async def test_an_agent_stopped_while_idle_is_restarted_transparently(nursery: trio.Nursery, autojump_clock: trio.abc.Clock) -> None:
    pool = AgentPool(nursery, cwd=os.getcwd(), idle=60)
    history = HistoryActor(pool, Settings(), MarkerCodec(b"k" * 32))
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
