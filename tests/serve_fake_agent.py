"""Claude Code or Codex against its fake model API, for a test outside pytest (the VS Code tests).

    python -m tests.serve_fake_agent claude|codex ROOT [--session-in FOLDER PROMPT]

Serves the fake API on 127.0.0.1 and prints, as JSON lines on stdout: first the agent's entry for
`symposium.agents` (`{"agent": {"command", "args", "env"}}`, or `{"error": ...}` when the agent
cannot be installed); with `--session-in`, then `{"session": ID}` once the agent, run as another
client would run it, has had a session in FOLDER take PROMPT; then `{"model": ..., "userTexts":
[...]}` for each model request of an agent's own turn, as the API received it. Every turn is
answered with a short text. Ends when its stdin closes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import trio

from tests.acp_direct import run_outside
from tests.claude import ClaudeCode, installed_claude
from tests.codex import Codex, installed_codex
from tests.fake_anthropic import FakeAnthropic
from tests.fake_openai import FakeOpenAI


def say(line: dict) -> None:
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


async def main(kind: str, root: Path, outside: tuple[str, str] | None) -> int:
    found = await trio.to_thread.run_sync(installed_claude if kind == "claude" else installed_codex)
    if isinstance(found, str):
        say({"error": found})
        return 1
    async with trio.open_nursery() as nursery:
        api: FakeAnthropic | FakeOpenAI = FakeAnthropic() if kind == "claude" else FakeOpenAI()
        await nursery.start(api.serve)
        root.mkdir(parents=True, exist_ok=True)
        definition = (ClaudeCode(api, root) if kind == "claude" else Codex(api, root)).agent  # type: ignore[arg-type]
        agent = definition["mcp_server"]
        say({"agent": {"command": agent["command"], "args": agent["args"], "env": {v["name"]: v["value"] for v in agent["env"]}}})
        if outside is not None:
            say({"session": await run_outside(definition, outside[0], [outside[1]])})

        async def report_models() -> None:
            seen = 0
            while True:
                await api.wait_for(lambda _: len(api.main) > seen)
                for request in api.main[seen:]:
                    say({"model": (request.body or {}).get("model"), "userTexts": request.user_texts()})
                seen = len(api.main)

        nursery.start_soon(report_models)
        stdin = trio.lowlevel.FdStream(0)
        while await stdin.receive_some():
            pass
        nursery.cancel_scope.cancel()
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    session_in = (args[3], args[4]) if len(args) == 5 and args[2] == "--session-in" else None
    sys.exit(trio.run(main, args[0], Path(args[1]), session_in))
