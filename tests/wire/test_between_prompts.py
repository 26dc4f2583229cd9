"""What an agent asks while none of its prompts runs (a write, a question, a permission) is refused
at once with an error, and the next turn shows nothing of it (docs/DESIGN.md, "The turn machine").

Over the real wire: a real `symposium vscodelm`, `tests/support/hostile_agent.py`'s `asks-after`
command, with the next request offering Copilot's card and question tools, which a request kept
until then would have used.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import trio

from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, process_agent, user

HOSTILE = process_agent("hostile", sys.executable, [str(Path(__file__).parents[1] / "support" / "hostile_agent.py")])
ASK_TOOL_DEF = {"name": "vscode_askQuestions", "description": "Ask the user questions", "inputSchema": {"type": "object", "properties": {"questions": {"type": "array"}}}}
GUARD = 30  # a hang guard, not a timing budget


async def test_requests_between_prompts_are_refused_at_once_and_never_reach_the_next_turn(backend: BackendClient, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    target, fifo = workspace / "between.txt", tmp_path / "answered"
    os.mkfifo(fifo)
    tools = [AGENT_ACTION_TOOL_DEF, ASK_TOOL_DEF]
    history = [user(f"asks-after {target} {fifo}")]
    try:
        with trio.fail_after(GUARD):
            first = await backend.chat(history, agent=HOSTILE, cwd=str(workspace), tools=tools)
            assert first.error is None and first.text() == "before"
            # The agent writes what it was answered once all three are: refused at once, with no turn waiting.
            answers = json.loads(await trio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True))
            history += [first.assistant_message(), user("echo next")]
            second = await backend.chat(history, agent=HOSTILE, cwd=str(workspace), tools=tools)
    finally:
        with contextlib.suppress(OSError):  # a reader still waiting (the guard ran out) gets its end
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert set(answers) == {"fs/write_text_file", "elicitation/create", "session/request_permission"}
    for method, answer in answers.items():
        assert isinstance(answer, str) and answer.startswith("error: ") and "no prompt" in answer, (method, answer)
    assert not target.exists(), "a write refused is not applied"
    assert second.error is None and second.completed
    assert second.text() == "echo: next"
    assert second.tool_calls() == [], "no card, no question: nothing of what came between the prompts"
