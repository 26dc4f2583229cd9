"""What the user asked and the conversation the user sees (pure), however the consumer renders the rest."""

from __future__ import annotations

from protocol.history.canonical import canonical, message_digest, normalise
from protocol.history.user_turns import SEEN_START, conversation_step
from protocol.vscode.lm import Message, TextPart, ToolCallPart, ToolResultPart


def _seen(messages: list[Message]) -> int:
    state = SEEN_START
    for message in map(normalise, messages):
        form = canonical(message)
        state = conversation_step(state, message, None if form is None else message_digest(form))
    return state[0]


def test_the_conversation_the_user_sees_leaves_the_agents_tool_rounds_out() -> None:
    def round(n: int, text: str = "") -> list[Message]:
        call = Message("assistant", (TextPart(text), ToolCallPart(f"c{n}", "edit", {"n": n})))
        return [call, Message("user", (ToolResultPart(f"c{n}", (TextPart("ok"),)),))]

    ask, answer, next_ask = Message("user", (TextPart("Mark every item done"),)), Message("assistant", (TextPart("All done."),)), Message("user", (TextPart("How many?"),))
    whole = [ask, *round(1), *round(2, "working"), *round(3), answer, next_ask]
    dropped = [ask, *round(1), *round(3), answer, next_ask]  # Copilot after Continue
    assert _seen(whole) == _seen(dropped)
    assert _seen(whole) != _seen([Message("user", (TextPart("Mark some items done"),)), *round(1), answer, next_ask]), "an edited question"
    assert _seen(whole) != _seen([ask, *round(1), Message("assistant", (TextPart("Half done."),)), next_ask]), "another answer"
    assert _seen([ask, *round(1)]) == _seen([ask]), "a turn in progress: only what the user asked"
