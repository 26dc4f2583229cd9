"""Conversation identity that cannot be borrowed, over the real wire (Eliza as a recording agent).

A marker names a conversation and a point in it, but is honoured only after the history it
was given after; turns that came back without their markers (stopped replies, consumers
that drop them) do not fork the conversation; a follow-up to a reply still streaming
supersedes it.
"""

from __future__ import annotations

from typing import Any

import trio

from symposium.client import BackendClient, ChatResult, user
from tests.conftest import Tap

GUARD = 30


def with_marker(result: ChatResult) -> dict[str, Any]:
    """The reply as Copilot keeps it: its marker first, then its text."""
    [marker] = [p for p in result.parts if p["type"] == "marker"]
    return {"role": "assistant", "content": [marker, {"type": "text", "value": result.text()}]}


def sessions(tap: Tap) -> list[str]:
    return [m["params"]["sessionId"] for m in tap.requests("session/prompt")]


async def test_a_marker_copied_into_another_conversation_does_not_continue_its_own(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        a = [user("I feel sad")]
        a.append(with_marker(await backend.chat(a, agent=tap.agent)))
        b = [user("My mother hates me")]
        b.append(with_marker(await backend.chat(b, agent=tap.agent)))
        # Conversation A's history, with B's marker in A's reply.
        borrowed = [a[0], {"role": "assistant", "content": [b[1]["content"][0], a[1]["content"][1]]}, user("Hello")]
        answer = await backend.chat(borrowed, agent=tap.agent)
    assert answer.completed
    first_a, first_b, third = sessions(tap)
    assert third == first_a != first_b  # A went on (by its content), B's session was not touched
    assert tap.prompts()[-1] == "Hello"


async def test_turns_that_came_back_without_markers_do_not_fork_the_conversation(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        history = [user("Hello")]
        history.append(with_marker(await backend.chat(history, agent=tap.agent)))
        for text in ("I feel sad", "My mother hates me"):
            history.append(user(text))
            reply = await backend.chat(history, agent=tap.agent)
            history.append({"role": "assistant", "content": [{"type": "text", "value": reply.text()}]})  # its marker dropped
        history.append(user("I remember my dog"))
        last = await backend.chat(history, agent=tap.agent)
    assert last.completed
    assert len(set(sessions(tap))) == 1 and len(tap.requests("session/new")) == 1
    assert tap.prompts() == ["Hello", "I feel sad", "My mother hates me", "I remember my dog"]


async def test_a_follow_up_supersedes_the_reply_still_streaming_after_a_marker(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        history = [user("Hello")]
        history.append(with_marker(await backend.chat(history, agent=tap.agent)))
        history.append(user("count slowly to 500"))
        streaming = backend.start_chat(history, agent=tap.agent)
        await streaming.first_part.wait()
        # The consumer gave up on that reply without a cancel, and sends its next message.
        follow_up = await backend.chat([*history, streaming.assistant_message(), user("I feel sad")], agent=tap.agent)
        await streaming.done.wait()
    assert streaming.error is not None and streaming.error.code == -32800
    assert follow_up.text() == "Do you often feel sad?"
    assert len(set(sessions(tap))) == 1
    assert tap.prompts() == ["Hello", "count slowly to 500", "I feel sad"]


async def test_an_older_marker_of_a_released_conversation_still_forks(tap: Tap) -> None:
    async with BackendClient.spawn(["--log-level", "info", "vscodelm", "--max-conversations", "1"]) as backend:
        with trio.fail_after(GUARD):
            history = [user("Hello")]
            history.append(with_marker(await backend.chat(history, agent=tap.agent)))
            history.append(user("I feel sad"))
            history.append(with_marker(await backend.chat(history, agent=tap.agent)))
            await backend.chat([user("My mother hates me")], agent=tap.agent)  # the first conversation is released
            history.append(user("I remember my dog"))
            back = await backend.chat(history, agent=tap.agent)  # it comes back, primed
            # An edit of the second message: the first reply's marker, then another message.
            fork = await backend.chat([*history[:2], user("I feel happy")], agent=tap.agent)
    assert back.completed and fork.completed
    prompts = tap.requests("session/prompt")
    assert len({p["params"]["sessionId"] for p in prompts}) == 4  # first life, the other one, back, the fork
    assert prompts[-1]["params"]["prompt"][0]["text"].startswith("Earlier in this conversation:\n\nUser: Hello")
    assert prompts[-1]["params"]["prompt"][-1]["text"] == "I feel happy"
