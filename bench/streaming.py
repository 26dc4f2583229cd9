"""Streaming through the backend against reading the same agent directly.

Throughput: the flood agent writes N small `agent_message_chunk`s as fast as it can; we
count them arriving as text at the VS Code side of a spawned backend, and arriving at a
plain ACP reader that spawned the agent itself (the "direct pipe": `bytes.split` framing and
`json.loads` per line, nothing else). Runs alternate between the two, so a busy machine
slows both; the ratio is the median over rounds of each backend run against the direct run
beside it. The CPU each costs per chunk (the backend process's, from /proc, its turn's own
work included; the reader's, this process's) is reported beside it: it moves less with the
machine's load than rates do.

The same again with chunks that name their message (`messageId` on each), the shape Claude Code's
adapter streams in (docs/benchmarks.md, "streaming").

Latency: the agent sends a chunk every few milliseconds stamped with its `time.monotonic()`
(CLOCK_MONOTONIC, shared by every process); receive time minus that stamp, per chunk, through
the backend and directly, both streams at the same time. The added latency is the
difference of the two p99s within a round, the median over rounds: on a shared 2-core
machine one scheduling stall of another process's making (30-100 ms) would otherwise
decide a pooled p99 on its own.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from symposium.client import BackendClient, process_agent, user

AGENT_PATH = str(Path(__file__).with_name("flood_agent.py"))
MODEL = "flood"

FLOOD_N = 20_000
FLOOD_ROUNDS = 5  # each round: one run through the backend, one direct (for each shape of chunk)
PACE_N = 250
PACE_MS = 4  # the direct stream is paced 10% slower, so the two rarely arrive at the same instant
PACE_ROUNDS = 7  # the figure is the median over rounds of each round's p99 difference
GUARD = 60


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


class DirectReader:
    """A plain ACP client of the flood agent: initialize, session/new, session/prompt, count chunks."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self._buffer = b""
        self._ids = iter(range(1, 1 << 30))

    @classmethod
    async def spawn(cls) -> DirectReader:
        process = await trio.lowlevel.open_process(
            [sys.executable, AGENT_PATH], stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
        )
        reader = cls(process)
        await reader.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}, lambda _: None)
        return reader

    async def aclose(self) -> None:
        await self.process.stdin.aclose()  # type: ignore[union-attr]
        with trio.move_on_after(5):
            await self.process.wait()
            return
        self.process.kill()
        await self.process.wait()

    async def request(self, method: str, params: dict[str, Any], on_update: Callable[[dict[str, Any]], None]) -> Any:
        id = next(self._ids)
        line = json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n"
        await self.process.stdin.send_all(line.encode())  # type: ignore[union-attr]
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            *lines, self._buffer = self._buffer.split(b"\n")
            for raw in lines:
                msg = json.loads(raw)
                if msg.get("method") == "session/update":
                    on_update(msg["params"]["update"])
                elif msg.get("id") == id:
                    return msg["result"]
            data = await stdout.receive_some(65536)
            if not data:
                raise RuntimeError("the flood agent exited")
            self._buffer += data

    async def prompt(self, text: str, on_text: Callable[[str], None]) -> None:
        session = (await self.request("session/new", {"cwd": os.getcwd(), "mcpServers": []}, lambda _: None))["sessionId"]

        def on_update(update: dict[str, Any]) -> None:
            if update.get("sessionUpdate") == "agent_message_chunk":
                on_text(update["content"]["text"])

        await self.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]}, on_update)


class _Counter:
    """Counts flood chunks (`;`-terminated) as text arrives, however it was split or merged."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.count = 0
        self.first = 0.0
        self.last = 0.0

    def on_text(self, text: str) -> None:
        now = time.perf_counter()
        if self.count == 0:
            self.first = now
        self.count += text.count(";")
        if self.count >= self.n:
            self.last = now

    def rate(self) -> float:
        assert self.count == self.n, f"received {self.count} chunks of {self.n}"
        return (self.n - 1) / (self.last - self.first)


class _Stamps:
    """Per-chunk latency of a paced run: receive time minus the agent's send stamp."""

    def __init__(self) -> None:
        self.latencies: list[float] = []

    def on_text(self, text: str) -> None:
        now = time.monotonic()
        self.latencies.extend(now - float(stamp) for stamp in text.split(";") if stamp)


async def _through_backend(client: BackendClient, agent: dict[str, Any], text: str, on_text: Callable[[str], None]) -> None:
    def on_part(part: dict[str, Any]) -> None:
        if part.get("type") == "text":
            on_text(part["value"])

    result = await client.chat([user(text)], agent=agent, model_id=MODEL, on_part=on_part)
    if result.error is not None:
        raise RuntimeError(f"backend: {result.error.message}")


def cpu_seconds(pid: int) -> float:
    """User+system CPU time of a process so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def wait_idle(pid: int, limit: float = 8.0) -> None:
    """Until the process has been (nearly) idle for a quarter second: the backend imports
    the MCP SDK in a thread when it first starts an agent, and that thread holds the GIL."""
    with trio.move_on_after(limit):
        try:
            before = cpu_seconds(pid)
            while True:
                await trio.sleep(0.25)
                now = cpu_seconds(pid)
                if now - before < 0.02:
                    return
                before = now
        except OSError:
            await trio.sleep(2.0)


async def _measure() -> dict[str, Any]:
    runs = iter(range(1, 1 << 30))  # every prompt starts a new conversation

    async def fresh_agent() -> dict[str, Any]:
        """A new agent definition (so a new agent process), started by a small prompt.

        One per measured run: the backend's agents die 10 s after they start (see the
        report), and a run must not straddle that.
        """
        agent = process_agent("flood", sys.executable, [AGENT_PATH], env={"BENCH_RUN": str(next(runs))})
        await _through_backend(client, agent, f"flood 10 #{next(runs)}", lambda _: None)
        return agent

    async def floods(shape: str) -> dict[str, Any]:
        """`FLOOD_ROUNDS` pairs of floods (`flood N <shape>`), through the backend and directly, alternating
        which goes first: the rates, their median ratio, and the CPU a chunk cost each reader."""
        assert client.process is not None
        backend_rates: list[float] = []
        direct_rates: list[float] = []
        backend_cpu = direct_cpu = 0.0  # CPU seconds the floods cost the backend / the direct reader
        for round in range(FLOOD_ROUNDS):
            for through_backend in (True, False) if round % 2 == 0 else (False, True):
                counter = _Counter(FLOOD_N)
                text = f"flood {FLOOD_N} {shape} #{next(runs)}"
                with trio.fail_after(GUARD):
                    if through_backend:
                        agent = await fresh_agent()
                        before = cpu_seconds(client.process.pid)
                        await _through_backend(client, agent, text, counter.on_text)
                        backend_cpu += cpu_seconds(client.process.pid) - before
                        backend_rates.append(counter.rate())
                    else:
                        before = time.process_time()
                        await direct.prompt(text, counter.on_text)
                        direct_cpu += time.process_time() - before
                        direct_rates.append(counter.rate())
        ratios = [b / d for b, d in zip(backend_rates, direct_rates, strict=False)]  # each backend run against the direct run beside it
        return {
            "backend_rate": statistics.median(backend_rates),
            "direct_rate": statistics.median(direct_rates),
            "rate_ratio": statistics.median(ratios),
            "backend_rates": backend_rates,
            "direct_rates": direct_rates,
            "backend_cpu_us": backend_cpu / (FLOOD_N * FLOOD_ROUNDS) * 1e6,  # per chunk
            "direct_cpu_us": direct_cpu / (FLOOD_N * FLOOD_ROUNDS) * 1e6,
        }

    backend_latency: list[float] = []
    direct_latency: list[float] = []
    added_p99: list[float] = []  # per round: p99 through the backend minus p99 direct
    async with BackendClient.spawn(stderr=subprocess.DEVNULL) as client:
        assert client.process is not None
        direct = await DirectReader.spawn()
        try:
            with trio.fail_after(GUARD):
                await fresh_agent()  # the backend's first agent: it imports the MCP SDK in a thread
                await direct.prompt(f"flood 2000 #{next(runs)}", lambda _: None)
                await wait_idle(client.process.pid)
            for _ in range(PACE_ROUNDS):
                # Both paced streams at once, so a busy moment of the machine hits both alike. First,
                # while the backend's heap is small: History keeps every part, and a full garbage
                # collection over the floods' 60,000 parts stalls the backend for tens of ms.
                agent = await fresh_agent()
                through, plain = _Stamps(), _Stamps()
                with trio.fail_after(GUARD):
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(_through_backend, client, agent, f"pace {PACE_N} {PACE_MS} #{next(runs)}", through.on_text)
                        nursery.start_soon(direct.prompt, f"pace {PACE_N} {PACE_MS * 1.1:.2f} #{next(runs)}", plain.on_text)
                assert len(through.latencies) == len(plain.latencies) == PACE_N, (len(through.latencies), len(plain.latencies))
                backend_latency += through.latencies
                direct_latency += plain.latencies
                added_p99.append(percentile(through.latencies, 99) - percentile(plain.latencies, 99))
            plain = await floods("")
            named = await floods("ids")
        finally:
            with trio.CancelScope(shield=True):
                await direct.aclose()
    return {
        **plain,
        "named": named,
        "backend_p50_ms": percentile(backend_latency, 50) * 1000,
        "direct_p50_ms": percentile(direct_latency, 50) * 1000,
        "backend_p99_ms": percentile(backend_latency, 99) * 1000,
        "direct_p99_ms": percentile(direct_latency, 99) * 1000,
        "added_p99_ms": statistics.median(added_p99) * 1000,
        "added_p99_rounds_ms": [a * 1000 for a in added_p99],
    }


def measure() -> dict[str, Any]:
    return trio.run(_measure)


if __name__ == "__main__":
    start = time.perf_counter()
    print(measure())
    print(f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
