"""A long conversation: the latency of one more turn at turn 1,000, against turn 10, over the wire.

Every request carries the whole history (as VS Code's LM API does), so the backend must not
read all of it again: it parses only the part of a request that the conversation's previous
request did not have (`protocol/shared/incremental_json.py`) and reuses what it made of the rest
(`protocol/history/reading.py`). The consumer behaves like Copilot: a system message re-rendered every
request, each reply kept with its marker. The agent is the built-in Eliza.

The two conversations run side by side in one backend and take turns, a short turn then a
long one, so that whatever else the machine is doing weighs on both alike. The client writes
pre-encoded lines and reads the backend's lines itself, so the figure is the backend's: the
median time from the first byte of a request to its `{}` response.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import IO, Any

SHORT, LONG = 10, 1000
SAMPLES = 15


def _system(turn: int) -> dict[str, Any]:
    return {"role": "system", "content": [{"type": "text", "value": f"You are a helpful assistant. Request {turn}. " + "Be brief. " * 200}]}


def _request(id: int, turn: int, history: list[dict[str, Any]]) -> bytes:
    params = {"modelId": "symposium-eliza", "messages": [_system(turn), *history], "agent": {"eliza": {"deterministic": True}}, "options": {"tools": []}}
    return (json.dumps({"jsonrpc": "2.0", "id": id, "method": "lm/provideLanguageModelChatResponse", "params": params}) + "\n").encode()


class _Conversation:
    """One chat, as its consumer keeps it: every reply goes back into the history with its marker."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.history: list[dict[str, Any]] = []

    def turn(self, id: int, stdin: IO[bytes], stdout: IO[bytes]) -> float:
        """One more turn; returns the seconds from the request's first byte to its response."""
        turn = len(self.history) // 2 + 1
        self.history.append({"role": "user", "content": [{"type": "text", "value": f"I feel {self.topic} about thing number {turn}, " + "and lorem ipsum " * 8}]})
        line = _request(id, turn, self.history)
        start = time.perf_counter()
        stdin.write(line)
        stdin.flush()
        reply: list[dict[str, Any]] = []
        while True:
            message = json.loads(stdout.readline() or b"null")
            if message is None:
                raise RuntimeError("the backend exited")
            if message.get("id") == id:
                elapsed = time.perf_counter() - start
                if "error" in message:
                    raise RuntimeError(f"turn {turn} failed: {message['error']}")
                break
            if message.get("method") == "lm/responsePart":
                reply.append(message["params"]["part"])
        markers = [p for p in reply if p["type"] == "marker"]
        text = "".join(p["value"] for p in reply if p["type"] == "text")
        self.history.append({"role": "assistant", "content": [*markers, {"type": "text", "value": text}]})
        return elapsed


def measure() -> dict[str, float]:
    backend = subprocess.Popen(
        [sys.executable, "-m", "symposium", "--log-level", "warning", "vscodelm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert backend.stdin is not None and backend.stdout is not None
    ids = iter(range(1, 10**9))
    long, short = _Conversation("sad"), _Conversation("glad")
    timings: dict[str, list[float]] = {"long": [], "short": []}
    try:
        for _ in range(LONG - 1):
            long.turn(next(ids), backend.stdin, backend.stdout)
        for _ in range(SHORT - 1):
            short.turn(next(ids), backend.stdin, backend.stdout)
        for _ in range(SAMPLES):
            timings["short"].append(short.turn(next(ids), backend.stdin, backend.stdout))
            timings["long"].append(long.turn(next(ids), backend.stdin, backend.stdout))
    finally:
        backend.stdin.close()
        backend.wait(timeout=30)
    short_s, long_s = statistics.median(timings["short"]), statistics.median(timings["long"])
    return {"short_ms": short_s * 1000, "long_ms": long_s * 1000, "ratio": long_s / short_s}


if __name__ == "__main__":
    print(measure())
