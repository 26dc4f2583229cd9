"""Soak: 32 conversations at once for a while, with cancels and agent kills; nothing may grow.

A real `symposium vscodelm` (with `--max-conversations 16`, so conversations are released
under pressure all the time) and Eliza as an external agent (`symposium eliza`). 32 workers
each hold conversations of a few turns, every turn one of: plain talk, a slow count the
user stops (lm/cancel), a permission approved through `symposium-agent-action`, a VS Code
tool bridged to the agent (a real relay connecting to the bridge listener). Meanwhile the
agent process is killed (SIGKILL) every KILL_EVERY seconds; requests it was answering
fail, the next ones start a new agent.

Every request must be answered (cancelled ones -32800, those the kill interrupted -32000,
nothing else fails). Descriptors, RSS and trio tasks are taken at two quiet points: after a
warm-up round of the same workload, and after the soak. At each, the workers have stopped,
the backend has just answered `limit` fresh conversations (so it holds the same number
both times) and is idle.

Then the flood: `bench/flood_agent.py` streams FLOOD_MIB MiB as fast as it can to a VS Code
side that reads slowly (READ_STEP bytes per READ_PAUSE), in the same backend. Everything must
arrive (a digest of the text against what the agent wrote), and the backend's peak RSS
(VmHWM, over the whole run, soak included) must stay under 150 MB: between the agent and a
slow reader nothing buffers more than a window (docs/DESIGN.md, "Reliability").
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from actors.shared.peer import Peer
from bench.flood_agent import bulk_chunks
from bench.streaming import AGENT_PATH, wait_idle
from protocol.vscode.lm import AGENT_ACTION_APPROVED, AGENT_ACTION_TOOL
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, ChatResult, process_agent, tool_result, user
from tests.support.proc import open_fds, peak_rss_mb, rss_mb

WORKERS = 32
LIMIT = 16
SOAK_SECONDS = float(os.environ.get("SOAK_SECONDS", 90))
WARMUP_SECONDS = 15.0
KILL_EVERY = 10.0
REQUEST_GUARD = 60.0
AGENT = process_agent("eliza", sys.executable, ["-m", "symposium", "eliza", "--deterministic"])
READ = {"name": "read_notes", "description": "Read a file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
FLOOD_MIB = int(os.environ.get("SOAK_FLOOD_MIB", 400))
READ_STEP = 32 * 1024  # the slow reader: this many bytes per READ_PAUSE seconds, at most
READ_PAUSE = 0.002
FLOODER = process_agent("flood", sys.executable, [AGENT_PATH])
TALK = ["Hello", "I feel sad", "My mother hates me", "I remember my dog", "I am not sure", "Perhaps you are right"]


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc)."""
    found, stack = [], [pid]
    while stack:
        parent = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{parent}/task/{tid}/children") as children:
                    kids = [int(c) for c in children.read().split()]
            except FileNotFoundError:
                continue
            found += kids
            stack += kids
    return found


def _eliza_pids(backend: int) -> list[int]:
    pids = []
    for pid in descendants(backend):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
        except FileNotFoundError:
            continue
        if b"eliza" in argv and b"symposium" in argv and not any(a.endswith(b"guard.py") for a in argv):
            pids.append(pid)
    return pids


class _Load:
    """The workload and its tally."""

    def __init__(self, client: BackendClient, seed: int) -> None:
        self.client = client
        self.random = random.Random(seed)
        self.outcomes: Counter[str] = Counter()
        self.kills = 0

    async def _request(self, history: list[dict[str, Any]], tools: list[dict[str, Any]], *, cancel: bool = False) -> ChatResult | None:
        """One request; None if it did not end as expected (tallied either way)."""
        with trio.move_on_after(REQUEST_GUARD):
            result = self.client.start_chat(history, agent=AGENT, model_id="eliza", tools=tools)
            if cancel:
                with trio.move_on_after(REQUEST_GUARD / 2):
                    await result.first_part.wait()
                await self.client.cancel(result.request_id)
            await result.done.wait()
            if result.error is None and result.completed:
                self.outcomes["answered"] += 1
                return result
            if result.error is not None and result.error.code == -32800 and cancel:
                self.outcomes["cancelled"] += 1
            elif result.error is not None and result.error.code == -32000 and (result.error.data or {}).get("kind") == "agent_exited":
                self.outcomes["agent killed"] += 1
            else:
                self.outcomes[f"unexpected: {result.error.message if result.error else 'no end'}"] += 1
            return None
        self.outcomes["unanswered"] += 1
        return None

    async def conversation(self) -> None:
        """A few turns of one conversation, each a random kind; it ends early on a failure."""
        history: list[dict[str, Any]] = []
        for _ in range(self.random.randint(1, 5)):
            kind = self.random.choice(["talk", "talk", "cancel", "permission", "tool"])
            tools: list[dict[str, Any]] = []
            if kind == "talk":
                history.append(user(self.random.choice(TALK)))
            elif kind == "cancel":
                history.append(user(f"count slowly to {self.random.randint(8, 40)}"))
            elif kind == "permission":
                history.append(user(f"run ls {self.random.randint(1, 99)}"))
                tools = [AGENT_ACTION_TOOL_DEF]
            else:
                history.append(user('use tool vscode_tools::read_notes with {"path": "a.txt"}'))
                tools = [READ]
            result = await self._request(history, tools, cancel=kind == "cancel")
            if result is None:
                return
            history.append(_assistant(result))
            calls = result.tool_calls()
            if calls:
                for call in calls:
                    answer = AGENT_ACTION_APPROVED if call["toolName"] == AGENT_ACTION_TOOL else "file contents"
                    history.append(tool_result(call["toolCallId"], answer))
                result = await self._request(history, tools)
                if result is None:
                    return
                history.append(_assistant(result))

    async def worker(self, deadline: float) -> None:
        while trio.current_time() < deadline:
            await self.conversation()

    async def killer(self, deadline: float) -> None:
        assert self.client.process is not None
        while trio.current_time() + KILL_EVERY < deadline:
            await trio.sleep(KILL_EVERY)  # pacing the load, not waiting for anything
            for pid in _eliza_pids(self.client.process.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                    self.kills += 1
                except ProcessLookupError:
                    pass

    async def run(self, seconds: float) -> None:
        deadline = trio.current_time() + seconds
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.killer, deadline)
            for _ in range(WORKERS):
                nursery.start_soon(self.worker, deadline)
            # The killer's last sleep may outlast the workers; the workers decide the end.
            await _only_killer_left(nursery)
            nursery.cancel_scope.cancel()


async def _only_killer_left(nursery: trio.Nursery) -> None:
    while len(nursery.child_tasks) > 1:
        await trio.sleep(0.1)  # polling the load generator's own tasks, not the backend


def _assistant(result: ChatResult) -> dict[str, Any]:
    content = [p for p in result.parts if p["type"] == "marker"]
    if text := result.text():
        content.append({"type": "text", "value": text})
    return {"role": "assistant", "content": content + result.tool_calls()}


async def _quiet_point(load: _Load) -> dict[str, Any]:
    """Answer `LIMIT` fresh conversations (so the backend holds exactly those), then measure it
    once it is idle and its task count has settled (sessions released a moment ago end)."""
    client = load.client
    assert client.process is not None
    pid = client.process.pid
    for n in range(LIMIT):
        await load._request([user(f"I remember quiet point {n}")], [])
    stats: dict[str, int] = {}
    for _ in range(10):
        await wait_idle(pid)
        previous, stats = stats, await client.stats()
        if stats == previous:
            break
    return {"fds": open_fds(pid), "rss_mb": rss_mb(pid), "processes": len(descendants(pid)), **stats}



class PacedStream(trio.abc.ReceiveStream):
    """The backend's stdout as VS Code reads it: at full speed, or (while `pause` is set) slowly,
    READ_STEP bytes at a time with `pause` seconds between reads (pacing the reader, not
    waiting for anything)."""

    def __init__(self, inner: trio.abc.ReceiveStream) -> None:
        self.inner = inner
        self.pause = 0.0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self.pause:
            await trio.sleep(self.pause)
            return await self.inner.receive_some(READ_STEP)
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _flood(client: BackendClient, stdout: PacedStream) -> dict[str, Any]:
    """FLOOD_MIB MiB from the flood agent to a slow reader: did all of it arrive, in order?"""
    size = FLOOD_MIB * 1024 * 1024
    digest, received = hashlib.blake2b(), 0
    holder: list[ChatResult] = []

    def on_part(part: dict[str, Any]) -> None:
        nonlocal received
        if part["type"] == "text":
            digest.update(part["value"].encode())
            received += len(part["value"])
        holder[0].parts.clear()  # the bench holds nothing either

    stdout.pause = READ_PAUSE
    started = trio.current_time()
    result = client.start_chat([user(f"bulk {size}")], agent=FLOODER, model_id="flood", on_part=on_part)
    holder.append(result)
    await result.done.wait()
    seconds = trio.current_time() - started
    stdout.pause = 0.0
    expected = hashlib.blake2b()
    for chunk in bulk_chunks(size):
        expected.update(chunk.encode())
    whole = result.error is None and result.completed and received == size and digest.digest() == expected.digest()
    return {"mib": FLOOD_MIB, "seconds": seconds, "whole": whole, "error": result.error.message if result.error else None}


@asynccontextmanager
async def _spawn(args: list[str], env: dict[str, str]) -> AsyncIterator[tuple[BackendClient, PacedStream]]:
    """`BackendClient.spawn`, with a stdout the soak can read slowly."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "symposium", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
        start_new_session=True,
    )
    assert process.stdin is not None and process.stdout is not None
    stdout = PacedStream(process.stdout)
    async with trio.open_nursery() as nursery:
        peer = Peer(trio.StapledStream(process.stdin, stdout), name="backend")
        nursery.start_soon(peer.serve)
        client = BackendClient(peer, process, nursery)
        try:
            yield client, stdout
        finally:
            with trio.CancelScope(shield=True):
                await client.close()
            nursery.cancel_scope.cancel()


async def _measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="symposium-bench-") as state:
        return await _measure_in(state)


async def _measure_in(state: str) -> dict[str, Any]:
    args = ["vscodelm", "--max-conversations", str(LIMIT)]
    async with _spawn(args, env={"SYMPOSIUM_STATE_DIR": state}) as (client, stdout):
        assert client.process is not None
        load = _Load(client, seed=13)
        await load.run(WARMUP_SECONDS)
        before = await _quiet_point(load)
        warm = dict(load.outcomes)
        await load.run(SOAK_SECONDS)
        after = await _quiet_point(load)
        soak_peak = peak_rss_mb(client.process.pid)
        flood = await _flood(client, stdout)
        flood["peak_rss_mb"] = peak_rss_mb(client.process.pid)
        flood["soak_peak_rss_mb"] = soak_peak
    outcomes = Counter(load.outcomes)
    outcomes.subtract(warm)
    return {"seconds": SOAK_SECONDS, "before": before, "after": after, "outcomes": dict(outcomes), "kills": load.kills, "flood": flood}


def measure() -> dict[str, Any]:
    return trio.run(_measure)


if __name__ == "__main__":
    print(json.dumps(measure(), indent=1))
