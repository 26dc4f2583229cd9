"""A prepared (spare) session made after a chat that offered no tools, taken by a chat that offers
some: the agent has the request's tools before its first model request, every time
(docs/DESIGN.md, "Tool bridge"). With the real Claude Code against the fake Anthropic API."""

from __future__ import annotations

import json

import trio

from symposium.client import BackendClient, user
from tests.support.claude import ClaudeCode
from tests.support.fake_anthropic import reply, text
from tests.support.real_agent import GUARD

WEATHER = {"name": "get_weather", "description": "The weather in a city", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
RUNS = 10


async def test_a_spare_made_after_a_chat_without_tools_has_the_next_chats_tools_before_its_first_model_request(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(*(reply(text(f"Answer {n}.")) for n in range(2 * RUNS)))
    named: list[bool] = []
    with trio.fail_after(GUARD * 4):
        await backend.prepare(claude.agent, cwd=str(claude.cwd))
        for run in range(RUNS):
            await backend.chat([user(f"Plain chat {run}")], agent=claude.agent, tools=[], cwd=str(claude.cwd))
            await backend.prepare(claude.agent, cwd=str(claude.cwd))  # the next spare, made with no tools
            before = len(claude.api.main)
            result = await backend.chat([user(f"Weather chat {run}")], agent=claude.agent, tools=[WEATHER], cwd=str(claude.cwd))
            assert f"Answer {2 * run + 1}." in result.text()
            first = claude.api.main[before]
            named.append("mcp__vscode_tools__get_weather" in json.dumps(first.body))
            await backend.prepare(claude.agent, cwd=str(claude.cwd))
    assert named == [True] * RUNS, f"the first model request of each chat with tools named the tool: {named}"
