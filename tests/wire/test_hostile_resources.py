"""No agent can starve another or the backend, over the
real wire: a real `symposium vscodelm`, hostile agents from `tests/support/hostile_agent.py`, the real MCP SDK.

Each test has one agent attack a shared resource (descriptors, the event loop, the session
store) and checks that another conversation is still served, by an agent that was not running
yet, so that serving it needs what the attacker would have taken.
"""

from __future__ import annotations

import errno
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from actors.agent.pool import AgentPool
from actors.agent.stderr_tail import STDERR_LINES, StderrTail
from actors.bridge.tool_bridge import MAX_CONNECTIONS
from protocol.shared.failures import AgentError
from protocol.shared.redact import Redactor
from protocol.vscode.lm import ElizaAgent
from symposium import launch
from symposium.client import ELIZA, BackendClient, process_agent, tool_result, user

GUARD = 120
HOSTILE = (Path(__file__).parents[1] / "support" / "hostile_agent.py")


def hostile(name: str, *flags: str) -> dict[str, Any]:
    """A hostile agent; a different name is a different definition, hence its own process."""
    return process_agent(name, sys.executable, [str(HOSTILE), *flags, f"--name={name}"])


async def test_an_agent_opening_connections_with_its_own_token_cannot_exhaust_the_backends_descriptors() -> None:
    # Under this limit (the agent's too: it inherits it) the backend ran out of descriptors after
    # about 40 of the agent's connections, the next agent could not start, and Eliza's first
    # chat ended the process ("too many open files" from a lazy import).
    async with BackendClient.spawn(nofile=128, stderr=subprocess.DEVNULL) as backend:
        with trio.fail_after(GUARD):
            flood = await backend.chat([user("connect_flood 2000")], agent=hostile("flooder"))
            other = await backend.chat([user("hello")], agent=hostile("bystander"))
            eliza = await backend.chat([user("Hello")], agent=ELIZA)
            again = await backend.chat([user("connect_flood 2000")], agent=hostile("flooder"))
    assert flood.error is None, flood.error
    served, closed = (int(n) for n in flood.text().split()[1::2])
    assert served == MAX_CONNECTIONS and closed > 0, flood.text()
    assert other.completed and other.text() == "echo: hello", other.error
    assert eliza.completed and eliza.text() == "How do you do. Please state your problem.", eliza.error
    # A second conversation with the same agent has a token (and a bound) of its own.
    assert again.error is None and again.text().startswith(f"served {MAX_CONNECTIONS} "), again.text()


async def test_running_out_of_descriptors_while_starting_an_agent_fails_that_start_not_the_backend(tmp_path: Path) -> None:
    # The connector as it failed under exhaustion: the lazy import of Eliza (or a pipe) raising
    # EMFILE. It ended the process; now it is that start's -32000, and the pool starts the next.
    attempts = 0

    async def exhausted_once(agent: Any, cwd: str, nursery: trio.Nursery) -> Any:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise OSError(errno.EMFILE, "Too many open files")
        return await launch.connect(agent, cwd, nursery)

    async with trio.open_nursery() as nursery:
        pool = AgentPool(nursery, cwd=str(tmp_path), connector=exhausted_once)
        with pytest.raises(AgentError) as caught:
            await pool.start(ElizaAgent(), None)
        assert caught.value.error.kind == "resource_exhausted"
        assert "too many open files" in caught.value.error.message
        assert (await pool.start(ElizaAgent(), None)).usable
        await trio.testing.wait_all_tasks_blocked()  # the pool's idle watch is asleep
        await pool.shutdown()
        await trio.testing.wait_all_tasks_blocked()
        assert not nursery.child_tasks, "the pool's work ends with its shutdown (its idle watch too)"


def test_a_stderr_tail_redacts_only_the_lines_it_keeps() -> None:
    secret = "hunter2-hunter2-hunter2"
    redactor = Redactor([secret])
    calls = 0

    def redact(text: str) -> str:
        nonlocal calls
        calls += 1
        return redactor.free_text(text)

    tail = StderrTail()
    line = f"working... api_key={secret}\n".encode()
    for _ in range(100):
        tail.feed(line * 999 + b"\n   \n" + line[:10])  # lines cut across reads, blank lines between
    tail.feed(b"\n")
    tail.feed(b"last words " + secret.encode())
    tail.end()
    lines = tail.lines(redact)
    assert calls == STDERR_LINES
    assert len(lines) == STDERR_LINES and lines[-1] == "last words <redacted>"
    assert lines[-3:-1] == ["working... api_key=<redacted>", "working..."]  # the blank lines are not kept
    assert not any(secret in line for line in lines)


async def test_an_agent_flooding_stderr_fails_its_own_turn_with_a_redacted_tail_while_another_chat_goes_on() -> None:
    secret = "s3cr3t-value-of-the-flooder"
    flooder = process_agent("flooder", sys.executable, [str(HOSTILE)], env={"HOSTILE_SECRET": secret})
    async with BackendClient.spawn(stderr=subprocess.DEVNULL) as backend:
        with trio.fail_after(GUARD):
            flood = backend.start_chat([user("stderr_flood 100000")], agent=flooder)
            others = [await backend.chat([user(f"hello {n}")], agent=hostile("bystander")) for n in range(3)]
            eliza = await backend.chat([user("Hello")], agent=ELIZA)
            await flood.done.wait()
    assert [o.text() for o in others] == [f"echo: hello {n}" for n in range(3)]
    assert eliza.text() == "How do you do. Please state your problem."
    assert flood.error is not None
    stderr = flood.error.data["stderr"]
    assert len(stderr) == STDERR_LINES and stderr[-1] == "wrote 100000 lines; giving up <redacted>"
    assert secret not in json.dumps(flood.error.data)


async def test_a_large_tool_result_reaches_the_agent_and_comes_back_whole() -> None:
    # 24 MiB, one JSON line on every hop: it crosses the bridge, the relay and Eliza's MCP client
    # in many reads (each of which once copied the rest of the line), and comes back to us
    # over the in-memory ACP stream she speaks on.
    text = "".join(f"{n:07d}\n" for n in range(3 << 20))
    tool = {"name": "t", "description": "A tool that answers at length", "inputSchema": {"type": "object"}}
    async with BackendClient.spawn(stderr=subprocess.DEVNULL) as backend:
        with trio.fail_after(GUARD):
            history = [user("use tools vscode_tools::t with {}")]
            call = await backend.chat(history, agent=ELIZA, tools=[tool])
            [called] = call.tool_calls()
            history += [call.assistant_message(), tool_result(called["toolCallId"], text)]
            answer = await backend.chat(history, agent=ELIZA, tools=[tool])
    assert answer.error is None, answer.error
    assert answer.text() == f"t: OK: {text}"


# SQLite's default busy wait is 5 s per statement: on the event loop, the saves of these new
# conversations stalled the whole backend for a minute under the lock. Off it, each costs
# at most BUSY_TIMEOUT on a thread of its own, and none of the conversations waits for it.
LOCKED_CONVERSATIONS = 12
LOCKED_GUARD = 30


async def test_a_session_store_locked_by_another_connection_stalls_no_conversation(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with BackendClient.spawn(env={"SYMPOSIUM_STATE_DIR": str(state)}, stderr=subprocess.DEVNULL) as backend:
        with trio.fail_after(GUARD):
            before = await backend.chat([user("Hello")], agent=ELIZA)
        holder = sqlite3.connect(state / "sessions.sqlite3", isolation_level=None)
        holder.execute("begin exclusive")  # what another process's long write holds
        answered: list[str] = []
        try:
            with trio.fail_after(LOCKED_GUARD):
                async with trio.open_nursery() as nursery:
                    for n in range(LOCKED_CONVERSATIONS):
                        nursery.start_soon(_answered, backend, f"I am conversation number {n}", answered)
        finally:
            holder.execute("rollback")
            holder.close()
        with trio.fail_after(GUARD):
            after = await backend.chat([user("I need a new conversation")], agent=ELIZA)
    assert before.error is None and after.error is None
    assert len(answered) == LOCKED_CONVERSATIONS
    # What was saved while the file was locked may be lost (a save waits BUSY_TIMEOUT), nothing
    # else: the store works again, and the last save landed before the backend ended.
    with sqlite3.connect(state / "sessions.sqlite3") as db:
        (stored,) = db.execute("select count(*) from sessions").fetchone()
    assert 2 <= stored <= LOCKED_CONVERSATIONS + 2


async def _answered(backend: BackendClient, text: str, answered: list[str]) -> None:
    result = await backend.chat([user(text)], agent=ELIZA)
    assert result.error is None, result.error
    answered.append(result.text())
