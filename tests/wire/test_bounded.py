"""Bounded resources over the real wire: conversations are released and come back.

A real `symposium vscodelm` runs with a low open-file limit and a low `--max-conversations`:
far more conversations than the limit would once have allowed are all answered, the
backend's descriptors stay flat, and the first conversation still continues after it was
released, through the restart path: primed in a new session for Eliza (she cannot load
sessions; she does close them), its own session loaded again for an agent that can.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import trio

from symposium.client import BackendClient, ChatResult, process_agent, user
from tests.conftest import SUPPORT, Tap
from tests.support.copilot import Copilot

GUARD = 120
NOFILE = 64  # the backend crashed with EMFILE at about the 50th conversation under this limit
LIMIT = 8
CONVERSATIONS = 150
CONCURRENCY = 8


def open_fds(pid: int) -> int:
    """The descriptors the backend holds, not counting the import machinery's: the backend
    imports the MCP SDK in a thread ahead of need, and that thread may hold a `.pyc` or a
    package folder (listed for its import cache) open at the moment we look, which says
    nothing about what conversations hold."""
    held = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # closed while we looked
            continue
        held += not (target.endswith((".py", ".pyc")) or os.path.isdir(target))
    return held


def with_marker(result: ChatResult) -> dict[str, Any]:
    """Our reply as the extension sends it back: the marker first, then the text."""
    [marker] = [p for p in result.parts if p["type"] == "marker"]
    return {"role": "assistant", "content": [marker, {"type": "text", "value": result.text()}]}


async def converse(backend: BackendClient, agent: dict[str, Any], model_id: str, first: int, count: int) -> None:
    """`count` new one-turn conversations, CONCURRENCY at a time; each must be answered."""
    limiter = trio.Semaphore(CONCURRENCY)

    async def one(n: int) -> None:
        async with limiter:
            result = await backend.chat([user(f"I need conversation {n}")], agent=agent, model_id=model_id)
            assert result.completed and result.error is None, result.error

    async with trio.open_nursery() as nursery:
        for n in range(first, first + count):
            nursery.start_soon(one, n)


def session_ids(records: list[dict[str, Any]]) -> list[str]:
    """The session ids the agent handed out, in order."""
    return [r["msg"]["result"]["sessionId"] for r in records if isinstance(r.get("msg", {}).get("result"), dict) and "sessionId" in r["msg"]["result"]]


async def test_far_more_conversations_than_descriptors_are_answered_and_the_first_continues_primed(tap: Tap) -> None:
    args = ["vscodelm", "--max-conversations", str(LIMIT)]
    async with BackendClient.spawn(args, nofile=NOFILE) as backend:
        assert backend.process is not None
        pid = backend.process.pid
        with trio.fail_after(GUARD):
            first = await backend.chat([user("Hello")], agent=tap.agent, model_id="eliza-tap")
            await converse(backend, tap.agent, "eliza-tap", 1, LIMIT)
            held = open_fds(pid)
            await converse(backend, tap.agent, "eliza-tap", LIMIT + 1, CONVERSATIONS - LIMIT - 1)
            stats = await backend.stats()
            after = open_fds(pid)
            again = await backend.chat([user("Hello"), with_marker(first), user("I feel sad")], agent=tap.agent, model_id="eliza-tap")
    assert first.text() == "How do you do. Please state your problem."
    assert stats["conversations"] == LIMIT and stats["bridges"] == LIMIT
    assert after <= held < 32, (held, after)
    assert again.completed and again.text() == "Do you often feel sad?"
    # Eliza cannot load sessions: the first conversation's session was closed when it was
    # released, and it came back in a new one, primed with what was said.
    sessions = session_ids(tap.records())
    closed = [m["params"]["sessionId"] for m in tap.requests("session/close")]
    assert sessions[0] in closed and len(set(closed)) == len(closed) >= CONVERSATIONS // 2
    assert tap.requests("session/prompt")[-1]["params"]["sessionId"] == sessions[-1] != sessions[0]
    assert tap.prompts()[-1].startswith("Earlier in this conversation:\n\nUser: Hello\n\nAssistant: How do you do.")
    assert tap.prompts()[-1].endswith("I feel sad")


async def test_a_released_conversation_of_an_agent_that_loads_sessions_gets_its_own_session_back(tmp_path: Path) -> None:
    log = tmp_path / "quirky.jsonl"
    agent = process_agent("loader", sys.executable, [str(SUPPORT / "acp_tee.py"), str(log), "--", sys.executable, str(SUPPORT / "quirky_agent.py"), "--load"])
    async with BackendClient.spawn(["vscodelm", "--max-conversations", "2"], nofile=NOFILE) as backend:
        with trio.fail_after(GUARD):
            first = await backend.chat([user("hello")], agent=agent, model_id="loader")
            await converse(backend, agent, "loader", 1, 4)
            again = await backend.chat([user("hello"), with_marker(first), user("again")], agent=agent, model_id="loader")
    assert again.completed and again.text() == "echo: again"  # not primed: the agent holds the conversation
    records = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [r["msg"] for r in records if r.get("dir") == "c2a" and "method" in r.get("msg", {})]
    first_session = session_ids(records)[0]
    [load] = [m for m in sent if m["method"] == "session/load"]
    assert load["params"]["sessionId"] == first_session
    prompts = [m["params"]["sessionId"] for m in sent if m["method"] == "session/prompt"]
    assert prompts[0] == prompts[-1] == first_session
    assert not [m for m in sent if m["method"] == "session/close"]  # it does not offer session/close


async def test_with_no_idle_time_every_turn_comes_back_through_the_restart_path(tap: Tap) -> None:
    async with BackendClient.spawn(["vscodelm", "--conversation-idle", "0"]) as backend:
        copilot = Copilot(backend, tap.agent)
        with trio.fail_after(GUARD):
            replies = [await copilot.ask(text) for text in ("Hello", "I feel sad", "My mother hates me")]
            stats = await backend.stats()
    assert [r.text() for r in replies] == ["How do you do. Please state your problem.", "Do you often feel sad?", "Your mother hates you?"]
    assert stats["conversations"] == 0
    sessions = [m["params"]["sessionId"] for m in tap.requests("session/prompt")]
    assert len(set(sessions)) == 3  # a new session each turn, each primed with the turns before
    assert tap.prompts()[2].startswith("Earlier in this conversation:\n\nUser: Hello\n\n")
    # Each released session was closed before the next one opened (the last one may close as the backend exits).
    assert [m["params"]["sessionId"] for m in tap.requests("session/close")][:2] == sessions[:2]
