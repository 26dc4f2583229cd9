"""No orphan agents, however the backend ends: stdin EOF, SIGTERM, or SIGKILL."""

from __future__ import annotations

import signal

import pytest
import trio

from symposium.client import BackendClient, user
from tests.conftest import Tap
from tests.support.proc import process_gone

GUARD = 30


@pytest.mark.parametrize("ending", ["stdin EOF", "SIGTERM", "SIGKILL"])
async def test_the_agent_process_never_outlives_the_backend(tap: Tap, ending: str) -> None:
    async with BackendClient.spawn(["vscodelm"]) as backend:
        with trio.fail_after(GUARD):
            result = await backend.chat([user("Hello")], agent=tap.agent)
            assert result.completed
            [agent_pid] = tap.pids()
            backend_process = backend.process
            assert backend_process is not None
            match ending:
                case "stdin EOF":
                    assert await backend.close() == 0
                case "SIGTERM":
                    backend_process.send_signal(signal.SIGTERM)
                    assert await backend_process.wait() == 0
                case "SIGKILL":
                    backend_process.kill()
                    assert await backend_process.wait() == -signal.SIGKILL
            await process_gone(agent_pid)


async def test_sigterm_answers_every_request_it_read_then_stops_its_agents(tap: Tap) -> None:
    async with BackendClient.spawn(["vscodelm"]) as backend:
        with trio.fail_after(GUARD):
            pending = [backend.start_chat([user(f"count slowly to {100 + n}")], agent=tap.agent) for n in range(8)]
            for chat in pending:
                await chat.first_part.wait()  # read, and streaming
            assert backend.process is not None
            backend.process.send_signal(signal.SIGTERM)
            for chat in pending:
                await chat.done.wait()
            assert await backend.process.wait() == 0
    assert all(chat.error is not None and chat.error.data["kind"] == "shutdown" for chat in pending), [c.error for c in pending]
    assert len(tap.requests("session/cancel")) == len(pending)  # each agent turn was told it ended
    await process_gone(tap.pids()[0])
