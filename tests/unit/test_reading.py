"""Reading a request (pure): what the previous request of the conversation already taught us is reused."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.history.canonical import prefix_digests, root
from protocol.history.reading import opening, read_messages
from protocol.shared.structuring import WireError
from protocol.vscode.lm import ElizaAgent

ROOT = root(ElizaAgent())


def text(role: str, value: str, *extra: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "value": value}, *extra]}


CACHE = {"type": "data", "mimeType": "cache_control", "data": "ZXBoZW1lcmFs"}


def history(turns: int, system: str = "sys 1") -> list[dict[str, Any]]:
    raw = [text("system", system)]
    for turn in range(turns):
        raw += [text("user", f"question {turn}"), text("assistant", f"answer {turn}")]
    return raw


def test_a_request_reads_the_same_with_or_without_what_came_before() -> None:
    first = read_messages(history(3), ROOT)
    # The next request: a re-rendered system message, a moved cache breakpoint, one more turn.
    raw = [*history(3, system="sys 2"), text("user", "question 3", CACHE)]
    raw[4] = text("assistant", "answer 1")  # the same value, another object
    again = read_messages(raw, ROOT, [first])
    alone = read_messages(raw, ROOT)
    assert again == alone
    assert again.messages[1] is first.messages[1]  # reused, not read again
    assert again.messages[0].text() == "sys 2"  # its own system message, not the earlier one
    assert [i for i, d in again.prefixes()] == [i for i, d in prefix_digests(ROOT, alone.messages)]
    assert again.prefixes() == prefix_digests(ROOT, alone.messages)


def test_what_differs_is_read_afresh() -> None:
    first = read_messages(history(3), ROOT)
    edited = history(3)
    edited[3] = text("user", "question one, edited")
    again = read_messages(edited, ROOT, [first])
    assert again == read_messages(edited, ROOT)
    assert again.messages[3].text() == "question one, edited"
    assert again.after[3] == first.after[3] and again.after[4] != first.after[4]


def test_another_agents_reading_is_not_reused() -> None:
    first = read_messages(history(2), ROOT)
    other = root(ElizaAgent(deterministic=True))
    assert read_messages(history(2), other, [first]).after[0] == other


def test_bad_messages_are_refused_with_their_wire_path_even_after_a_reused_run() -> None:
    first = read_messages(history(2), ROOT)
    bad = [*history(2), {"role": "user", "content": [{"type": "text", "value": 3}]}]
    with pytest.raises(WireError, match=r"messages\[5\]\.content\[0\]\.value"):
        read_messages(bad, ROOT, [first])


def test_the_opening_ignores_system_messages() -> None:
    assert opening(history(2, "a")) == opening(history(3, "b")) != opening([*history(2)[1:2], text("assistant", "x")])
