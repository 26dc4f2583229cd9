"""Messages compared by meaning (pure): the canonical form two renderings of one message share."""

from __future__ import annotations

from protocol.history.canonical import canonical, normalise
from protocol.vscode.lm import DataPart, Message, TextPart, ToolCallPart, ToolResultPart


def assistant(*parts: object) -> Message:
    return Message("assistant", tuple(TextPart(p) if isinstance(p, str) else p for p in parts))  # type: ignore[misc]


def test_tool_call_inputs_compare_as_json_not_as_text() -> None:
    a = assistant(ToolCallPart("t1", "read", {"b": 1, "a": [1, 2]}))
    b = assistant(ToolCallPart("t1", "read", {"a": [1, 2], "b": 1}))
    assert canonical(a) == canonical(b)
    assert canonical(assistant(ToolCallPart("t1", "read", None))) == canonical(assistant(ToolCallPart("t1", "read", {})))


def test_normalise_merges_text_and_strips_bookkeeping_keeping_a_tool_results_own_parts_apart() -> None:
    message = Message(
        "user",
        (
            TextPart("a"),
            TextPart("b"),
            DataPart("cache_control", "x"),
            TextPart("c"),
            ToolResultPart("t", (TextPart("r1"), DataPart("cache_control", "x"), TextPart("r2"))),
        ),
    )
    # A result's first text part is the tool's own (hooks append theirs): it stays apart, but two
    # renderings that split the text differently are still the same message.
    assert normalise(message).content == (TextPart("abc"), ToolResultPart("t", (TextPart("r1"), TextPart("r2"))))
    joined = Message("user", (TextPart("abc"), ToolResultPart("t", (TextPart("r1r2"),))))
    assert canonical(normalise(message)) == canonical(joined)
