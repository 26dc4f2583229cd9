"""A long conversation: the latency of one more turn at turn 1,000, against turn 10, over the wire.

Every request carries the whole history (as VS Code's LM API does), so the backend must not
parse and hash all of it again: it reuses what it read of the conversation's previous
request (`actors/reading.py`). The consumer behaves like Copilot: a system message
re-rendered every request, each reply kept with its marker. The agent is the built-in Eliza.

The client writes pre-encoded lines and reads the backend's lines itself, so the figure is
the backend's: the median time from the first byte of a request to its `{}` response.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

SHORT, LONG = 10, 1000
SAMPLES = 15


def _system(turn: int) -> dict[str, Any]:
    return {"role": "system", "content": [{"type": "text", "value": f"You are a helpful assistant. Request {turn}. " + "Be brief. " * 200}]}


def _request(turn: int, history: list[dict[str, Any]]) -> bytes:
    params = {"modelId": "symposium-eliza", "messages": [_system(turn), *history], "agent": {"eliza": {"deterministic": True}}, "options": {"tools": []}}
    return (json.dumps({"jsonrpc": "2.0", "id": turn, "method": "lm/provideLanguageModelChatResponse", "params": params}) + "\n").encode()


def measure() -> dict[str, float]:
    backend = subprocess.Popen(
        [sys.executable, "-m", "symposium", "--log-level", "warning", "vscodelm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert backend.stdin is not None and backend.stdout is not None
    timings: dict[int, float] = {}
    history: list[dict[str, Any]] = []
    try:
        for turn in range(1, LONG + SAMPLES + 1):
            history.append({"role": "user", "content": [{"type": "text", "value": f"I feel sad about thing number {turn}, " + "and lorem ipsum " * 8}]})
            line = _request(turn, history)
            start = time.perf_counter()
            backend.stdin.write(line)
            backend.stdin.flush()
            reply: list[dict[str, Any]] = []
            while True:
                message = json.loads(backend.stdout.readline() or b"null")
                if message is None:
                    raise RuntimeError("the backend exited")
                if message.get("id") == turn:
                    timings[turn] = time.perf_counter() - start
                    if "error" in message:
                        raise RuntimeError(f"turn {turn} failed: {message['error']}")
                    break
                if message.get("method") == "lm/responsePart":
                    reply.append(message["params"]["part"])
            markers = [p for p in reply if p["type"] == "marker"]
            text = "".join(p["value"] for p in reply if p["type"] == "text")
            history.append({"role": "assistant", "content": [*markers, {"type": "text", "value": text}]})
    finally:
        backend.stdin.close()
        backend.wait(timeout=30)
    short = statistics.median(timings[t] for t in range(SHORT, SHORT + SAMPLES))
    long = statistics.median(timings[t] for t in range(LONG, LONG + SAMPLES))
    return {"short_ms": short * 1000, "long_ms": long * 1000, "ratio": long / short}


if __name__ == "__main__":
    print(measure())
