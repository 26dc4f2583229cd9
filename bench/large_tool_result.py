"""A large VS Code tool result through the bridge: its cost must grow linearly with its size.

Eliza (in-process) calls the bridged tool `t` twice in one turn; the first result is small (it
starts the relay and imports the MCP SDK), the second is SIZE MiB of text. Timed: from sending
the request that carries the large result to `lm/responseComplete`, once Eliza has said it
back. That crosses every step a large result takes: the request's decoding, the Session, the
bridge's MCP server, the relay, Eliza's MCP client, her reply over the in-memory ACP stream,
and the parts out. A 50 MiB result once took 106 s (10 MiB: 3.6 s): two readers copied the
rest of a long line at every read.
"""

from __future__ import annotations

import subprocess
import time
from typing import Any

import trio

from bench.streaming import wait_idle
from symposium.client import ELIZA, BackendClient, tool_result, user

SIZES = (10, 50)  # MiB
GUARD = 300
TOOL = {"name": "t", "description": "A tool that answers at length", "inputSchema": {"type": "object"}}


async def _one(mib: int) -> float:
    async with BackendClient.spawn(stderr=subprocess.DEVNULL) as client:
        assert client.process is not None
        with trio.fail_after(GUARD):
            history = [user("use tools vscode_tools::t with {} then vscode_tools::t with {}")]
            result = await client.chat(history, agent=ELIZA, tools=[TOOL])
            for text in ("ok", "x" * (mib << 20)):
                [call] = result.tool_calls()
                history += [result.assistant_message(), tool_result(call["toolCallId"], text)]
                if text != "ok":
                    await wait_idle(client.process.pid)
                start = time.perf_counter()
                result = await client.chat(history, agent=ELIZA, tools=[TOOL])
                elapsed = time.perf_counter() - start
                if result.error is not None:
                    raise RuntimeError(f"backend: {result.error.message}")
            if len(result.text()) < mib << 20:
                raise RuntimeError(f"the reply lost text: {len(result.text()):,} characters")
    return elapsed


def measure() -> dict[str, Any]:
    seconds = {mib: trio.run(_one, mib) for mib in SIZES}
    small, large = SIZES
    return {"seconds": seconds, "ratio": seconds[large] / seconds[small], "linear": large / small}


if __name__ == "__main__":
    print(measure())
