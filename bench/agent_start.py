"""Start-up of a real agent: Claude Code's ACP adapter (pinned, the version the tests install) against
the tests' fake Anthropic API, through a spawned `symposium vscodelm`.

Every figure is the time from sending a chat request to its first streamed part:
- a new agent process, started as an installed agent is: `node` on the package's bin script;
- the same through `npx -y <package>@<version>` (its cache already filled by one untimed run);
- a second conversation with a process that is already running (it waits for `session/new`);
- with warm-up (`lm/prepareModel`, which the extension sends): a new conversation, which takes
  the spare session, against a follow-up turn in a conversation, on the same process.
Each sample waits until the backend and its agents are idle (a spare session is made after
the request that took the one before it, and Claude Code keeps working for a moment after
`session/new`), so the two warm figures compare the agent's work, not the machine's load.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from symposium.client import BackendClient, process_agent, user
from tests.claude import VERSION, installed_claude
from tests.fake_anthropic import FakeAnthropic, reply, text

PACKAGE = "@agentclientprotocol/claude-agent-acp"
COLD_SAMPLES = 3
WARM_SAMPLES = 7
GUARD = 120  # a hang guard per step, not a budget


def _env(api: FakeAnthropic, home: Path) -> dict[str, str]:
    env = {
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-fake",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # otherwise the CLI refuses to run as root
    return env


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
        self.api.script(reply(text("Hello from the fake model.")))
        arrived: list[float] = []
        start = time.perf_counter()
        with trio.fail_after(GUARD):
            result = await self.client.chat(messages, agent=agent, model_id="claude", cwd=self.cwd, on_part=lambda _: arrived.append(time.perf_counter()))
        if result.error is not None or not arrived:
            raise RuntimeError(f"no reply from Claude Code: {result.error.message if result.error else 'no parts'}")
        return arrived[0] - start, result.assistant_message()

    async def quiet(self) -> None:
        assert self.client.process is not None
        await _quiet(self.client.process.pid)

    def prompt(self) -> str:
        return f"Hello, conversation {next(self.runs)}"


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
            env = _env(api, home)
            async with BackendClient.spawn(stderr=subprocess.DEVNULL, cwd=str(cwd)) as client:
                bench = _Bench(client, api, cwd)
                found_ms: dict[str, list[float]] = {"pinned": [], "npx": [], "second": [], "new_warm": [], "follow_up": []}
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
                for _ in range(WARM_SAMPLES):
                    with trio.fail_after(GUARD):
                        await client.prepare(warm, model_id="claude", cwd=str(cwd))  # the spare is ready
                    await bench.quiet()
                    first = [user(bench.prompt())]
                    elapsed, answer = await bench.first_part(warm, first)
                    found_ms["new_warm"].append(elapsed)
                    with trio.fail_after(GUARD):
                        await client.prepare(warm, model_id="claude", cwd=str(cwd))
                    await bench.quiet()
                    elapsed, _ = await bench.first_part(warm, [*first, answer, user("And then?")])
                    found_ms["follow_up"].append(elapsed)
            nursery.cancel_scope.cancel()
    medians = {name: statistics.median(values) * 1000 if values else None for name, values in found_ms.items()}
    return {**{f"{name}_ms": value for name, value in medians.items()}, "ratio": medians["new_warm"] / medians["follow_up"], "version": VERSION}


def measure() -> dict[str, Any]:
    return trio.run(_measure)


if __name__ == "__main__":
    print(measure(), file=sys.stderr)
