"""A consumer's summarisation answered in the agent's own session, and the summary that later stands
for the turns naming that conversation again (protocol/history/compaction.py; docs/how-it-works.md,
"Compaction"); the agent's commands read and typed (protocol/acp/commands.py,
protocol/history/agent_commands.py)."""

from __future__ import annotations

from protocol.acp.commands import commands_from_json, read_commands
from protocol.history.agent_commands import spelling, typed_command
from protocol.history.compaction import compaction_prompt, compacts, sent_summary_key, summarisation, summary_kept, summary_key
from protocol.history.conversations import Conversations, Route
from protocol.vscode.lm import ChatParams, ElizaAgent, Message, Options, TextPart, to_wire

AGENT = ElizaAgent(deterministic=True)
ASK = "Summarize the conversation history so far, paying special attention to the most recent agent commands and tool results that triggered this summarization."
SUMMARISER = "Your task is to create a comprehensive, detailed summary of the entire conversation that captures all essential information."


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def system(text: str) -> Message:
    return Message("system", (TextPart(text),))


def assistant(text: str) -> Message:
    return Message("assistant", (TextPart(text),))


def test_copilots_summariser_is_recognised_with_compacts_instructions() -> None:
    asked = summarisation([system(SUMMARISER + "\n## Additional instructions from the user:\nfocus on the tests"), user("Hello"), assistant("Hi."), user(ASK)])
    assert asked is not None and asked.copilots and asked.ask == ASK and asked.instructions == "focus on the tests"
    inline = summarisation([system("You are an AI programming assistant."), user("Hello"), user("The conversation has grown too large for the context window and must be compacted now.\n\n...")])
    assert inline is not None and inline.copilots
    assert summarisation([system("You are an AI programming assistant."), user("Hello"), assistant("Hi."), user("How are you?")]) is None


def test_the_agent_compacts_with_its_own_command_where_it_has_one_else_summarises() -> None:
    asked = summarisation([system(SUMMARISER + "\n## Additional instructions from the user: keep the plan"), user(ASK)])
    assert asked is not None
    assert compaction_prompt(asked, frozenset({"compact", "review"})) == [{"type": "text", "text": "/compact keep the plan"}]
    assert compaction_prompt(asked, frozenset({"review"})) == [{"type": "text", "text": ASK}]
    assert compacts([{"type": "text", "text": "/compact keep the plan"}]) and not compacts([{"type": "text", "text": "/compaction"}])


def test_the_summary_copilot_keeps_names_the_answer_it_came_from() -> None:
    answer = "<analysis>thinking</analysis>\n<summary>\nWe said hello.\n</summary>"
    assert summary_kept(answer) == "We said hello."
    sent = user('<conversation-summary>\nWe said hello.\nIf you need specific details from before compaction, use the read_file tool at: "/t.jsonl"\n</conversation-summary>')
    assert sent_summary_key(sent) == summary_key("We said hello.")
    assert sent_summary_key(user("We said hello.")) is None


def _params(messages: list[Message]) -> ChatParams:
    return ChatParams("m", tuple(to_wire(m) for m in messages), AGENT, Options(()))  # type: ignore[arg-type]


def _held(conversations: Conversations) -> Route:
    """A conversation held: "Hello" answered "Hi."."""
    route = conversations.route(_params([user("Hello")]), None)
    assert isinstance(route, Route)
    conversations.begin(route.record, route.read)
    conversations.reply(route.record, TextPart("Hi."))
    conversations.completed(route.record, None)
    return route


def test_a_summarisation_and_the_turn_after_it_go_on_in_the_same_conversation() -> None:
    conversations = Conversations()
    first = _held(conversations).record

    asking = conversations.route(_params([system(SUMMARISER), user("Hello"), assistant("Hi."), user(ASK)]), None)
    assert isinstance(asking, Route) and asking.record is first and not asking.started and asking.compaction is not None
    assert asking.new == (user(ASK),) and asking.context == ()
    conversations.begin(asking.record, asking.read)
    conversations.reply(asking.record, TextPart("<summary>We said hello.</summary>"))
    conversations.completed(asking.record, None)

    after = conversations.route(_params([system("You are an AI programming assistant."), user("<conversation-summary>\nWe said hello.\n</conversation-summary>"), user("Are you there?")]), None)
    assert isinstance(after, Route) and after.record is first and not after.started and after.compaction is None
    assert after.new == (user("Are you there?"),) and after.context == ()


def test_a_summarisation_of_no_conversation_held_is_a_throwaway() -> None:
    conversations = Conversations()
    route = conversations.route(_params([system(SUMMARISER), user("Hello"), assistant("Hi."), user(ASK)]), None)
    assert isinstance(route, Route) and route.record.throwaway and route.compaction is None


def test_another_consumers_summary_of_a_conversation_held_stays_out_of_its_agent_session() -> None:
    """A side request (a title, a summary for the consumer's own use) never stands in for the turns."""
    conversations = Conversations()
    route = _held(conversations)
    side = conversations.route(_params([user("Hello"), assistant("Hi."), user("Summarize this conversation in five words.")]), None)
    assert isinstance(side, Route) and side.record.throwaway and side.record is not route.record


def test_the_agents_commands_are_read_through_typed_values() -> None:
    update = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "compact", "description": "Compact the context", "input": {"hint": "instructions"}},
            {"name": "/review", "description": 7},
            {"name": "two words"},
            {"description": "no name"},
            "odd",
            {"name": "compact", "description": "a duplicate"},
        ],
    }
    commands = read_commands(update)
    assert commands is not None and [(c.name, c.description, c.hint) for c in commands] == [("compact", "Compact the context", "instructions"), ("review", "", "")]
    assert read_commands({"sessionUpdate": "plan"}) is None
    assert read_commands({"sessionUpdate": "available_commands_update", "availableCommands": None}) == ()
    assert commands_from_json([c.to_json() for c in commands]) == commands


def test_a_command_of_the_agents_typed_in_the_chat_goes_as_typed() -> None:
    names = frozenset({"compact", "release-notes"})
    assert typed_command("/release-notes since v1", names) == "/release-notes since v1"
    assert typed_command("//compact keep the plan", names) == "/compact keep the plan"
    assert typed_command("/unknown", names) is None and typed_command("release-notes", names) is None and typed_command("/", names) is None
    assert spelling("compact") == "//compact" and spelling("release-notes") == "/release-notes"
