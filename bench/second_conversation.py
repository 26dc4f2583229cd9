"""Time to first part: a second conversation with an agent that is already running, against the first.

The first conversation with an agent definition spawns the agent and initializes it; a
second one (same agent definition, a different first message) costs only a `session/new`
on the same connection (one AgentProcess per agent definition, multiplexing its sessions). The agent is Eliza as an external process
(`python -m symposium eliza --deterministic`); each sample uses a new agent definition
(an extra environment variable), so its first conversation really starts a process.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Any

import trio

from bench.streaming import wait_idle
from symposium.client import BackendClient, process_agent, user

SAMPLES = 7
GUARD = 60
FIRST, SECOND = "Hello", "I feel sad"


def _agent(run: int) -> dict[str, Any]:
    return process_agent("eliza", sys.executable, ["-m", "symposium", "eliza", "--deterministic"], env={"BENCH_RUN": str(run)})


async def _first_part(client: BackendClient, agent: dict[str, Any], text: str) -> float:
    """Seconds from sending the request to its first part; waits for the whole response."""
    arrived: list[float] = []
    start = time.perf_counter()
    result = client.start_chat([user(text)], agent=agent, model_id="eliza", on_part=lambda _: arrived.append(time.perf_counter()))
    await result.done.wait()
    if result.error is not None or not arrived:
        raise RuntimeError(f"no reply from the agent: {result.error.message if result.error else 'no parts'}")
    return arrived[0] - start


async def _measure() -> dict[str, Any]:
    firsts: list[float] = []
    seconds: list[float] = []
    async with BackendClient.spawn(stderr=subprocess.DEVNULL) as client:
        assert client.process is not None
        with trio.fail_after(GUARD):
            # The backend's first process agent also starts importing the MCP SDK in a thread.
            await _first_part(client, _agent(0), FIRST)
            await wait_idle(client.process.pid)
        for run in range(1, SAMPLES + 1):
            with trio.fail_after(GUARD):
                agent = _agent(run)
                firsts.append(await _first_part(client, agent, FIRST))
                seconds.append(await _first_part(client, agent, SECOND))
    first, second = statistics.median(firsts), statistics.median(seconds)
    return {"first_ms": first * 1000, "second_ms": second * 1000, "ratio": first / second}


def measure() -> dict[str, Any]:
    return trio.run(_measure)


if __name__ == "__main__":
    print(measure())
