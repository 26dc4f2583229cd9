"""Recording cost: the same flood through a backend that records a transcript and one that does not."""

from __future__ import annotations

import itertools
import statistics
import subprocess
import sys
import tempfile
from typing import Any

import trio

from bench.streaming import AGENT_PATH, FLOOD_N, GUARD, _Counter, _through_backend
from symposium.client import BackendClient, process_agent

ROUNDS = 3


async def _measure() -> dict[str, Any]:
    runs = itertools.count(1)
    rates: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as folder:
        async with BackendClient.spawn(stderr=subprocess.DEVNULL) as plain, BackendClient.spawn(
            ["vscodelm", "--trace-dir", folder], stderr=subprocess.DEVNULL
        ) as recording:
            for round in range(ROUNDS):
                for recorded in (True, False) if round % 2 else (False, True):
                    client = recording if recorded else plain
                    agent = process_agent("flood", sys.executable, [AGENT_PATH], env={"BENCH_RUN": f"rec{next(runs)}"})
                    with trio.fail_after(GUARD):
                        await _through_backend(client, agent, f"flood 10 #{next(runs)}", lambda _: None)
                        counter = _Counter(FLOOD_N)
                        await _through_backend(client, agent, f"flood {FLOOD_N} #{next(runs)}", counter.on_text)
                    rates[recorded].append(counter.rate())
    ratios = [r / p for r, p in zip(rates[True], rates[False], strict=False)]
    return {"recording": statistics.median(rates[True]), "plain": statistics.median(rates[False]), "ratio": statistics.median(ratios)}


def measure() -> dict[str, Any]:
    return trio.run(_measure)
