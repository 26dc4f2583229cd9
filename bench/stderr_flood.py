"""Other conversations while one agent writes stderr endlessly.

Median time of a new one-turn Eliza conversation, quiet and while an agent
(`tests/support/hostile_agent.py stderr_flood 0`) floods its stderr; then the backend's CPU while the
flood alone goes on (the agent's stderr is read at most STDERR_RATE bytes/s, actors/agent/stderr_tail.py).
Redacting every stderr line (only the last 20 are kept) once took 81-93% of a core and
slowed those turns from 5 ms to 470-730 ms.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import trio

from bench.streaming import cpu_seconds, wait_idle
from symposium.client import ELIZA, BackendClient, process_agent, user

TURNS = 40
SETTLE = 1.0  # seconds for the flooder to start and spend its burst (STDERR_BURST)
CPU_WINDOW = 2.0  # seconds the backend's CPU is measured over, with only the flood going on
GUARD = 120
HOSTILE = str(Path(__file__).resolve().parent.parent / "tests" / "support" / "hostile_agent.py")


async def _turns(backend: BackendClient, tag: str) -> list[float]:
    times = []
    for n in range(TURNS):
        start = time.perf_counter()
        result = await backend.chat([user(f"I feel {tag} number {n}")], agent=ELIZA)
        times.append(time.perf_counter() - start)
        if result.error is not None:
            raise RuntimeError(f"backend: {result.error.message}")
    return times


async def _measure() -> dict[str, Any]:
    async with BackendClient.spawn(stderr=subprocess.DEVNULL) as backend:
        assert backend.process is not None
        pid = backend.process.pid
        with trio.fail_after(GUARD):
            await _turns(backend, "warm")
            # The first external agent has the backend import the MCP SDK in a thread: not the flood's cost.
            await backend.chat([user("echo warm")], agent=process_agent("warm", sys.executable, [HOSTILE]))
            await wait_idle(pid)
            quiet = await _turns(backend, "quiet")
            flood = backend.start_chat([user("stderr_flood 0")], agent=process_agent("flooder", sys.executable, [HOSTILE]))
            await trio.sleep(SETTLE)  # the flooder starting and writing its burst
            cpu_before, wall_before = cpu_seconds(pid), time.perf_counter()
            await trio.sleep(CPU_WINDOW)  # nothing but the flood meanwhile
            cpu = (cpu_seconds(pid) - cpu_before) / (time.perf_counter() - wall_before)
            flooded = await _turns(backend, "flooded")
            if flood.done.is_set():
                raise RuntimeError(f"the flooder stopped early: {flood.error}")
    return {"quiet_ms": statistics.median(quiet) * 1000, "flooded_ms": statistics.median(flooded) * 1000, "cpu": cpu}


def measure() -> dict[str, Any]:
    return trio.run(_measure)


if __name__ == "__main__":
    print(measure())
