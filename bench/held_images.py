"""Images held by idle conversations: bounded in bytes, not by the number of conversations.

A real `symposium vscodelm` is sent one new conversation after another, each with a 1 MiB PNG
pasted, answered by the hostile test agent (which takes images). Its RSS is read from /proc
once it is idle, after `FEW` and after `MANY` such conversations: unbounded, the growth is
linear in their number (about 2.8 MB each before the bound); bounded, it levels off
(docs/reliability.md, "Bounded memory").
"""

from __future__ import annotations

import base64
import os
import struct
import sys
from typing import Any

import trio

from bench.streaming import wait_idle
from symposium.client import BackendClient, process_agent, user
from tests.support.proc import rss_mb

FEW, MANY = 20, 80
IMAGE_BYTES = 1024 * 1024
HOSTILE = process_agent("hostile", sys.executable, ["tests/support/hostile_agent.py"])


def _png() -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0) + b"\0\0\0\0"
    return base64.b64encode(header + os.urandom(IMAGE_BYTES)).decode()


async def _measure() -> dict[str, Any]:
    rss: dict[int, float] = {}
    async with BackendClient.spawn(["--log-level", "warning", "vscodelm"]) as backend:
        assert backend.process is not None
        pid = backend.process.pid
        warm = await backend.chat([user("warm")], agent=HOSTILE, model_id="hostile")
        assert warm.error is None, warm.error
        await wait_idle(pid)
        rss[0] = rss_mb(pid)
        for n in range(1, MANY + 1):
            message = {"role": "user", "content": [{"type": "text", "value": f"What is in picture {n}?"}, {"type": "data", "mimeType": "image/png", "data": _png()}]}
            result = await backend.chat([message], agent=HOSTILE, model_id="hostile")
            assert result.error is None, result.error
            if n in (FEW, MANY):
                await wait_idle(pid)
                rss[n] = rss_mb(pid)
    few, many = rss[FEW] - rss[0], rss[MANY] - rss[0]
    return {"rss_mb": rss, "few_mb": few, "many_mb": many, "ratio": many / few}


def measure() -> dict[str, Any]:
    return trio.run(_measure)
