"""The Copilot emulator's scenarios with Claude Code (offline, fake Anthropic API)."""

from __future__ import annotations

import trio

from symposium.client import BackendClient
from tests.support.claude import ClaudeCode
from tests.support.copilot import Copilot
from tests.support.fake_anthropic import reply, text
from tests.support.real_agent import GUARD


def sessions(claude: ClaudeCode) -> list[str]:
    return [m["params"]["sessionId"] for m in claude.requests("session/prompt")]


async def test_a_rerendered_multi_turn_conversation_keeps_claude_codes_session(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(reply(text("Hi there.")), reply(text("Sorry to ", "hear that.")), reply(text("Noted.")))
    copilot = Copilot(backend, claude.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        await copilot.ask("I feel sad")
        third = await copilot.ask("Thanks")
    assert third.text() == "Noted."
    assert len(set(sessions(claude))) == 1 and len(claude.requests("session/new")) == 1
    assert claude.prompts() == ["Hello", "I feel sad", "Thanks"]
    # The model saw the whole conversation, kept by the agent's own session.
    assert claude.api.main[2].user_texts()[-3:] == ["Hello", "I feel sad", "Thanks"]


async def test_summarisation_and_a_fork_with_claude_code(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(reply(text("Hi.")), reply(text("A summary: hello.")), reply(text("Still here.")), reply(text("Forked.")))
    copilot = Copilot(backend, claude.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        summary = await copilot.summarise()
        after = await copilot.ask("Are you there?")
        copilot.edit(0, "")
        fork = await copilot.ask("Start over")
    assert summary.text() == "A summary: hello."
    assert after.text() == "Still here." and fork.text() == "Forked."
    used = sessions(claude)
    assert used[0] == used[2]  # the conversation went on in its own session...
    assert used[1] not in (used[0], used[3])  # ...the summary had a throwaway one
    assert used[3] != used[0]  # and the fork a new one
    assert claude.prompts()[2] == "Are you there?"
