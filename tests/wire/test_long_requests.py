"""Long requests over the real wire, read at the cost of what is new in them
(`protocol/shared/incremental_json.py`): they mean exactly what the same requests mean when read whole.

Each history here is far over the decoder's threshold, so every request after the first of
a conversation reuses the messages it repeats; the agent (Eliza, recording) must see what it
would see anyway: each turn's new message once, a fork primed, a lone surrogate replaced.
"""

from __future__ import annotations

from typing import Any

import trio

from protocol.shared import incremental_json as decoding
from symposium.client import BackendClient, ChatResult, user
from tests.conftest import Tap

GUARD = 30
LONG = "I remember a long story. " * (decoding.SMALLEST // 20)  # one message over the threshold


def kept(result: ChatResult) -> dict[str, Any]:
    """The reply as Copilot keeps it: its marker first, then its text."""
    [marker] = [p for p in result.parts if p["type"] == "marker"]
    return {"role": "assistant", "content": [marker, {"type": "text", "value": result.text()}]}


async def test_interleaved_long_conversations_each_go_on_with_only_their_new_messages(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        a, b = [user(LONG)], [user("My mother hates me. " + LONG)]
        for text in ("I feel sad", "I remember my dog", "Hello"):
            for history in (a, b):
                history.append(kept(await backend.chat(history, agent=tap.agent)))
                history.append(user(f"{text} ({len(history)})"))
        last_a = await backend.chat(a, agent=tap.agent)
        last_b = await backend.chat(b, agent=tap.agent)
    assert last_a.completed and last_b.completed
    prompts = tap.requests("session/prompt")
    assert len(prompts) == 8 and len(tap.requests("session/new")) == 2
    by_session: dict[str, list[str]] = {}
    for prompt in prompts:
        by_session.setdefault(prompt["params"]["sessionId"], []).append(prompt["params"]["prompt"][-1]["text"])
    assert sorted(by_session.values()) == sorted([
        [LONG, "I feel sad (2)", "I remember my dog (4)", "Hello (6)"],
        ["My mother hates me. " + LONG, "I feel sad (2)", "I remember my dog (4)", "Hello (6)"],
    ])


async def test_an_edited_long_history_forks_and_a_lone_surrogate_is_still_replaced(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        history = [user(LONG)]
        history.append(kept(await backend.chat(history, agent=tap.agent)))
        history.append(user("I feel sad"))
        history.append(kept(await backend.chat(history, agent=tap.agent)))
        edited = [*history[:2], user("I feel happy")]  # the second message edited: a fork
        fork = await backend.chat(edited, agent=tap.agent)
        broken = await backend.chat([*history, user("I feel \udc80 sad")], agent=tap.agent)
    assert fork.completed and broken.completed
    prompts = tap.requests("session/prompt")
    assert len({p["params"]["sessionId"] for p in prompts}) == 2
    assert prompts[2]["params"]["prompt"][0]["text"].startswith("Earlier in this conversation:")
    assert prompts[2]["params"]["prompt"][-1]["text"] == "I feel happy"
    assert prompts[3]["params"]["prompt"][-1]["text"] == "I feel \ufffd sad"
