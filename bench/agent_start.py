"""Start-up of a real agent: Claude Code's ACP adapter (pinned, the version the tests install) against
the tests' fake Anthropic API, through a spawned `symposium vscodelm`.

Every figure is the time from sending a chat request to its first streamed part:
- a new agent process, started as an installed agent is: `node` on the package's bin script;
- the same through `npx -y <package>@<version>` (its cache already filled by one untimed run);
- a second conversation with a process that is already running (it waits for `session/new`);
- with warm-up (`lm/prepareModel`, which the extension sends): a new conversation, which takes
  the spare session, against a follow-up turn in a conversation, on the same process; and of
  each, the time until the agent's model request reaches the fake API (the rest, from there to
  the first part, is the same path for both);
- the floor: Claude Code alone, driven over ACP without Symposium (no MCP server), the first
  prompt of a new session against a follow-up in it. Each session is its own Claude Code CLI
  process, whose first turn runs cold code (and asks for a title); no client can go below it.
  Sampled in turn with the warm figures (one with Symposium, one alone), and the penalty is the
  median of each pair's ratio of ratios: the first-prompt time of Claude Code moves with the
  machine, and a pair sees the same machine.
Each sample waits until the backend and its agents are idle (a spare session is made after
the request that took the one before it, and Claude Code keeps working for a moment after
`session/new`), so the two warm figures compare the agent's work, not the machine's load.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from actors.shared.peer import Peer
from actors.shared.version import version
from protocol.acp import schema as acp
from symposium.client import BackendClient, process_agent, user
from tests.support.claude import PACKAGE, VERSION, claude_env, installed_claude
from tests.support.fake_anthropic import FakeAnthropic, reply, text

COLD_SAMPLES = 3
WARM_SAMPLES = 15  # each with Symposium, then alone: the penalty is the median of the pairs'
GUARD = 120  # a hang guard per step, not a budget


def _tree_cpu(root: int) -> float:
    """CPU seconds used so far by `root` and every live descendant (Linux /proc)."""
    children: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += children.get(pid, [])
    return total


async def _quiet(root: int, limit: float = 15.0) -> None:
    """Until the backend and its agents have used under 2% of a CPU for a quarter second (bounded)."""
    with trio.move_on_after(limit):
        before = _tree_cpu(root)
        while True:
            await trio.sleep(0.25)
            now = _tree_cpu(root)
            if now - before < 0.005:
                return
            before = now


class _Bench:
    def __init__(self, client: BackendClient, api: FakeAnthropic, cwd: Path) -> None:
        self.client = client
        self.api = api
        self.cwd = str(cwd)
        self.runs = iter(range(1, 1 << 30))

    async def first_part(self, agent: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
        """Seconds to the first part, and the assistant message (for a follow-up)."""
        elapsed, _, answer = await self.timed(agent, messages)
        return elapsed, answer

    async def timed(self, agent: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[float, float, dict[str, Any]]:
        """Seconds to the first part, seconds to the agent's model request, the assistant message."""
        self.api.script(reply(text("Hello from the fake model.")))
        arrived: list[float] = []
        start = time.perf_counter()
        with trio.fail_after(GUARD):
            result = await self.client.chat(messages, agent=agent, model_id="claude", cwd=self.cwd, on_part=lambda _: arrived.append(time.perf_counter()))
        if result.error is not None or not arrived:
            raise RuntimeError(f"no reply from Claude Code: {result.error.message if result.error else 'no parts'}")
        asked = min(r.at for r in self.api.main if r.at >= start)
        return arrived[0] - start, asked - start, result.assistant_message()

    async def quiet(self) -> None:
        assert self.client.process is not None
        await _quiet(self.client.process.pid)

    def prompt(self) -> str:
        return f"Hello, conversation {next(self.runs)}"


@contextlib.asynccontextmanager
async def _alone(node: str, entry: str, api: FakeAnthropic, env: dict[str, str], cwd: Path) -> AsyncIterator[Callable[[int], Awaitable[tuple[float, float]]]]:
    """Claude Code without Symposium, running beside the backend: yields `sample(run)`, seconds to
    the first text chunk of a new session's first prompt, and of a follow-up in it (the session
    made, and the process idle, first). Sampled in turn with the backend's, so both see the same
    machine."""
    process = await trio.lowlevel.open_process(
        [node, entry], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, **env}, cwd=str(cwd), start_new_session=True
    )
    assert process.stdin is not None and process.stdout is not None
    chunks: dict[str, float] = {}

    async def update(params: dict[str, Any]) -> None:
        if params["update"].get("sessionUpdate") == "agent_message_chunk":
            chunks.setdefault(params["sessionId"], time.perf_counter())

    async def permission(_params: Any, _id: Any) -> dict[str, Any]:
        return {"outcome": acp.CANCELLED_OUTCOME}

    async def prompt(session_id: str, words: str) -> float:
        api.script(reply(text("Hello from the fake model.")))
        start = time.perf_counter()
        await peer.request("session/prompt", {"sessionId": session_id, "prompt": [acp.text_block(words)]})
        return chunks.pop(session_id) - start

    async def sample(run: int) -> tuple[float, float]:
        with trio.fail_after(GUARD):
            session_id = (await peer.request("session/new", acp.new_session_params(str(cwd), [])))["sessionId"]
            await _quiet(process.pid)
            first = await prompt(session_id, f"Hello, session {run}")
            await _quiet(process.pid)
            return first, await prompt(session_id, "And then?")

    try:
        async with trio.open_nursery() as nursery:
            peer = Peer(trio.StapledStream(process.stdin, process.stdout), name="claude")
            peer.on_notification("session/update", update)
            peer.on_request("session/request_permission", permission)
            nursery.start_soon(peer.serve)
            with trio.fail_after(GUARD):
                await peer.request("initialize", acp.initialize_params(version()))
            yield sample
            nursery.cancel_scope.cancel()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the adapter and the CLI of each session
        await process.wait()


def _agent(command: str, args: list[str], env: dict[str, str], run: int) -> dict[str, Any]:
    # A variable of its own per sample: a new agent definition, so a new process.
    return process_agent("claude", command, args, env={**env, "SYMPOSIUM_BENCH_RUN": str(run)})


async def _measure() -> dict[str, Any]:
    found = await trio.to_thread.run_sync(installed_claude)
    if isinstance(found, str):
        raise RuntimeError(found)
    node, entry = found
    npx = shutil.which("npx")
    api = FakeAnthropic()
    with tempfile.TemporaryDirectory(prefix="symposium-bench-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        cwd.mkdir()
        async with trio.open_nursery() as nursery:
            await nursery.start(api.serve)
            env = claude_env(api.url, home)
            async with BackendClient.spawn(stderr=subprocess.DEVNULL, cwd=str(cwd)) as client:
                bench = _Bench(client, api, cwd)
                found_ms: dict[str, list[float]] = {
                    "pinned": [], "npx": [], "second": [], "new_warm": [], "follow_up": [], "new_warm_asked": [], "follow_up_asked": [],
                }
                runs = iter(range(1, 1 << 30))
                if npx is not None:
                    # Fill npx's cache (a first npx run downloads the package); not timed.
                    await bench.first_part(_agent(npx, ["-y", f"{PACKAGE}@{VERSION}"], env, next(runs)), [user(bench.prompt())])
                for _ in range(COLD_SAMPLES):
                    await bench.quiet()
                    pinned = _agent(node, [entry], env, next(runs))
                    elapsed, _ = await bench.first_part(pinned, [user(bench.prompt())])
                    found_ms["pinned"].append(elapsed)
                    await bench.quiet()
                    elapsed, _ = await bench.first_part(pinned, [user(bench.prompt())])
                    found_ms["second"].append(elapsed)
                    if npx is not None:
                        await bench.quiet()
                        elapsed, _ = await bench.first_part(_agent(npx, ["-y", f"{PACKAGE}@{VERSION}"], env, next(runs)), [user(bench.prompt())])
                        found_ms["npx"].append(elapsed)
                warm = _agent(node, [entry], env, next(runs))
                with trio.fail_after(GUARD):
                    await client.prepare(warm, model_id="claude", cwd=str(cwd))
                found_ms["alone_new"], found_ms["alone_follow_up"] = [], []
                async with _alone(node, entry, api, env, cwd) as alone:
                    for sample in range(WARM_SAMPLES):
                        with trio.fail_after(GUARD):
                            await client.prepare(warm, model_id="claude", cwd=str(cwd))  # the spare is ready
                        await bench.quiet()
                        first = [user(bench.prompt())]
                        elapsed, asked, answer = await bench.timed(warm, first)
                        found_ms["new_warm"].append(elapsed)
                        found_ms["new_warm_asked"].append(asked)
                        with trio.fail_after(GUARD):
                            await client.prepare(warm, model_id="claude", cwd=str(cwd))
                        await bench.quiet()
                        elapsed, asked, _ = await bench.timed(warm, [*first, answer, user("And then?")])
                        found_ms["follow_up"].append(elapsed)
                        found_ms["follow_up_asked"].append(asked)
                        alone_new, alone_follow_up = await alone(sample)
                        found_ms["alone_new"].append(alone_new)
                        found_ms["alone_follow_up"].append(alone_follow_up)
            nursery.cancel_scope.cancel()
    medians = {name: statistics.median(values) * 1000 if values else None for name, values in found_ms.items()}
    return {
        **{f"{name}_ms": value for name, value in medians.items()},
        "ratio": medians["new_warm"] / medians["follow_up"],
        "alone_ratio": medians["alone_new"] / medians["alone_follow_up"],
        # Each sample's own: its ratio with Symposium / the ratio alone taken right after it.
        "penalty": statistics.median(
            (new / follow) / (alone_new / alone_follow)
            for new, follow, alone_new, alone_follow in zip(found_ms["new_warm"], found_ms["follow_up"], found_ms["alone_new"], found_ms["alone_follow_up"], strict=False)
        ),
        "version": VERSION,
    }


def measure() -> dict[str, Any]:
    return trio.run(_measure)


if __name__ == "__main__":
    print(measure(), file=sys.stderr)
