"""Bounded memory and real backpressure, over the real wire (docs/DESIGN.md, "Reliability").

A real `symposium vscodelm` subprocess and `tests/support/hostile_agent.py` flooding it: what the agent
writes reaches VS Code whole, in parts of a bounded size, without the backend holding a backlog
when VS Code reads slowly; what it writes about a prompt that ended is dropped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from actors.shared.flow import PART_MAX
from actors.shared.peer import Peer
from symposium.client import BackendClient, process_agent, user
from tests.support.hostile_agent import flood_text
from tests.support.proc import peak_rss_mb

HOSTILE = process_agent("hostile", sys.executable, [str(Path(__file__).parents[1] / "support" / "hostile_agent.py")])
GUARD = 120  # a hang guard, not a timing budget



class SlowStream(trio.abc.ReceiveStream):
    """The backend's stdout read as a slow VS Code would: a little at a time, with a pause
    between reads (pacing the reader, not waiting for anything), and every line seen."""

    def __init__(self, inner: trio.abc.ReceiveStream, step: int, pause: float) -> None:
        self.inner, self.step, self.pause = inner, step, pause
        self.longest = 0  # the longest line read
        self._line = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.sleep(self.pause)
        data = await self.inner.receive_some(self.step)
        *ended, rest = data.split(b"\n")
        for piece in ended:
            self.longest = max(self.longest, self._line + len(piece))
            self._line = 0
        self._line += len(rest)
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def slow_backend(step: int, pause: float) -> AsyncIterator[tuple[BackendClient, SlowStream]]:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "symposium", "vscodelm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
    )
    assert process.stdin is not None and process.stdout is not None
    slow = SlowStream(process.stdout, step, pause)
    async with trio.open_nursery() as nursery:
        peer = Peer(trio.StapledStream(process.stdin, slow), name="backend")
        nursery.start_soon(peer.serve)
        client = BackendClient(peer, process, nursery)
        try:
            yield client, slow
        finally:
            with trio.CancelScope(shield=True):
                await client.close()
            nursery.cancel_scope.cancel()


async def test_a_slow_reader_holds_the_agent_back_instead_of_the_backend_buffering() -> None:
    size = 96 * 1024 * 1024
    async with slow_backend(step=32 * 1024, pause=0.001) as (client, slow):
        assert client.process is not None
        with trio.fail_after(GUARD):
            warm = await client.chat([user("echo warm")], agent=HOSTILE)
            assert warm.text() == "echo: warm"
            before = peak_rss_mb(client.process.pid)
            result = await client.chat([user(f"flood {size}")], agent=HOSTILE)
        grown = peak_rss_mb(client.process.pid) - before
    assert result.error is None and result.completed
    assert result.text() == "".join(flood_text(size))  # nothing lost, nothing reordered
    # Unbounded queues hold most of the stream: well over 100 MB for these 96 MiB. Bounded:
    # a few windows' worth, the reply's first 16 MiB kept for matching (conversations.REPLY_KEPT),
    # and about 33 MB for the MCP SDK, imported meanwhile since the agent started.
    assert grown < 80, f"peak RSS grew {grown:.0f} MB while a slow reader read {size >> 20} MiB"
    assert slow.longest < 2 * PART_MAX


async def test_one_huge_chunk_goes_out_as_parts_of_a_bounded_size(backend: BackendClient) -> None:
    size = 8 * 1024 * 1024
    with trio.fail_after(GUARD):
        result = await backend.chat([user(f"huge {size}")], agent=HOSTILE)
    assert result.error is None and result.completed
    texts = [p["value"] for p in result.parts if p["type"] == "text"]
    assert "".join(texts) == "h" * size
    assert max(map(len, texts)) <= PART_MAX  # one 8 MiB part is what the extension chokes on


async def test_what_an_agent_says_after_its_turn_is_dropped_not_carried_into_the_next(backend: BackendClient, tmp_path: Path) -> None:
    fifo = tmp_path / "done"
    os.mkfifo(fifo)
    size = 48 * 1024 * 1024
    assert backend.process is not None
    with trio.fail_after(GUARD):
        history = [user("echo warm")]
        warm = await backend.chat(history, agent=HOSTILE)
        before = peak_rss_mb(backend.process.pid)
        history += [warm.assistant_message(), user(f"after {size} {fifo}")]
        first = await backend.chat(history, agent=HOSTILE)
        assert first.text() == "before"
        # The agent says "done" once the backend has read the whole flood that followed.
        assert (await trio.to_thread.run_sync(fifo.read_text)).strip() == "done"
        grown = peak_rss_mb(backend.process.pid) - before
        history += [first.assistant_message(), user("echo next")]
        second = await backend.chat(history, agent=HOSTILE)
    assert second.error is None
    assert second.text() == "echo: next"  # not 48 MiB of what came after the first turn
    assert grown < 64, f"peak RSS grew {grown:.0f} MB for output nobody asked for"  # the MCP SDK's 33 MB included
