"""Fork points (pure): where a turn leaves its agent session, and which request may go on from one
(docs/DESIGN.md, "Forks"). Whether the agent forks there is the opening's plan: tests/unit/test_opening.py."""

from __future__ import annotations

from protocol.history.conversations import Conversations, MarkerAt, Route
from protocol.history.forking import ForkPoint, fork_point, forks_after_marker, last_message_id
from protocol.vscode.lm import ChatParams, ElizaAgent, Message, Options, TextPart, to_wire

AGENT = ElizaAgent(deterministic=True)


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def assistant(text: str) -> Message:
    return Message("assistant", (TextPart(text),))


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
