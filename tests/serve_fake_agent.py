"""Claude Code or Codex against its fake model API, for a test outside pytest (the VS Code tests).

    python -m tests.serve_fake_agent claude|codex ROOT

Serves the fake API on 127.0.0.1 and prints, as JSON lines on stdout: first the agent's entry for
`symposium.agents` (`{"agent": {"command", "args", "env"}}`, or `{"error": ...}` when the agent
cannot be installed), then `{"model": ...}` for each model request of an agent's own turn, as the
API received it. Every turn is answered with a short text. Ends when its stdin closes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import trio

from tests.claude import ClaudeCode, installed_claude
from tests.codex import Codex, installed_codex
from tests.fake_anthropic import FakeAnthropic
from tests.fake_openai import FakeOpenAI


def say(line: dict) -> None:
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


async def main(kind: str, root: Path) -> int:
    found = await trio.to_thread.run_sync(installed_claude if kind == "claude" else installed_codex)
    if isinstance(found, str):
        say({"error": found})
        return 1
    async with trio.open_nursery() as nursery:
        api: FakeAnthropic | FakeOpenAI = FakeAnthropic() if kind == "claude" else FakeOpenAI()
        await nursery.start(api.serve)
        root.mkdir(parents=True, exist_ok=True)
        agent = (ClaudeCode(api, root) if kind == "claude" else Codex(api, root)).agent["mcp_server"]  # type: ignore[arg-type]
        say({"agent": {"command": agent["command"], "args": agent["args"], "env": {v["name"]: v["value"] for v in agent["env"]}}})

        async def report_models() -> None:
            seen = 0
            while True:
                await api.wait_for(lambda _: len(api.main) > seen)
                for request in api.main[seen:]:
                    say({"model": (request.body or {}).get("model")})
                seen = len(api.main)

        nursery.start_soon(report_models)
        stdin = trio.lowlevel.FdStream(0)
        while await stdin.receive_some():
            pass
        nursery.cancel_scope.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(trio.run(main, sys.argv[1], Path(sys.argv[2])))
