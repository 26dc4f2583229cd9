"""A bridged tool round trip inside the backend, with no VS Code work in it.

The built-in Eliza is given one VS Code tool `t` and told to call it K times in turn over
one MCP connection (`use tools vscode_tools::t with {} then ...`). Each call surfaces as a
`tool_call` part and the response completes; the next request (the history, our assistant
message, the tool result) hands the result back and lets Eliza make the next call. From
sending request i+1:

- to tool_call part i+1: one bridged round trip (the result through the relay to Eliza's MCP
  client, its next `tools/call` back through the relay, the part out): the budget's figure;
- to `lm/responseComplete`: what VS Code waits before it can run the tool. The Session
  completes a response only once the agent has been quiet for `GATHER_WINDOW`, in case it
  makes more calls at once (Eliza announces none: docs/DESIGN.md, "Parallel tool calls").

The budget is a ratio to a same-run baseline: a plain turn of the same conversation (Eliza's
text reply), request -> its first part, over the same wire and backend.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from typing import Any

import trio

from bench.streaming import wait_idle
from protocol.turn.rules import GATHER_WINDOW
from protocol.vscode.lm import METHOD_COMPLETE
from symposium.client import ELIZA, BackendClient, ChatResult, tool_result, user

CALLS = 31  # the first one (which starts the relay and imports the MCP SDK) is not counted
GUARD = 60
TOOL = {"name": "t", "description": "A tool that answers ok", "inputSchema": {"type": "object"}}


async def _measure() -> dict[str, Any]:
    to_part: list[float] = []
    to_complete: list[float] = []
    plain: list[float] = []
    command = "use tools " + " then ".join(["vscode_tools::t with {}"] * CALLS)
    async with BackendClient.spawn(stderr=subprocess.DEVNULL) as client:
        assert client.process is not None
        completed: dict[int, float] = {}

        async def on_complete(params: Any) -> None:
            completed[params.get("requestId")] = time.perf_counter()
            await client._on_complete(params)

        client.peer.on_notification(METHOD_COMPLETE, on_complete)

        async def request(history: list[dict[str, Any]]) -> tuple[ChatResult, float, float]:
            calls: list[float] = []
            start = time.perf_counter()
            result = client.start_chat(
                history, agent=ELIZA, tools=[TOOL], on_part=lambda part: calls.append(time.perf_counter()) if part.get("type") in ("tool_call", "text") else None
            )
            await result.done.wait()
            if result.error is not None:
                raise RuntimeError(f"backend: {result.error.message}")
            return result, (calls[0] - start if calls else float("nan")), completed.get(result.request_id, float("nan")) - start

        history = [user(command)]
        with trio.fail_after(GUARD):
            result, _, _ = await request(history)
            await wait_idle(client.process.pid)  # the MCP SDK imports, in both the bridge and Eliza's client
            for _ in range(CALLS):
                [call] = result.tool_calls()
                history += [result.assistant_message(), tool_result(call["toolCallId"], "ok")]
                result, part_s, complete_s = await request(history)
                if result.tool_calls():
                    to_part.append(part_s)
                    to_complete.append(complete_s)
        expected = "\n".join(["t: OK: ok"] * CALLS)
        if result.text() != expected:
            raise RuntimeError(f"unexpected final reply {result.text()[:200]!r}")
        # The same-run baseline: a plain turn of the same conversation, request -> its first part.
        with trio.fail_after(GUARD):
            for n in range(CALLS):
                history += [result.assistant_message(), user(f"Hello {n}")]
                result, part_s, _ = await request(history)
                plain.append(part_s)
    return {
        "part_ms": statistics.median(to_part) * 1000,
        "complete_ms": statistics.median(to_complete) * 1000,
        "part_p90_ms": sorted(to_part)[int(len(to_part) * 0.9)] * 1000,
        "gather_ms": GATHER_WINDOW * 1000,
        "plain_ms": statistics.median(plain) * 1000,
        "calls": len(to_part),
    }


def measure() -> dict[str, Any]:
    return trio.run(_measure)


if __name__ == "__main__":
    print(measure())
