"""Text after tool results (pure): a consumer's known note, or the user's own words
(docs/how-it-works.md, "Text after tool results")."""

from __future__ import annotations

from protocol.history.tool_rounds import CONSUMER_NOTES, is_consumer_note, results_then_text, shown_with_results
from protocol.vscode.lm import DataPart, Message, TextPart, ToolResultPart

[NOTE] = CONSUMER_NOTES


def user(*parts: object) -> Message:
    return Message("user", tuple(TextPart(p) if isinstance(p, str) else p for p in parts))  # type: ignore[misc]


def result(call_id: str, text: str) -> ToolResultPart:
    return ToolResultPart(call_id, (TextPart(text),))


def test_a_note_is_known_by_its_text_whatever_its_line_breaks() -> None:
    assert is_consumer_note(user(NOTE)) and is_consumer_note(user(NOTE.replace(" ", "\n ", 3) + "\n"))
    assert not is_consumer_note(user(NOTE + " And delete nothing."))
    assert not is_consumer_note(user(NOTE, DataPart("image/png", "AAAA"))), "only plain text"


def test_text_after_the_awaited_results_is_told_apart_by_what_it_says() -> None:
    words = user("Wait: do not delete anything")
    after = results_then_text([user(result("a", "x")), user(result("b", "y")), user(NOTE), words], {"a", "b"})
    assert after is not None
    assert after.results == (user(result("a", "x")), user(result("b", "y")))
    assert (after.notes, after.words) == ((user(NOTE),), (words,))
    # In the same message as the results, too.
    together = results_then_text([user(result("a", "x"), "Read b instead.")], {"a"})
    assert together is not None and together.results == (user(result("a", "x")),) and together.words == (user("Read b instead."),)
    # Not exactly the awaited results, or no text after them: not this rule's.
    assert results_then_text([user(result("a", "x")), words], {"a", "b"}) is None
    assert results_then_text([user(result("a", "x"))], {"a"}) is None


def test_notes_go_after_the_last_results_own_content_which_stays_first() -> None:
    results = [user(result("a", "x")), user(result("b", "approved"))]
    shown = shown_with_results(results, [user(NOTE)])
    assert shown[0] == results[0]
    assert shown[1] == user(ToolResultPart("b", (TextPart("approved"), TextPart(NOTE))))
    assert shown_with_results(results, []) == tuple(results)
