"""Conversation matching (pure): clean continuations, cancellations, and no hijacking."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.conversations import Conversations, MarkerAt, Route
from protocol.forking import Opening, opening_after_restart
from protocol.markers import Marker
from protocol.matching import Conversation, canonical, normalise
from protocol.lm import (
    ChatParams,
    DataPart,
    ElizaAgent,
    Message,
    Options,
    ProcessAgent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    to_wire,
)

AGENT = ElizaAgent(deterministic=True)


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def assistant(*parts: object) -> Message:
    return Message("assistant", tuple(TextPart(p) if isinstance(p, str) else p for p in parts))  # type: ignore[misc]


class Model:
    """History's own transitions (`protocol.conversations.Conversations`), driven without trio: route a
    request, hand its turn over, record the reply."""

    def __init__(self) -> None:
        self.conversations = Conversations()

    def request(self, messages: list[Message], reply: list[object] | None = None, agent: object = AGENT) -> tuple[Conversation, int, bool]:
        params = ChatParams("m", tuple(to_wire(m) for m in messages), agent, Options(()))  # type: ignore[arg-type]
        route = self.conversations.route(params, None)  # no markers: the content decides
        assert isinstance(route, Route) and route.error is None, route
        self.conversations.begin(route.record, route.read)
        for part in reply or []:
            self.conversations.reply(route.record, TextPart(part) if isinstance(part, str) else part)  # type: ignore[arg-type]
        return route.record.state, route.start, route.cancelled


def test_a_reply_accepted_by_the_next_request_continues_the_conversation() -> None:
    model = Model()
    first, _, _ = model.request([user("Hello")], ["How do you do."])
    again, start, cancelled = model.request([user("Hello"), assistant("How do you do."), user("I am sad")])
    assert again is first and start == 2 and not cancelled


def test_consumers_rebuild_assistant_messages_their_own_way() -> None:
    model = Model()
    call = ToolCallPart("sym-1", "symposium-agent-action", {"kind": "execute"})
    first, _, _ = model.request([user("run ls")], ["Let me ", "check. ", call, "More text after the call."])
    # Copilot: marker and cache_control bookkeeping, all text first in one part, then the tool calls.
    rebuilt = Message(
        "assistant",
        (
            DataPart("stateful_marker", "eA=="),
            ThinkingPart("hmm"),
            TextPart("Let me check. More text after the call."),
            ToolCallPart("sym-1", "symposium-agent-action", {"kind": "execute"}),
        ),
    )
    result = Message("user", (ToolResultPart("sym-1", (TextPart("Approved"),)), DataPart("cache_control", "ZXBoZW1lcmFs")))
    again, start, cancelled = model.request([Message("system", (TextPart("You are Copilot v2"),)), user("run ls"), rebuilt, result])
    assert again is first and start == 3 and not cancelled


def test_a_changed_system_message_is_not_a_new_conversation() -> None:
    model = Model()
    first, _, _ = model.request([Message("system", (TextPart("v1"),)), user("Hi")], ["Hello."])
    again, _, _ = model.request([Message("system", (TextPart("v2, re-rendered"),)), user("Hi"), assistant("Hello."), user("Bye")])
    assert again is first


def test_a_rejected_reply_is_a_cancelled_match_that_prompts_only_what_is_new() -> None:
    model = Model()
    call = ToolCallPart("sym-1", "symposium-agent-action", {})
    first, _, _ = model.request([user("U1")], ["ok"])
    model.request([user("U1"), assistant("ok"), user("run rm")], [call])
    # The user rejected: VS Code drops the tool call and sends the next prompt.
    again, start, cancelled = model.request([user("U1"), assistant("ok"), user("run rm"), user("never mind")])
    assert again is first and cancelled and start == 3  # only "never mind" is new to the agent


def test_a_stopped_reply_rebuilt_differently_is_skipped_not_resent() -> None:
    model = Model()
    first, _, _ = model.request([user("tell me a story")], ["Once upon a ti"])
    again, start, cancelled = model.request([user("tell me a story"), assistant("Once upon a time (cancelled)"), user("shorter please")])
    assert again is first and cancelled and start == 2


def test_clean_beats_cancelled_and_longest_prefix_wins() -> None:
    model = Model()
    a, _, _ = model.request([user("same start")], ["reply A"])
    b, _, _ = model.request([user("other")], ["reply B"])
    again, _, cancelled = model.request([user("same start"), assistant("reply A"), user("go on")])
    assert again is a and not cancelled
    assert b is not a


def test_no_hijack_a_fresh_conversation_never_matches_another_one() -> None:
    model = Model()
    first, _, _ = model.request([user("conversation one")], ["partial rep"])
    second, start, cancelled = model.request([user("a different first message")])
    assert second is not first and start == 0 and not cancelled


def test_an_edited_earlier_message_is_a_new_conversation() -> None:
    model = Model()
    first, _, _ = model.request([user("U1")], ["A1"])
    model.request([user("U1"), assistant("A1"), user("U2")], ["A2"])
    fork, start, _ = model.request([user("U1 edited"), assistant("A1"), user("U2")])
    assert fork is not first and start == 0


def test_a_retry_of_the_last_message_is_a_new_conversation() -> None:
    model = Model()
    first, _, _ = model.request([user("U1")], ["A1"])
    retry, start, _ = model.request([user("U1")])
    assert retry is not first and start == 0


def test_agents_do_not_share_conversations() -> None:
    model = Model()
    other = ProcessAgent("x", "x")
    first, _, _ = model.request([user("Hi")], ["Hello"])
    second, _, _ = model.request([user("Hi"), assistant("Hello"), user("more")], agent=other)
    assert second is not first


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


# Property: interleaved conversations never cross ----------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    order=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=40),
    stop=st.lists(st.booleans(), min_size=40, max_size=40),
)
def test_random_interleavings_of_conversations_never_cross(order: list[int], stop: list[bool]) -> None:
    """Several consumers' conversations advanced in random order, some replies dropped.

    Always: a request lands only on a conversation whose history (what its agent saw) the
    request really continues. Conversations 2 and 3 have unique openings, so they must also
    land on their own conversation, with cancelled set exactly when their reply was dropped.
    Conversations 0 and 1 open identically; after a dropped reply only a marker ("Identity and
    markers" in docs/DESIGN.md) could tell them apart, so for them only the first rule is checked.
    """
    model = Model()
    histories: dict[int, list[Message]] = {}
    seen: dict[str, list[Message]] = {}  # conversation id → every message its agent was sent
    owner: dict[int, Conversation] = {}
    pending_reply: dict[int, str] = {}
    for step, who in enumerate(order):
        history = histories.setdefault(who, [])
        expected_cancel = False
        if who in pending_reply:
            reply = pending_reply.pop(who)
            if stop[step]:
                expected_cancel = True
            else:
                history.append(assistant(reply))
        text = "shared opening" if not history and who < 2 else f"c{who} s{step}"
        history.append(user(text))
        reply = f"reply to c{who} at {step}"
        conversation, _, cancelled = model.request(list(history), [reply])
        if conversation.id in seen:
            before = seen[conversation.id]
            assert history[: len(before)] == before, f"step {step}: landed on a conversation it does not continue"
        if who >= 2:
            if who in owner:
                assert conversation is owner[who], f"step {step}: conversation {who} landed elsewhere"
                assert cancelled == expected_cancel
            else:
                assert conversation.id not in seen, f"step {step}: a new conversation hijacked another"
        seen[conversation.id] = list(history)
        owner[who] = conversation
        pending_reply[who] = reply


def _seen(messages: list[Message]) -> int:
    from protocol.matching import SEEN_START, canonical, conversation_step, message_digest

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


def test_a_request_ending_with_an_answer_starts_nothing_new() -> None:
    """A late "Continue" of a turn that has ended (docs/DESIGN.md, "History and matching"): no new
    session primed with the history and nothing to answer, which would start the task over."""
    params = ChatParams("m", tuple(to_wire(m) for m in [user("Mark every item done"), assistant("All done.")]), AGENT, Options(()))  # type: ignore[arg-type]
    refused = Conversations().route(params, None)
    assert not isinstance(refused, Route) and "continues a turn that has ended" in refused.message


def test_after_a_restart_only_a_marker_of_the_saved_sessions_last_turn_resumes_it() -> None:
    """A marker of a conversation this process does not hold: its first turn numbers on from the
    marker, and the saved session goes on only when the marker is of the last turn it was handed."""
    history = [user("Hello"), assistant("How do you do."), user("I feel sad")]
    params = ChatParams("m", tuple(to_wire(m) for m in history), AGENT, Options(()))  # type: ignore[arg-type]
    probe = Conversations().route(params, None)
    assert isinstance(probe, Route)
    prefix = probe.read.seen[1][0]  # what the user saw before the marker's reply

    def first_turn(marker_turn: int) -> Route:
        conversations = Conversations()
        route = conversations.route(params, MarkerAt(1, Marker("ab" * 16, marker_turn, prefix, 0)))
        assert isinstance(route, Route) and route.started and route.record.resumable
        assert route.context == tuple(history[:2])  # the history, to prime a new session with
        conversations.begin(route.record, route.read)
        return route

    assert first_turn(1).record.seq == 2
    def resumes_saved(seq: int, saved_turn: int | None) -> bool:
        return opening_after_restart(seq, saved_turn, None) is Opening.RESUME

    assert resumes_saved(first_turn(1).record.seq, saved_turn=1)  # the chat shows what the session holds
    assert not resumes_saved(first_turn(1).record.seq, saved_turn=2)  # the chat lost turn 2: never resumed past it
    assert not resumes_saved(first_turn(2).record.seq, saved_turn=1)  # the store lost a save: the session lacks a turn shown
    assert resumes_saved(first_turn(1).record.seq, saved_turn=None)  # not known (an earlier store): as before
