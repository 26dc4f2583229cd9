"""Every request answered in bounded time, no two chats on one agent session, and everything an
agent starts ends with it: the hostile agent (`tests/support/hostile_agent.py`) over the real wire.

See docs/DESIGN.md, "Reliability". Deadlines are set small here with `--agent-timeout`; waits
on the agent being stuck use a FIFO it writes to, and waits on a process's end use a pidfd.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.shared.jsonrpc import REQUEST_CANCELLED, SERVER_ERROR, RpcError
from protocol.vscode.lm import METHOD_CHAT
from symposium.client import ELIZA, BackendClient, process_agent, user
from tests.support.proc import process_gone

GUARD = 30
HOSTILE = (Path(__file__).parents[1] / "support" / "hostile_agent.py")


def hostile(*flags: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    return process_agent("hostile", sys.executable, [str(HOSTILE), *flags], env=env)


def continuing(token: str) -> list[dict[str, Any]]:
    """The opening exchange of a chat opened by "Continue an Agent Session" (extension/src/continue.ts)."""
    return [user("Continue the session “earlier”"), {"role": "assistant", "content": [{"type": "text", "value": f"Continuing it here.\n\n`{token}`"}]}]


async def stuck_at(note: Path) -> tuple[str, int]:
    """The request the hostile agent left unanswered, once it has (it writes to the FIFO `note`),
    and the agent's pid."""
    line = await trio.to_thread.run_sync(lambda: note.open().readline(), abandon_on_cancel=True)
    method, pid = line.split()
    return method, int(pid)


async def holding(backend: BackendClient, conversations: int, bridges: int) -> dict[str, int]:
    """The backend's counts once it holds that many conversations and bridges (or as they are
    after a bounded number of round trips, each of which lets the backend run; no sleeping)."""
    for _ in range(200):
        stats = await backend.stats()
        if (stats["conversations"], stats["bridges"]) == (conversations, bridges):
            break
    return stats


async def released(backend: BackendClient) -> dict[str, int]:
    """The backend's counts once it holds no conversation and no bridge."""
    return await holding(backend, 0, 0)


# 1. Deadlines --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "step, flags",
    [("session/new", ["silent-new"]), ("session/load", ["sessions", "silent-load"]), ("session/set_config_option", ["options", "silent-config"])],
)
async def test_a_turn_whose_agent_never_answers_a_step_fails_naming_the_agent_and_the_step(tmp_path: Path, step: str, flags: list[str]) -> None:
    agent = hostile(*flags)
    async with BackendClient.spawn(["vscodelm", "--agent-timeout", "0.5"]) as backend:
        with trio.fail_after(GUARD):
            messages = [user("Hello")]
            if step == "session/load":
                [listed] = (await backend.list_sessions(agent, cwd=str(tmp_path)))["sessions"]
                messages = [*continuing(listed["token"]), user("Hello")]
            options = {"model": "fast"} if step == "session/set_config_option" else None
            result = await backend.chat(messages, agent=agent, cwd=str(tmp_path), agent_options=options)
            assert (await released(backend))["conversations"] == 0
    assert result.error is not None and not result.completed
    assert result.error.code == SERVER_ERROR
    assert result.error.data["kind"] == "agent_timeout" and result.error.data["step"] == step
    assert "'hostile'" in result.error.message and step in result.error.message


async def test_listing_the_sessions_of_an_agent_that_never_answers_fails_in_bounded_time(tmp_path: Path) -> None:
    async with BackendClient.spawn(["vscodelm", "--agent-timeout", "0.5"]) as backend:
        with trio.fail_after(GUARD), pytest.raises(RpcError) as caught:
            await backend.list_sessions(hostile("sessions", "silent-list"), cwd=str(tmp_path))
    assert caught.value.code == SERVER_ERROR
    assert "'hostile'" in caught.value.message and "session/list" in caught.value.message


async def test_an_agent_refusing_to_list_its_sessions_fails_the_listing_with_a_named_kind(tmp_path: Path) -> None:
    async with BackendClient.spawn(["vscodelm"]) as backend:
        with trio.fail_after(GUARD), pytest.raises(RpcError) as caught:
            await backend.list_sessions(hostile("sessions", "refuse-list"), cwd=str(tmp_path))
    assert caught.value.code == SERVER_ERROR
    assert caught.value.message == "hostile could not list its sessions: session/list is broken today"
    assert caught.value.data == {"kind": "list_failed", "agent": "hostile"}


@pytest.mark.parametrize("step, flag, bridges", [("initialize", "silent-initialize", 0), ("session/new", "silent-new", 1)])
async def test_cancelling_a_turn_stuck_opening_its_session_releases_its_conversation_and_bridge(tmp_path: Path, step: str, flag: str, bridges: int) -> None:
    note = tmp_path / "note"
    os.mkfifo(note)
    agent = hostile(flag, env={"HOSTILE_NOTE": str(note)})
    async with BackendClient.spawn(["vscodelm"]) as backend:  # the default deadlines: a minute and more
        with trio.fail_after(GUARD):
            chat = backend.start_chat([user("Hello")], agent=agent, cwd=str(tmp_path))
            stuck, pid = await stuck_at(note)
            assert stuck == step
            held = await backend.stats()
            assert (held["conversations"], held["bridges"]) == (1, bridges)  # the bridge opens once the agent runs
            await backend.cancel(chat.request_id)
            await chat.done.wait()
            assert chat.error is not None and chat.error.code == REQUEST_CANCELLED
            stats = await released(backend)
            assert (stats["conversations"], stats["bridges"]) == (0, 0), stats
            # The agent goes on (a start is the pool's, bounded by its own deadline, not the chat's):
            # the next chat waits for the same process, and opens its own session.
            os.kill(pid, 0)
            again = backend.start_chat([user("Hello again")], agent=agent, cwd=str(tmp_path))
            if step == "session/new":
                assert await stuck_at(note) == (step, pid)
            assert (await holding(backend, 1, bridges))["conversations"] == 1  # the request is in, waiting
            await backend.cancel(again.request_id)
            await again.done.wait()
            assert again.error is not None and again.error.code == REQUEST_CANCELLED
            assert (await released(backend))["conversations"] == 0
            os.kill(pid, 0)


# 2. An agent's death is its process's exit ------------------------------------------------------


async def test_an_agent_that_dies_while_its_child_holds_its_output_fails_the_turn_and_is_replaced(tmp_path: Path) -> None:
    agent = hostile()
    async with BackendClient.spawn(["vscodelm"]) as backend:
        with trio.fail_after(GUARD):
            died = await backend.chat([user("die")], agent=agent, cwd=str(tmp_path))
            assert died.error is not None and died.error.data["kind"] == "agent_exited", died.error
            assert "exit code 3" in died.error.message
            again = await backend.chat([user("hello again")], agent=agent, cwd=str(tmp_path))
    assert again.completed and "echo: hello again" in again.text()


# 3. A request read before the end of input is answered; the backend exits ---------------------------


async def test_a_chat_request_followed_at_once_by_the_end_of_input_is_answered_and_the_backend_exits() -> None:
    params = {"modelId": "symposium-eliza", "messages": [user("Hello")], "agent": ELIZA, "options": {"tools": [], "toolMode": "auto"}}
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "method": METHOD_CHAT, "params": params}).encode() + b"\n"
    for attempt in range(6):  # a race: one fresh backend lost it about half the time
        with trio.fail_after(GUARD):
            done = await trio.run_process([sys.executable, "-m", "symposium", "vscodelm"], stdin=line, capture_stdout=True, capture_stderr=True, check=False)
        answers = [m for m in map(json.loads, done.stdout.splitlines()) if m.get("id") == 7]
        assert len(answers) == 1, (attempt, done.stdout, done.stderr[-2000:])
        assert done.returncode == 0, (attempt, done.stderr[-2000:])


# 4. Two chats never share an agent session ---------------------------------------------------------


async def test_two_chats_continued_from_one_agent_session_never_get_each_others_replies(tmp_path: Path) -> None:
    agent = hostile("sessions")
    async with BackendClient.spawn(["vscodelm"]) as backend:
        with trio.fail_after(GUARD):
            [listed] = (await backend.list_sessions(agent, cwd=str(tmp_path)))["sessions"]
            opening = continuing(listed["token"])
            first = await backend.chat([*opening, user("I am A")], agent=agent, cwd=str(tmp_path))
            assert first.completed and "echo: I am A" in first.text()
            # The same session continued in a second chat (or the first question edited).
            second = await backend.chat([*opening, user("I am B")], agent=agent, cwd=str(tmp_path))
            # The first chat goes on, answered with its own replies.
            again = await backend.chat([*opening, user("I am A"), first.assistant_message(), user("A again")], agent=agent, cwd=str(tmp_path))
    assert again.completed and "echo: A again" in again.text(), again.error
    assert "I am A" not in second.text() and "A again" not in second.text()
    assert second.error is not None and second.error.data["kind"] == "session_in_use", second.error
    assert "another chat" in second.error.message


# 5. Everything an agent starts ends with it ------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux's (docs/DESIGN.md, Reliability)")
@pytest.mark.parametrize("ending", ["stdin EOF", "SIGKILL", "stdin EOF, agent ignores SIGTERM"])
async def test_a_descendant_that_left_the_process_group_ends_with_the_backend(tmp_path: Path, ending: str) -> None:
    pid_file = tmp_path / "pid"
    pid = None
    agent = hostile("stubborn") if "SIGTERM" in ending else hostile()
    try:
        async with BackendClient.spawn(["vscodelm"]) as backend:
            with trio.fail_after(GUARD):
                result = await backend.chat([user(f"orphan {pid_file}")], agent=agent, cwd=str(tmp_path))
                assert result.completed, result.error
                pid = int(pid_file.read_text())
                os.kill(pid, 0)  # running, in a session of its own
                assert os.getpgid(pid) == pid
                assert backend.process is not None
                if ending == "SIGKILL":
                    backend.process.kill()
                    assert await backend.process.wait() == -signal.SIGKILL
                else:
                    assert await backend.close() == 0
                await process_gone(pid)
    finally:
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # the test failed: leave nothing behind
