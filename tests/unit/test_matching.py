"""Conversation matching (pure): clean continuations, cancellations, and no hijacking."""

from __future__ import annotations

import base64

from hypothesis import example, given, settings
from hypothesis import strategies as st

from protocol.history.canonical import canonical, normalise
from protocol.history.conversation_index import Conversation
from protocol.history.conversations import Conversations, MarkerAt, Record, Route
from protocol.history.markers import Marker
from protocol.turn.opening import Opening, opening_after_restart
from protocol.vscode.lm import (
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
    """History's own transitions (`protocol.history.conversations.Conversations`), driven without trio: route a
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

    assert first_turn(1).record.conversation_turn == 2
    def resumes_saved(conversation_turn: int, saved_turn: int | None) -> bool:
        return opening_after_restart(conversation_turn, saved_turn, None) is Opening.RESUME

    assert resumes_saved(first_turn(1).record.conversation_turn, saved_turn=1)  # the chat shows what the session holds
    assert not resumes_saved(first_turn(1).record.conversation_turn, saved_turn=2)  # the chat lost turn 2: never resumed past it
    assert not resumes_saved(first_turn(2).record.conversation_turn, saved_turn=1)  # the store lost a save: the session lacks a turn shown
    assert resumes_saved(first_turn(1).record.conversation_turn, saved_turn=None)  # not known (an earlier store): as before


# Consumers other than Copilot (docs/how-it-works.md, "Consumers") ---------------------------------

INSTRUCTIONS = user("Instructions:\n- The user will ask a question, or ask you to perform a task...")
NOTE = user("Above is the result of calling one or more tools. The user cannot see the results, so you should explain them to the user if referencing them in your answer.")


def result(call_id: str, text: str) -> Message:
    return Message("user", (ToolResultPart(call_id, (TextPart(text),)),))


def noted(call_id: str, text: str) -> Message:
    """A result as the agent is shown it when the consumer's note follows it: the note after the
    tool's own text (docs/how-it-works.md, "Text after tool results")."""
    return Message("user", (ToolResultPart(call_id, (TextPart(text), TextPart(NOTE.text()))),))


def echoed(call: ToolCallPart, text: str = "") -> Message:
    """prompt-tsx's rendering of our tool call: the input as the JSON text of the function's
    arguments, no marker, the round's text first."""
    import json

    return assistant(*([text] if text else []), ToolCallPart(call.tool_call_id, call.tool_name, json.dumps(call.parameters, indent=1)))


class Routed(Model):
    """The model, keeping each request's route: what of it the agent is prompted with."""

    def route(self, messages: list[Message], reply: list[object] | None = None, found: MarkerAt | None = None, agent: object = AGENT) -> Route:
        params = ChatParams("m", tuple(to_wire(m) for m in messages), agent, Options(()))  # type: ignore[arg-type]
        route = self.conversations.route(params, found)
        assert isinstance(route, Route) and route.error is None, route
        self.conversations.begin(route.record, route.read)
        for part in reply or []:
            self.conversations.reply(route.record, TextPart(part) if isinstance(part, str) else part)  # type: ignore[arg-type]
        return route

    def marked(self, route: Route) -> MarkerAt:
        """Our marker at the end of `route`'s reply, as the message after the request holds it."""
        return MarkerAt(len(route.read.messages), self.conversations.marker(route.record))


def test_an_echoed_call_with_its_input_as_a_json_string_is_the_same_call() -> None:
    ours = assistant(ToolCallPart("sym-1", "find", {"pattern": "*.ts", "max": [1, 2]}))
    assert canonical(ours) == canonical(assistant(ToolCallPart("sym-1", "find", '{ "max": [1,2],\n "pattern": "*.ts" }')))
    assert canonical(ours) != canonical(assistant(ToolCallPart("sym-1", "find", '{"pattern": "*.js", "max": [1, 2]}')))
    # A string that is not a JSON object is a string input, compared as it is.
    assert canonical(assistant(ToolCallPart("sym-1", "find", "[1]"))) != canonical(assistant(ToolCallPart("sym-1", "find", [1])))
    assert canonical(assistant(ToolCallPart("sym-1", "find", "{" * 100_000))) is not None  # nested past reading: a string


def test_the_chat_samples_tool_loop_and_its_follow_up_stay_in_one_conversation() -> None:
    """Microsoft's chat sample, `@tools` (prompt-tsx): its instructions as a user message, a
    `<context>` message before the prompt, our calls echoed with JSON-string inputs and no marker,
    a note after the results; the follow-up leaves out the context message and the final answer."""
    model = Routed()
    context = user("<context>\n/w/app.ts:\n```\nconsole.log(1)\n```\n</context>")
    ask = user("How many tabs are open?")
    first_call = ToolCallPart("sym-a", "chat-tools-sample_tabCount", {"tabGroup": 0})
    second_call = ToolCallPart("sym-b", "chat-tools-sample_findFiles", {"pattern": "**/*.ts"})
    first = model.route([INSTRUCTIONS, context, ask], ["Let me count. ", first_call])
    rounds = [INSTRUCTIONS, context, ask, echoed(first_call, "Let me count. "), result("sym-a", "3 tabs")]
    second = model.route([*rounds, NOTE], [second_call])
    assert second.record is first.record and not second.started
    assert second.new == (noted("sym-a", "3 tabs"),), "the note goes with the result: the agent's turn goes on"
    rounds += [echoed(second_call), result("sym-b", "a.ts")]
    third = model.route([*rounds, NOTE], ["There are 3 tabs."])
    assert third.record is first.record and third.new == (noted("sym-b", "a.ts"),)
    follow = user("And how many files?")
    again = model.route([INSTRUCTIONS, ask, *rounds[3:], NOTE, follow], ["One."])
    assert again.record is first.record and not again.started
    assert again.new == (follow,) and again.context == ()
    # and on: the answer shown this time (no tool round), the follow-up after it
    more = user("Thanks")
    last = model.route([INSTRUCTIONS, ask, *rounds[3:], NOTE, follow, assistant("One."), more])
    assert last.record is first.record and last.new == (more,)


def test_a_tool_round_followed_by_a_new_turn_of_the_users_is_the_user_moving_on() -> None:
    model = Routed()
    call = ToolCallPart("sym-a", "edit", {"n": 1})
    first = model.route([user("Edit it")], [call])
    wrapped = user("<context>\nThe current date is today.\n</context>\n<userRequest>\nStop there\n</userRequest>")
    moved = model.route([user("Edit it"), assistant(call), result("sym-a", "ok"), wrapped])
    assert moved.record is first.record
    assert moved.new == (result("sym-a", "ok"), normalise(wrapped)), "Copilot's new message at its request limit stays the user's"
    # Plain text after results that do not answer every call waited on is not a note either.
    model = Routed()
    calls = [ToolCallPart("sym-x", "read", {}), ToolCallPart("sym-y", "read", {})]
    model.route([user("Read both")], calls)
    partial = model.route([user("Read both"), assistant(*calls), result("sym-x", "x"), NOTE])
    assert partial.new == (result("sym-x", "x"), NOTE)


def test_a_note_in_the_same_message_as_the_results_is_the_consumers_too() -> None:
    model = Routed()
    call = ToolCallPart("sym-a", "read", {"path": "a"})
    first = model.route([user("Read a")], [call])
    together = Message("user", (ToolResultPart("sym-a", (TextPart("contents"),)), TextPart(NOTE.text())))
    goes_on = model.route([user("Read a"), echoed(call), together])
    assert goes_on.record is first.record and goes_on.new == (noted("sym-a", "contents"),)


def test_what_the_user_types_after_tool_results_is_their_turn_never_a_note() -> None:
    """Text after the results that is not a known note is the user's (a turn that ended at a tool
    round, then a new message): it is the turn's, after the results, and the conversation holds the
    request as it was sent, so the next request continues it cleanly and sends nothing back."""
    for after in ([user("Wait: do not delete anything")], [NOTE, user("Wait: do not delete anything")]):
        model = Routed()
        call = ToolCallPart("sym-a", "symposium-agent-action", {"title": "Run `rm -rf build`"})
        first = model.route([user("Clean up")], [call])
        history = [user("Clean up"), echoed(call), result("sym-a", "approved"), *after]
        words = model.route(history, ["Nothing deleted."])
        assert words.record is first.record and not words.cancelled
        shown = noted("sym-a", "approved") if NOTE in after else result("sym-a", "approved")
        assert words.new == (shown, user("Wait: do not delete anything"))
        follow = model.route([*history, assistant("Nothing deleted."), user("Thanks")])
        assert follow.record is first.record and follow.context == () and follow.new == (user("Thanks"),) and not follow.cancelled
    # In the same message as the results, too.
    model = Routed()
    call = ToolCallPart("sym-a", "read", {"path": "a"})
    model.route([user("Read a")], [call])
    together = Message("user", (ToolResultPart("sym-a", (TextPart("contents"),)), TextPart("Read b instead.")))
    words = model.route([user("Read a"), echoed(call), together])
    assert words.new == (result("sym-a", "contents"), user("Read b instead."))


def test_call_ids_never_let_one_chat_continue_another() -> None:
    """The hijack and mixing rules hold for matching by call ids: ids of two conversations in one
    request name neither; a request whose questions differ from the conversation's is not it,
    whatever ids it carries; an edited or retried last question after a tool round is a fork."""
    model = Routed()
    a_call, b_call = ToolCallPart("sym-a", "read", {"p": "a"}), ToolCallPart("sym-b", "read", {"p": "b"})
    a = model.route([INSTRUCTIONS, user("<context>a</context>"), user("Read a")], [a_call])
    b = model.route([INSTRUCTIONS, user("<context>b</context>"), user("Read b")], [b_call])
    model.route([INSTRUCTIONS, user("<context>a</context>"), user("Read a"), echoed(a_call), result("sym-a", "A"), NOTE], ["A says A."])
    model.route([INSTRUCTIONS, user("<context>b</context>"), user("Read b"), echoed(b_call), result("sym-b", "B"), NOTE], ["B says B."])
    a_history = [INSTRUCTIONS, user("Read a"), echoed(a_call), result("sym-a", "A"), NOTE]
    b_history = [user("Read b"), echoed(b_call), result("sym-b", "B"), NOTE]
    mixed = model.route([*a_history, *b_history, user("Compare them")])
    assert mixed.started and mixed.record not in (a.record, b.record)
    copied = model.route([INSTRUCTIONS, user("Read c"), echoed(a_call), result("sym-a", "A"), NOTE, user("More")])
    assert copied.started and copied.record is not a.record, "A's ids under another question: not A"
    retried = model.route([INSTRUCTIONS, user("Read b")])
    assert retried.started and retried.record is not b.record
    edited = model.route([*a_history, user("Now read c")], ["C."])
    assert edited.record is a.record, "a new turn after A's"
    fork = model.route([*a_history, user("Now read d instead")])
    assert fork.started and fork.record is not a.record, "the last question edited: a fork"


def test_a_fork_in_a_chat_without_markers_keeps_its_conversation_and_crosses_no_other() -> None:
    """An edited message in a chat that drops markers and context messages (the chat sample's
    `@tools`) forks the conversation; the fork's follow-ups continue it, though the newest of our
    call ids they carry was made by the conversation it came from. The no-crossing rules hold."""
    model = Routed()
    call = ToolCallPart("sym-a", "read", {"p": "a"})
    ask = user("Read a")
    first = model.route([INSTRUCTIONS, user("<context>a</context>"), ask], [call])
    rounds = [echoed(call), result("sym-a", "A"), NOTE]
    model.route([INSTRUCTIONS, user("<context>a</context>"), ask, *rounds], ["A says A."])
    assert model.route([INSTRUCTIONS, ask, *rounds, user("<context>b</context>"), user("Hello")], ["Hi."]).record is first.record
    fork = model.route([INSTRUCTIONS, ask, *rounds, user("<context>c</context>"), user("I feel sad")], ["Why sad?"])
    assert fork.started and fork.record is not first.record
    shown = [INSTRUCTIONS, ask, *rounds, user("I feel sad"), assistant("Why sad?")]
    follow = model.route([*shown, user("My dog")], ["Tell me more."])
    assert follow.record is fork.record and not follow.started and follow.context == () and follow.new == (user("My dog"),)
    again = model.route([*shown, user("My dog"), assistant("Tell me more."), user("He ran away")], ["Where?"])
    assert again.record is fork.record and again.new == (user("He ran away"),)
    # The conversation it came from is still itself, with its own history.
    assert model.route([INSTRUCTIONS, ask, *rounds, user("Hello"), assistant("Hi."), user("Bye")]).record is first.record
    # Another fork of the same point is a conversation of its own; each goes on as itself.
    other = model.route([INSTRUCTIONS, ask, *rounds, user("I feel happy")], ["Why happy?"])
    assert other.started and other.record not in (first.record, fork.record)
    assert model.route([INSTRUCTIONS, ask, *rounds, user("I feel happy"), assistant("Why happy?"), user("Sun")]).record is other.record
    # A request mixing the fork's history with another chat's ids is neither's.
    b_call = ToolCallPart("sym-b", "read", {"p": "b"})
    b = model.route([INSTRUCTIONS, user("Read b")], [b_call])
    mixed = model.route([*shown, echoed(b_call), result("sym-b", "B"), NOTE, user("Compare")])
    assert mixed.started and mixed.record not in (first.record, fork.record, b.record)
    # A call the fork waits on cannot be answered from another chat's history.
    pending = ToolCallPart("sym-p", "symposium-agent-action", {"title": "Run `rm -rf build`"})
    asks = model.route([*shown, user("My dog"), assistant("Tell me more."), user("He ran away"), assistant("Where?"), user("Clean up")], [pending])
    assert asks.record is fork.record
    elsewhere = model.route([INSTRUCTIONS, ask, *rounds, user("Hello"), echoed(pending), result("sym-p", "approved")])
    assert elsewhere.started and elsewhere.record is not fork.record
    # Conversations forgotten (released) leave nothing of their ids behind.
    for record in list(model.conversations._records.values()):
        model.conversations.forget(record)
    assert model.conversations._calls == {} and model.conversations._heirs == {}


def test_a_new_message_at_copilots_request_limit_and_the_message_after_it_stay_in_the_conversation() -> None:
    """Copilot at its request limit: the user sends a new message while a call waits; Copilot runs
    it and sends its result ahead of the message. In the request after that, the round that was
    pending at the limit is gone from the history (Copilot Chat 0.67)."""
    model = Routed()
    ask = user("<userRequest>\nMark every item done\n</userRequest>")
    calls = [ToolCallPart(f"sym-{n}", "replace_string_in_file", {"n": n}) for n in range(3)]
    turn = model.route([ask], ["Marking item 0. ", calls[0]])
    history = [ask, assistant("Marking item 0. ", calls[0]), result("sym-0", "ok")]
    for n in (1, 2):
        found = model.marked(turn)
        turn = model.route(history, [f"Marking item {n}. ", calls[n]], found=found)
        history += [assistant(f"Marking item {n}. ", calls[n]), result(f"sym-{n}", "ok")]
    stop = user("<userRequest>\nStop there\n</userRequest>")
    stopped = model.route([*history, stop], ["Stopped."], found=model.marked(turn))
    assert stopped.record is turn.record and not stopped.started
    dropped = history[:-2]  # the round pending at the limit
    after = user("<userRequest>\nHow many are done?\n</userRequest>")
    found = MarkerAt(len(dropped) + 1, model.conversations.marker(stopped.record))
    next_turn = model.route([*dropped, stop, assistant("Stopped."), after], ["Three."], found=found)
    assert next_turn.record is turn.record and not next_turn.started and next_turn.context == ()
    assert next_turn.new == (normalise(after),)
    # Without markers too (a consumer that drops them), and with "Stopped." rendered otherwise:
    # the call ids say which conversation it is.
    unmarked = model.route([*dropped, stop, assistant("Stopped (shown)."), after, assistant("Three."), user("Thanks")])
    assert unmarked.record is turn.record and unmarked.new == (user("Thanks"),)


@settings(max_examples=100, deadline=None)
@given(
    order=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=30),
    calls=st.lists(st.booleans(), min_size=30, max_size=30),
    edits=st.lists(st.booleans(), min_size=30, max_size=30),
)
# A turn with a tool call, one without, that one edited, then the fork's follow-up.
@example(order=[0] * 5, calls=[True] + [False] * 29, edits=[False] * 3 + [True] + [False] * 26)
def test_chat_sample_conversations_interleaved_never_cross(order: list[int], calls: list[bool], edits: list[bool]) -> None:
    """Several chats of a consumer rendering history as the chat sample does (no marker, notes after
    results, a turn with tool rounds rendered again without its context message and without its
    answer), advanced in random order, each reply a tool call or an answer, the user now and then
    editing a chat's last question (a fork): each request lands on its own chat's conversation (a
    fork on a new one), never on another's. Chats 0 and 1 ask the same first question.

    A turn without tool calls is rendered again without its context message only where the history
    before it holds our call ids: without a marker and without them, only the content can tell a
    conversation, and it must then be rendered as it was sent."""
    model = Routed()
    done: dict[int, list[tuple[list[Message], bool]]] = {}  # each chat's earlier turns, as it renders them again; with tool rounds?
    asking: dict[int, tuple[list[Message], list[Message]]] = {}  # the turn in progress: what it asked, its rounds
    owner: dict[int, Record] = {}
    for step, who in enumerate(order):
        forking = who not in asking and bool(done.get(who)) and edits[step]
        if forking:
            done[who].pop()  # VS Code's edit: that turn and every later one are gone
        earlier = [m for turn, _ in done.get(who, []) for m in turn]
        if who not in asking:
            first = who < 2 and not done.get(who) and not forking
            question = "Which files?" if first else f"chat {who} {'edits' if forking else 'asks'} at {step}"
            asking[who] = ([user(f"<context>{who}</context>"), user(question)], [])
        asked, rounds = asking[who]
        messages = [INSTRUCTIONS, *earlier, *asked, *rounds, *([NOTE] if rounds else [])]
        if calls[step]:
            call = ToolCallPart(f"sym-{who}-{step}", "find", {"step": step})
            route = model.route(messages, [call])
            rounds += [echoed(call), result(call.tool_call_id, f"found {step}")]
        else:
            route = model.route(messages, [f"answer {step}"])
            del asking[who]
            ids_before = any(with_rounds for _, with_rounds in done.get(who, []))
            rendered = [asked[-1], *rounds, NOTE] if rounds else [*(asked[-1:] if ids_before else asked), assistant(f"answer {step}")]
            done.setdefault(who, []).append((rendered, bool(rounds)))
        if who in owner and not forking:
            assert route.record is owner[who], f"step {step}: chat {who} landed elsewhere"
        else:
            assert route.record not in owner.values(), f"step {step}: a new chat (or a fork) took another's conversation"
        owner[who] = route.record


def _image(seed: int, size: int) -> DataPart:
    png = b"\x89PNG\r\n\x1a\n" + bytes([seed]) * size
    return DataPart("image/png", base64.b64encode(png).decode())


def _data_held_whole(conversations: Conversations, conversation: Conversation) -> list[str]:
    record = conversations._records[conversation.id]
    assert record.read is not None
    messages = [*record.read.messages, *conversation.inputs]
    return [p.data for m in messages for p in m.content if isinstance(p, DataPart)]


def test_idle_conversations_keep_their_images_by_digest_beyond_the_bound_and_still_continue() -> None:
    size = 64 * 1024
    kept = 3 * (size * 4 // 3 + 16)  # three conversations' images whole, as base64
    model = Model()
    model.conversations = Conversations(data_kept=kept)
    asked = [Message("user", (TextPart(f"What is in picture {i}?"), _image(i, size))) for i in range(5)]
    states = [model.request([asked[i]], [f"Picture {i}."])[0] for i in range(5)]
    assert [bool(_data_held_whole(model.conversations, s)) for s in states] == [False, False, True, True, True]
    for i in (0, 3):  # released or not, each still goes on where it was
        state, start, cancelled = model.request([asked[i], assistant(f"Picture {i}."), user("And the colours?")], ["Grey."])
        assert (state.id, start, cancelled) == (states[i].id, 2, False)
    assert _data_held_whole(model.conversations, states[0]), "the conversation that took a turn holds its image whole again"
    assert not _data_held_whole(model.conversations, states[2]), "and the least recently active gave theirs up"
