"""Thousands of conversations under a low open-file limit: all answered, the backend stays small.

A real `symposium vscodelm` under `ulimit -n 256` (set in the child before it starts), with its
default settings, is asked for 3,000 one-turn conversations with the built-in Eliza, a few
at a time. Measured from outside (/proc) and from inside (`symposium/stats`): descriptors and
RSS after the first conversation, once the default number of conversations is held, and
after all 3,000; then the first conversation, released long ago, is continued with its
marker and must answer as if it had never left.
"""

from __future__ import annotations

import subprocess
import tempfile
from typing import Any

import trio

from bench.streaming import wait_idle
from symposium.client import ELIZA, BackendClient, ChatResult, user
from tests.support.proc import open_fds, rss_mb

CONVERSATIONS = 3000
NOFILE = 256
CONCURRENCY = 8
GUARD = 900


async def _snapshot(client: BackendClient) -> dict[str, float]:
    assert client.process is not None
    await wait_idle(client.process.pid)
    stats = await client.stats()
    return {"fds": open_fds(client.process.pid), "rss_mb": rss_mb(client.process.pid), **stats}


async def _conversations(client: BackendClient, first: int, count: int, failures: list[str]) -> None:
    limiter = trio.Semaphore(CONCURRENCY)

    async def one(n: int) -> None:
        async with limiter:
            result = await client.chat([user(f"I remember conversation {n}")], agent=ELIZA)
            if not result.completed or result.error is not None:
                failures.append(f"conversation {n}: {result.error.message if result.error else 'not completed'}")

    async with trio.open_nursery() as nursery:
        for n in range(first, first + count):
            nursery.start_soon(one, n)


def _assistant(result: ChatResult) -> dict[str, Any]:
    [marker] = [p for p in result.parts if p["type"] == "marker"]
    return {"role": "assistant", "content": [marker, {"type": "text", "value": result.text()}]}


async def _measure() -> dict[str, Any]:
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="symposium-bench-") as state:
        return await _measure_in(state, failures)


async def _measure_in(state: str, failures: list[str]) -> dict[str, Any]:
    env = {"SYMPOSIUM_STATE_DIR": state}  # 3,000 sessions are remembered: not in the user's own state
    async with BackendClient.spawn(["vscodelm"], nofile=NOFILE, stderr=subprocess.DEVNULL, env=env) as client:
        with trio.fail_after(GUARD):
            first = await client.chat([user("Hello")], agent=ELIZA)
            one = await _snapshot(client)
            limit = int(one["maxConversations"])  # the default: a quarter of the open-file limit here
            await _conversations(client, 1, limit - 1, failures)
            held = await _snapshot(client)  # as many as it holds, none released yet
            await _conversations(client, limit, CONVERSATIONS - limit, failures)
            after = await _snapshot(client)
            again = await client.chat([user("Hello"), _assistant(first), user("I feel sad")], agent=ELIZA)
    return {
        "answered": CONVERSATIONS - len(failures),
        "failures": failures[:3],
        "limit": limit,
        "one": one,
        "held": held,
        "after": after,
        "first_continues": again.completed and again.text() == "Do you often feel sad?",
        "rss_per_held_kb": (held["rss_mb"] - one["rss_mb"]) * 1024 / (limit - 1),
        "rss_per_released_kb": (after["rss_mb"] - held["rss_mb"]) * 1024 / (CONVERSATIONS - limit),
    }


def measure() -> dict[str, Any]:
    return trio.run(_measure)


if __name__ == "__main__":
    print(measure())
