"""Consumers that run their own tool loop and send no marker (docs/how-it-works.md, "Consumers"):
Microsoft's chat sample's `@tools` (`tests/support/chat_sample.py`) and a plain `vscode.lm`
extension, through a real `symposium vscodelm`, Eliza recording what she is sent (`tap`).

What the user types after tool results reaches the agent; the consumer's own note after them is
shown to the agent with the results; a fork keeps its agent session.
"""

from __future__ import annotations

from typing import Any

import trio

from protocol.vscode.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, tool_result, user
from tests.conftest import Tap
from tests.support.chat_sample import NOTE, ChatSample, echoed

GUARD = 30
READ = {"name": "read_notes", "description": "Read a file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
EARLIER = "Earlier in this conversation"


def sessions(tap: Tap) -> list[str]:
    """The ACP session of every prompt, in order."""
    return [m["params"]["sessionId"] for m in tap.requests("session/prompt")]


def permission_answers(tap: Tap) -> list[dict[str, Any]]:
    return [m["result"]["outcome"] for m in tap.messages("c2a") if "outcome" in (m.get("result") or {})]


async def test_words_a_plain_consumer_sends_after_a_permissions_result_reach_the_agent_before_it_acts(backend: BackendClient, tap: Tap) -> None:
    """A plain `vscode.lm` extension: the card's result, then what the user typed. The agent hears the
    words (its permission is not acted on), and the next turn goes on in its session unprimed."""
    history = [user("run rm -rf build")]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
        [call] = ask.tool_calls()
        history += [ask.assistant_message(), tool_result(call["toolCallId"], AGENT_ACTION_APPROVED), user("Wait: do not delete anything")]
        words = await backend.chat(history, agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
        history += [words.assistant_message(), user("I feel sad")]
        after = await backend.chat(history, agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
    assert words.error is None and "I ran" not in words.text()
    assert permission_answers(tap) == [{"outcome": "cancelled"}], "the approval was not acted on"
    assert after.text() == "Do you often feel sad?"
    assert tap.prompts() == ["run rm -rf build", "Wait: do not delete anything", "I feel sad"], "never its own answer sent back"
    assert len(set(sessions(tap))) == 1 and len(tap.requests("session/new")) == 1


async def test_words_after_a_tool_round_and_the_samples_note_reach_the_agent(backend: BackendClient, tap: Tap) -> None:
    """The chat sample renders a turn that ended at a tool round as the round and its note, then the
    user's next message: the tool's result answers the call, then the words (never the note) are
    the agent's next prompt, and the turn after goes on in the same session unprimed."""
    ask = user('use tool vscode_tools::read_notes with {"path": "a.md"}')
    with trio.fail_after(GUARD):
        call = await backend.chat([ask], agent=tap.agent, tools=[READ])
        [part] = call.tool_calls()
        history = [ask, echoed(call), tool_result(part["toolCallId"], "the notes"), user(NOTE), user("Wait: read b.md instead")]
        words = await backend.chat(history, agent=tap.agent, tools=[READ])
        history += [words.assistant_message(), user("I feel sad")]
        after = await backend.chat(history, agent=tap.agent, tools=[READ])
    assert words.error is None and after.text() == "Do you often feel sad?"
    assert tap.prompts() == [ask["content"][0]["value"], "Wait: read b.md instead", "I feel sad"]
    assert len(set(sessions(tap))) == 1


async def test_the_samples_note_alone_goes_with_the_results_and_the_agents_turn_goes_on(backend: BackendClient, tap: Tap) -> None:
    chat = ChatSample(backend, tap.agent, [READ], lambda call: "the notes")
    with trio.fail_after(GUARD):
        answer = await chat.ask('use tool vscode_tools::read_notes with {"path": "a.md"}', context="a.md")
    assert answer.text() == f"OK: the notes\n{NOTE}"
    assert len(tap.requests("session/prompt")) == 1, "one agent turn: the note was no new prompt"


async def test_an_edited_message_forks_and_the_forks_follow_ups_keep_its_session_unprimed(backend: BackendClient, tap: Tap) -> None:
    """The chat sample drops markers and the `<context>` messages of earlier turns: an edit forks the
    conversation (a new session primed with what came before), and the fork's later turns go on in
    the fork's session, as they do in Copilot."""
    chat = ChatSample(backend, tap.agent, [READ], lambda call: "the notes")
    with trio.fail_after(GUARD):
        await chat.ask('use tool vscode_tools::read_notes with {"path": "a.md"}', context="a.md")
        await chat.ask("Hello", context="b.md")
        await chat.edit(1, "I feel sad", context="c.md")
        follow = await chat.ask("I remember my dog")
        last = await chat.ask("My mother hates me")
    assert follow.error is None and last.error is None
    original, _, fork, *later = sessions(tap)
    assert fork != original and later == [fork, fork], "the fork's turns go on in the fork's session"
    assert len(tap.requests("session/new")) == 2
    prompts = tap.prompts()
    assert EARLIER in prompts[2], "the fork's first turn is primed with what came before it"
    assert prompts[3:] == ["I remember my dog", "My mother hates me"], "its follow-ups are not"
