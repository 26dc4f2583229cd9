"""The pure parts of backpressure (docs/DESIGN.md, "Reliability"): the window a producer waits
on, parts of a bounded size, and a reply too long to come back not kept. The wire tests are
`tests/wire/test_backpressure.py`."""

from __future__ import annotations

import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from actors.shared.flow import Window, part_cost
from protocol.history.conversation_index import Conversation
from protocol.turn.rendering import merge_parts
from protocol.vscode.lm import MarkerPart, TextPart, ThinkingPart, ToolCallPart


async def test_a_full_window_holds_the_producer_until_the_consumer_gives_back() -> None:
    window = Window(10)
    window.spend(6)
    await window.room()  # room left: no wait
    window.spend(6)
    assert window.full
    passed = trio.Event()

    async def producer() -> None:
        await window.room()
        passed.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(producer)
        await trio.testing.wait_all_tasks_blocked()
        assert not passed.is_set()
        window.refund(6)
        await passed.wait()


async def test_a_closed_window_never_holds_anyone() -> None:
    window = Window(1)
    window.spend(100)
    window.close()
    assert not window.full
    await window.room()
    window.spend(100)
    await window.room()


def test_refunds_never_go_below_nothing() -> None:
    window = Window(10)
    window.refund(5)
    window.spend(10)
    assert window.full  # a refund of what a stale turn spent lent no credit


def test_only_text_counts() -> None:
    assert part_cost(TextPart("abc")) == 3 and part_cost(ThinkingPart("ab")) == 2
    assert part_cost(MarkerPart("m")) == 0 and part_cost(ToolCallPart("c", "t", {"x": "y" * 100})) == 0


@given(st.lists(st.one_of(st.text(max_size=30).map(TextPart), st.text(max_size=30).map(ThinkingPart), st.just(MarkerPart("m"))), max_size=30), st.integers(1, 20))
def test_parts_are_merged_and_split_but_nothing_is_lost(parts: list, limit: int) -> None:
    out = merge_parts(parts, limit)
    assert all(len(p.value) <= limit for p in out if isinstance(p, (TextPart, ThinkingPart)))

    def runs(items: list) -> list:
        merged: list = []
        for p in items:
            if merged and isinstance(p, (TextPart, ThinkingPart)) and type(merged[-1][0]) is type(p):
                merged[-1][1].append(p.value)
            else:
                merged.append((p, [p.value] if isinstance(p, (TextPart, ThinkingPart)) else []))
        return [(type(p), "".join(v)) if v or isinstance(p, (TextPart, ThinkingPart)) else p for p, v in merged]

    assert runs(out) == runs(parts)


def test_a_huge_part_is_split() -> None:
    assert merge_parts([TextPart("x" * 10)], 4) == [TextPart("xxxx"), TextPart("xxxx"), TextPart("xx")]
    assert merge_parts([TextPart("x" * 10)]) == [TextPart("x" * 10)]  # no limit: as before


def test_a_reply_too_long_to_come_back_is_not_kept() -> None:
    conversation = Conversation("c", agent=None, committed=1, inputs=[])  # type: ignore[arg-type]
    conversation.add_reply(TextPart("a" * 6), 10)
    short_head = conversation.head()
    conversation.add_reply(ToolCallPart("c", "t", {}), 10)
    conversation.add_reply(TextPart("b" * 6), 10)
    assert conversation.overlong
    assert conversation.reply == [ToolCallPart("c", "t", {})]  # its text is let go, the calls stay
    assert conversation.head() not in (short_head, conversation.seen())
    conversation.add_reply(TextPart("c"), 10)
    assert conversation.reply == [ToolCallPart("c", "t", {})]
    conversation.begin_turn(2, [])
    assert not conversation.overlong and conversation.reply_chars == 0
