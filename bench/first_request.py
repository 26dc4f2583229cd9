"""The size of Claude Code's first model request: through Symposium, with Copilot Chat's real
Agent-mode tool list (tests/support/fixtures/copilot-0.67-agent-tools.json, as Copilot 0.67 sent it), against
Claude Code alone over ACP (tests/support/acp_direct.py, no MCP server), the same prompt.

What is counted is what the fake Anthropic API receives in the first request of the agent's own turn:
the JSON of its `system`, `tools` and `messages`. Symposium adds the `vscode_tools` MCP server (its
tools, or what Claude Code keeps of them while it defers MCP tools behind its tool search) and
whatever the session's options change; Copilot's own system prompt and wrappers must not reach the
model. Each side runs in a home of its own, so both are a first run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import trio

from symposium.client import BackendClient, process_agent
from tests.support.acp_direct import run_outside
from tests.support.claude import claude_env, installed_claude
from tests.support.copilot import Copilot
from tests.support.fake_anthropic import FakeAnthropic, reply, text

AGENT_TOOLS = json.loads((Path(__file__).parent.parent / "tests" / "support" / "fixtures" / "copilot-0.67-agent-tools.json").read_text())
PROMPT = "What does this project do?"
PARTS = ("system", "tools", "messages")
GUARD = 120  # a hang guard, not a budget


def sizes(body: dict[str, Any]) -> dict[str, int]:
    """Bytes of each part of a Messages API request body, as JSON."""
    return {part: len(json.dumps(body.get(part), separators=(",", ":")).encode()) for part in PARTS}


async def _measure() -> dict[str, Any]:
    found = await trio.to_thread.run_sync(installed_claude)
    if isinstance(found, str):
        raise RuntimeError(found)
    node, entry = found
    api = FakeAnthropic()
    # Claude Code's CLI may still write its home as it exits: a leftover file is no failure.
    with tempfile.TemporaryDirectory(prefix="symposium-bench-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        for folder in ("with", "alone", "work"):
            (root / folder).mkdir()
        cwd = root / "work"
        (cwd / "README.md").write_text("# A project\n")
        async with trio.open_nursery() as nursery:
            await nursery.start(api.serve)
            with trio.fail_after(GUARD):
                api.script(reply(text("It is a project.")))
                async with BackendClient.spawn(stderr=subprocess.DEVNULL, cwd=str(cwd)) as client:
                    agent = process_agent("claude", node, [entry], env=claude_env(api.url, root / "with"))
                    answer = await Copilot(client, agent, tools=AGENT_TOOLS).ask(PROMPT)
                    if answer.error is not None:
                        raise RuntimeError(f"through Symposium: {answer.error.message}")
                with_us = api.main[0]
                api.script(reply(text("It is a project.")))
                alone_agent = process_agent("claude", node, [entry], env=claude_env(api.url, root / "alone"))
                await run_outside(alone_agent, str(cwd), [PROMPT])
                alone = api.main[1]
            nursery.cancel_scope.cancel()
    for request in (with_us, alone):
        if request.user_texts()[-1:] != [PROMPT]:
            raise RuntimeError(f"the model was not sent the prompt alone: {request.user_texts()}")
    ours, theirs = sizes(with_us.body), sizes(alone.body)
    return {
        "with": ours,
        "alone": theirs,
        "ratio": sum(ours.values()) / sum(theirs.values()),
        "tools_with": len(with_us.body.get("tools") or []),
        "tools_alone": len(alone.body.get("tools") or []),
    }


def measure() -> dict[str, Any]:
    return trio.run(_measure)


if __name__ == "__main__":
    print(measure(), file=sys.stderr)
