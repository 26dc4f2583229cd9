"""What an agent's turns cost as plain values (protocol/acp/usage.py): the usage meter, and the bytes per
token learned from it. The catalog that keeps them across restarts: tests/actors/test_stores.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol.acp.usage import TurnUsage, UsageMeter, bytes_per_token


def test_a_turn_calibrates_by_how_much_the_context_grew() -> None:
    meter = UsageMeter()
    meter.start_turn([{"type": "text", "text": "Hello"}])
    meter.observe({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi."}})
    meter.observe({"sessionUpdate": "usage_update", "used": 5001, "size": 1_000_000})
    meter.observe({"sessionUpdate": "usage_update", "used": 5010, "size": 1_000_000, "cost": {"amount": 0.02, "currency": "USD"}})
    first = meter.finish({"inputTokens": 5000, "outputTokens": 10})
    assert (first.used, first.size, first.cost, first.sample) == (5010, 1_000_000, (0.02, "USD"), None), "too small to say anything"

    meter.start_turn([{"type": "text", "text": "x" * 1197}])
    meter.observe({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done."}})
    meter.observe({"sessionUpdate": "usage_update", "used": 5612, "size": 1_000_000})
    second = meter.finish(None)
    assert second.sample == (1202, 602)
    assert "context 5,612 of 1,000,000 tokens" in second.describe()

    meter.start_turn([{"type": "text", "text": "y" * 400}])
    meter.observe({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read"})
    meter.observe({"sessionUpdate": "usage_update", "used": 9000})
    assert meter.finish(None).sample is None, "tool input and output are tokens whose text we never saw"


def test_a_first_turn_calibrates_by_its_output_tokens_where_the_agent_reports_them() -> None:
    meter = UsageMeter()
    meter.start_turn([{"type": "text", "text": "Hello"}])
    meter.observe({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "t" * 100}})
    meter.observe({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a" * 200}})
    assert meter.finish({"inputTokens": 9000, "outputTokens": 100}).sample == (300, 100)
    silent = UsageMeter()
    silent.start_turn([])
    assert silent.finish(None) == TurnUsage() and not TurnUsage().reported


def test_bytes_per_token_stay_within_sense() -> None:
    assert bytes_per_token(None) == 4.0
    assert bytes_per_token((1000.0, 500.0)) == 2.0
    assert bytes_per_token((1000.0, 10_000.0)) == 1.0 and bytes_per_token((10_000.0, 10.0)) == 8.0


_CHUNK_CONTENT = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(st.text(max_size=5), st.integers())}),
    st.fixed_dictionaries({"type": st.just("resource"), "resource": st.fixed_dictionaries({"text": st.text(max_size=5)})}),
    st.none(),
)
_METERED = st.one_of(
    st.fixed_dictionaries({"sessionUpdate": st.sampled_from(["agent_message_chunk", "agent_thought_chunk"]), "content": _CHUNK_CONTENT}),
    st.fixed_dictionaries({"sessionUpdate": st.just("usage_update"), "used": st.integers(0, 10_000), "size": st.integers(0, 10_000)}),
    st.just({"sessionUpdate": "tool_call", "toolCallId": "t"}),
)


@given(st.lists(_METERED, max_size=10))
def test_a_batch_of_updates_is_metered_as_each_one(updates: list[dict]) -> None:
    one_by_one, batched = UsageMeter(), UsageMeter()
    for update in updates:
        one_by_one.observe(update)
    batched.observe_all(updates)
    assert vars(batched) == vars(one_by_one)
