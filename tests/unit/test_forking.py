"""Forks (pure): an edit of history goes on in the agent's own session at the last turn the chat
keeps where the agent can fork there, else in a new session primed (docs/DESIGN.md, "Forks")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protocol.acp.agent_facts import facts_for, parse_agent_facts
from protocol.acp.capabilities import read_initialize
from protocol.history import forking
from protocol.history.conversations import Conversations, MarkerAt, Route
from protocol.history.forking import (
    Fork,
    ForkPoint,
    Opening,
    fork_point,
    forks_after_marker,
    last_message_id,
    opening_after_restart,
)
from protocol.vscode.lm import ChatParams, ElizaAgent, Message, Options, TextPart, to_wire

AGENT = ElizaAgent(deterministic=True)

CLAUDE = {
    "agentCapabilities": {"sessionCapabilities": {"fork": {}, "resume": {}}},
    "agentInfo": {"name": "@agentclientprotocol/claude-agent-acp", "version": "0.100.0"},
}
CODEX = {"agentCapabilities": {"sessionCapabilities": {"resume": {}}}, "agentInfo": {"name": "codex-acp", "version": "0.16.0"}}
FORKS_WHOLE = {"agentCapabilities": {"sessionCapabilities": {"fork": {}}}, "agentInfo": {"name": "another-agent", "version": "9.0.0"}}
# The agents known to fork at a message: the shipped table (extension/catalogue/overrides.json).
FACTS, _ = parse_agent_facts(json.loads((Path(__file__).parents[2] / "extension" / "catalogue" / "overrides.json").read_text()))


def message_fork(raw: dict[str, Any]) -> Any:
    initialized = read_initialize(raw)
    return forking.message_fork(initialized, facts_for(FACTS, initialized))


def fork_at(raw: dict[str, Any], point: ForkPoint | None) -> Fork | None:
    initialized = read_initialize(raw)
    return forking.fork_at(initialized, facts_for(FACTS, initialized), point)


def continue_in_fork(raw: dict[str, Any], session_id: str) -> Fork | None:
    return forking.continue_in_fork(read_initialize(raw), session_id)


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def assistant(text: str) -> Message:
    return Message("assistant", (TextPart(text),))


def test_the_agent_forks_at_a_message_only_when_it_declares_session_fork_and_is_known_to_read_a_fork_point() -> None:
    assert message_fork(CLAUDE) is not None
    assert message_fork(CODEX) is None  # no session/fork: primed
    assert message_fork(FORKS_WHOLE) is None  # forks whole sessions only: a fork would hold the turns left behind
    no_fork = {**CLAUDE, "agentCapabilities": {"sessionCapabilities": {"resume": {}}}}
    assert message_fork(no_fork) is None  # known to read the point, but this build declares no fork
    older = {**CLAUDE, "agentInfo": {"name": "@agentclientprotocol/claude-agent-acp", "version": "0.99.3"}}
    assert message_fork(older) is None  # before the version tested: not known to
    assert message_fork({**CLAUDE, "agentInfo": {"name": "@agentclientprotocol/claude-agent-acp", "version": "0.101.0-beta.1"}}) is not None
    assert message_fork({"agentCapabilities": {"sessionCapabilities": {"fork": True}}, "agentInfo": CLAUDE["agentInfo"]}) is None  # not ACP's shape


def test_a_fork_names_the_message_it_ends_with_as_the_agent_reads_it() -> None:
    point = ForkPoint("s1", "msg_01")
    assert fork_at(CLAUDE, point) == Fork("s1", {"jetbrains": {"air": {"fork": {"version": 1, "messageId": "msg_01"}}}})
    assert fork_at(CODEX, point) is None
    assert fork_at(CLAUDE, None) is None


def test_a_continued_session_is_forked_whole_wherever_the_agent_declares_session_fork() -> None:
    assert continue_in_fork(FORKS_WHOLE, "s1") == Fork("s1", {}, must=True)
    assert continue_in_fork(CLAUDE, "s1") == Fork("s1", {}, must=True)
    assert continue_in_fork(CODEX, "s1") is None  # resumed, one chat at a time


def test_a_turn_leaves_a_fork_point_only_when_its_prompt_ended_with_a_message_the_agent_named() -> None:
    updates = [
        {"sessionUpdate": "agent_thought_chunk", "messageId": "msg_a", "content": {"type": "text", "text": "hm"}},
        {"sessionUpdate": "tool_call", "toolCallId": "t", "messageId": "not a message"},
        {"sessionUpdate": "agent_message_chunk", "messageId": "msg_b", "content": {"type": "text", "text": "done"}},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "."}},
        {"sessionUpdate": "agent_message_chunk", "messageId": "x" * 1000},
    ]
    assert last_message_id(updates, None) == "msg_b"
    assert last_message_id([], "msg_a") == "msg_a"
    assert fork_point("s", "msg_b", ended_turn=True) == ForkPoint("s", "msg_b")
    assert fork_point("s", "msg_b", ended_turn=False) is None  # a card or a tool call: the session holds more
    assert fork_point("s", None, ended_turn=True) is None  # no message ids: nothing names the place


def test_only_a_request_whose_newest_marker_is_on_its_last_answer_forks_there() -> None:
    history = [user("one"), assistant("1"), user("two")]
    assert forks_after_marker(history, 1)
    # Another model answered after it (a model switched back): its turn is not in the agent's session.
    assert not forks_after_marker([user("one"), assistant("1"), user("two"), assistant("other model"), user("three")], 1)


def test_after_a_restart_an_older_marker_forks_at_its_saved_point_and_never_resumes_past_it() -> None:
    point = ForkPoint("s", "m")
    assert opening_after_restart(4, saved_turn=3, point=point) is Opening.RESUME  # the marker of its last turn
    assert opening_after_restart(4, saved_turn=None, point=None) is Opening.RESUME  # not known: as before
    assert opening_after_restart(2, saved_turn=3, point=point) is Opening.FORK  # turns 2 and 3 are gone from the chat
    assert opening_after_restart(2, saved_turn=3, point=None) is Opening.PRIME  # no point saved for turn 1
    assert opening_after_restart(5, saved_turn=3, point=point) is Opening.PRIME  # the store lost a save


class Chat:
    """History's transitions driven as Copilot drives them: each request carries the markers of
    the replies before it; each reply ends with the fork point the agent's turn left."""

    def __init__(self) -> None:
        self.conversations = Conversations()
        self.markers: dict[int, MarkerAt] = {}  # index of the assistant message → its marker

    def send(self, messages: list[Message], point: ForkPoint | None) -> Route:
        params = ChatParams("m", tuple(to_wire(m) for m in messages), AGENT, Options(()))  # type: ignore[arg-type]
        found = max((m for i, m in self.markers.items() if i < len(messages)), key=lambda m: m.index, default=None)
        route = self.conversations.route(params, found)
        assert isinstance(route, Route) and route.error is None
        self.conversations.begin(route.record, route.read)
        self.conversations.reply(route.record, TextPart(f"answer {route.record.conversation_turn}"))
        self.conversations.completed(route.record, point)
        self.markers[len(messages)] = MarkerAt(len(messages), self.conversations.marker(route.record))
        return route


def test_an_edited_second_message_forks_the_conversation_at_turn_ones_point() -> None:
    chat = Chat()
    first = chat.send([user("one")], ForkPoint("s1", "m1"))
    turns = [user("one"), assistant("answer 1")]
    chat.send([*turns, user("two")], ForkPoint("s1", "m2"))
    chat.send([*turns, user("two"), assistant("answer 2"), user("three")], ForkPoint("s1", "m3"))
    edited = chat.send([*turns, user("two, edited")], None)
    assert edited.started and edited.record is not first.record
    assert edited.fork == ForkPoint("s1", "m1")  # the agent's session as it was after turn 1
    assert edited.new == (user("two, edited"),) and edited.context == tuple(turns)  # the context primes where it cannot fork
    assert edited.after_marker


def test_an_edit_after_a_turn_without_a_fork_point_is_primed() -> None:
    chat = Chat()
    chat.send([user("one")], None)  # turn 1 ended waiting on VS Code (a card): no fork point
    turns = [user("one"), assistant("answer 1")]
    chat.send([*turns, user("two")], ForkPoint("s1", "m2"))
    chat.send([*turns, user("two"), assistant("answer 2"), user("three")], None)
    edited = chat.send([*turns, user("two, edited")], None)
    assert edited.started and edited.fork is None


def test_retry_of_the_last_message_forks_at_the_turn_before() -> None:
    chat = Chat()
    chat.send([user("one")], ForkPoint("s1", "m1"))
    turns = [user("one"), assistant("answer 1")]
    chat.send([*turns, user("two")], ForkPoint("s1", "m2"))
    chat.send([*turns, user("two"), assistant("answer 2"), user("three")], ForkPoint("s1", "m3"))
    retried = chat.send([*turns, user("two"), assistant("answer 2"), user("three")], None)
    assert retried.started and retried.fork == ForkPoint("s1", "m2")
