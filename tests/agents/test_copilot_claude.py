"""The Copilot emulator's scenarios with Claude Code (offline, fake Anthropic API)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import trio
from acp.schema import ForkSessionRequest

from protocol.vscode.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, tool_result, user
from tests.support.acp_validate import validate_payload
from tests.support.claude import ClaudeCode
from tests.support.copilot import Copilot
from tests.support.fake_anthropic import reply, text, tool_use
from tests.support.real_agent import GUARD

WEATHER = {"name": "get_weather", "description": "The weather in a city", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}


def sessions(claude: ClaudeCode) -> list[str]:
    return [m["params"]["sessionId"] for m in claude.requests("session/prompt")]


async def test_a_rerendered_multi_turn_conversation_keeps_claude_codes_session(backend: BackendClient, claude: ClaudeCode) -> None:
    claude.api.script(reply(text("Hi there.")), reply(text("Sorry to ", "hear that.")), reply(text("Noted.")))
    copilot = Copilot(backend, claude.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        await copilot.ask("I feel sad")
        third = await copilot.ask("Thanks")
    assert third.text() == "Noted."
    assert len(set(sessions(claude))) == 1 and len(claude.requests("session/new")) == 1
    assert claude.prompts() == ["Hello", "I feel sad", "Thanks"]
    # The model saw the whole conversation, kept by the agent's own session.
    assert claude.api.main[2].user_texts()[-3:] == ["Hello", "I feel sad", "Thanks"]


async def test_compact_is_claude_codes_own_and_the_next_message_goes_on_in_its_session(backend: BackendClient, claude: ClaudeCode) -> None:
    """docs/how-it-works.md, "Compaction": Copilot's /compact asks the model for a summary; Claude Code
    compacts its own session with its own /compact, and its summary is the answer. The next message,
    whose history holds that summary in place of the turns, goes on in the same ACP session, unprimed."""
    claude.api.script(reply(text("Hi.")), reply(text("<analysis>\nA greeting.\n</analysis>\n<summary>\nWe said hello.\n</summary>")), reply(text("Still here.")), reply(text("Forked.")))
    copilot = Copilot(backend, claude.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        summary = await copilot.summarise(compact=True)
        after = await copilot.ask("Are you there?")
        copilot.edit(0, "")
        fork = await copilot.ask("Start over")
    assert "We said hello." in summary.text()
    assert after.text() == "Still here." and fork.text() == "Forked."
    used = sessions(claude)
    assert used[0] == used[1] == used[2]  # the summary and the turn after it: the conversation's own session
    assert used[3] != used[0]  # and the fork a new one
    assert claude.prompts()[1:3] == ["/compact", "Are you there?"], "compacted by the agent, then prompted unprimed"
    assert len(claude.requests("session/new")) == 2  # the conversation's and the fork's: none for the summary


async def test_a_turn_past_copilots_request_limit_keeps_claude_codes_session(backend: BackendClient, claude: ClaudeCode) -> None:
    """docs/DESIGN.md, "Identity and markers": after Continue, Copilot's history of a long turn lacks
    the round pending at the limit; the user's turns and the agent's answer are the same, so the next
    message goes on in the agent's own session, unprimed, with every round the agent really had."""
    rounds = 5
    calls = [reply(tool_use("mcp__vscode_tools__get_weather", {"city": f"city {n}"})) for n in range(rounds)]
    claude.api.script(*calls, reply(text("All checked.")), reply(text("Five cities.")))
    copilot = Copilot(backend, claude.agent, tools=[WEATHER])
    with trio.fail_after(GUARD):
        result = await copilot.ask("Check the weather everywhere")
        while result.tool_calls():
            result = await copilot.answer_tools({"get_weather": "mild"})
        assert result.text() == "All checked."
        copilot.drop_tool_round(2)
        after = await copilot.ask("How many cities?")
    assert after.text() == "Five cities."
    assert claude.prompts() == ["Check the weather everywhere", "How many cities?"], "no new session primed with the history"
    assert len(set(sessions(claude))) == 1 and len(claude.requests("session/new")) == 1
    assert len(claude.api.main[-1].tool_results()) == rounds  # the model still has every round, natively


async def test_after_a_restart_claude_code_never_sees_a_turn_the_reloaded_chat_lost(claude: ClaudeCode) -> None:
    """docs/DESIGN.md, "Identity and markers": Copilot writes a chat's history a little after each
    turn, so a window reloaded at once can come back without the last one. The restarted backend
    must not resume Claude Code's saved session past the turn the chat shows: it forks it at the
    turn the chat shows (docs/DESIGN.md, "Forks"), so turn 1 stays the agent's own."""
    claude.api.script(reply(text("Hi there.")), reply(text("Forty-two noted.")), reply(text("You said hello.")))
    async with BackendClient.spawn() as first_backend:
        copilot = Copilot(first_backend, claude.agent)
        with trio.fail_after(GUARD):
            await copilot.ask("Hello")
            await copilot.ask("Remember the secret number 42")
    copilot.rounds = copilot.rounds[:1]  # the reloaded chat: turn 2 was never written
    async with BackendClient.spawn() as second_backend:
        copilot.backend = second_backend
        with trio.fail_after(GUARD):
            answer = await copilot.ask("What did I say?")
    assert answer.text() == "You said hello."
    last = claude.api.main[-1]
    said = "\n".join(last.user_texts() + last.assistant_texts())
    assert "42" not in said and "Forty-two" not in said  # turn 2 is gone for the model too
    assert "Hello" in said and "Hi there." in said  # turn 1 is not...
    assert "Earlier in this conversation" not in said  # ...and is the session's own, not a transcript
    assert not claude.requests("session/resume") and not claude.requests("session/load")
    [fork] = claude.requests("session/fork")
    assert fork["params"]["sessionId"] == sessions(claude)[0]
    assert fork["params"]["_meta"]["jetbrains"]["air"]["fork"]["version"] == 1


async def test_after_a_restart_claude_code_resumes_its_own_session_unprimed(claude: ClaudeCode) -> None:
    claude.api.script(reply(text("Hi there.")), reply(text("Forty-two noted.")), reply(text("You said 42.")))
    async with BackendClient.spawn() as first_backend:
        copilot = Copilot(first_backend, claude.agent)
        with trio.fail_after(GUARD):
            await copilot.ask("Hello")
            await copilot.ask("Remember the secret number 42")
    async with BackendClient.spawn() as second_backend:
        copilot.backend = second_backend
        with trio.fail_after(GUARD):
            answer = await copilot.ask("What did I say?")
    assert answer.text() == "You said 42."
    first_session = sessions(claude)[0]
    assert [m["params"]["sessionId"] for m in claude.requests("session/resume") + claude.requests("session/load")] == [first_session]
    assert sessions(claude) == [first_session] * 3
    # The model has the two turns natively, in the agent's own session: no priming text.
    assert claude.api.main[-1].user_texts()[-3:] == ["Hello", "Remember the secret number 42", "What did I say?"]


def model_text(request: object) -> str:
    """Everything a model request holds as text: its messages' text blocks and tool results."""
    return json.dumps(request.messages)  # type: ignore[attr-defined]


async def test_an_edited_second_message_goes_on_in_claude_codes_own_session_forked_after_turn_one(backend: BackendClient, claude: ClaudeCode) -> None:
    """docs/DESIGN.md, "Forks": after an edit of the second of three messages, Claude Code's model
    has turn 1 as it really was (its own Bash call and result, natively), nothing of the old turns 2
    and 3, and no transcript; the original chat's session still answers."""
    looks = reply(text("Let me look."), tool_use("Bash", {"command": f"ls {claude.cwd}", "description": "List the files"}))
    claude.api.script(
        looks,
        reply(text("There is one file.")),
        reply(text("Old second answer.")),
        reply(text("Old third answer.")),
        reply(text("Edited second answer."), answers="Edited second question"),
        reply(text("The original goes on."), answers="Fourth question"),
    )
    (claude.cwd / "notes.txt").write_text("hello\n")
    copilot = Copilot(backend, claude.agent)
    with trio.fail_after(GUARD):
        first = await copilot.ask("What is here?")
        for _ in range(3):  # Claude Code may ask before it runs ls: Allow
            if not first.tool_calls():
                break
            first = await copilot.allow()
        assert first.text().endswith("There is one file."), first.parts
        second_round = len(copilot.rounds)
        await copilot.ask("Old second question")
        await copilot.ask("Old third question")
        original = Copilot(backend, claude.agent)
        original.rounds = copy.deepcopy(copilot.rounds)
        copilot.edit(second_round, "")
        edited = await copilot.ask("Edited second question")
        assert edited.text() == "Edited second answer.", edited.parts
        went_on = await original.ask("Fourth question")
    assert went_on.text() == "The original goes on.", went_on.parts
    [bash] = looks.call_ids()
    at_edit = next(r for r in claude.api.main if "Edited second question" in model_text(r))
    # Turn 1, natively: Claude Code's own tool_use and its tool_result, with the same id.
    assert [(u["id"], u["name"]) for u in at_edit.tool_uses()] == [(bash, "Bash")]
    assert [r["tool_use_id"] for r in at_edit.tool_results()] == [bash]
    assert "notes.txt" in json.dumps(at_edit.tool_results())
    seen = model_text(at_edit)
    assert "There is one file." in seen
    for gone in ("Old second", "Old third", "Earlier in this conversation"):
        assert gone not in seen, gone
    # A fork of the first session at turn 1's last message; no new session, no transcript.
    [fork] = claude.requests("session/fork")
    validate_payload(ForkSessionRequest, fork["params"], "session/fork")
    first_session = claude.requests("session/prompt")[0]["params"]["sessionId"]
    assert fork["params"]["sessionId"] == first_session
    assert fork["params"]["_meta"]["jetbrains"]["air"]["fork"]["version"] == 1
    assert len(claude.requests("session/new")) == 1
    assert not any("Earlier in this conversation" in p for p in claude.prompts())
    # The original chat went on in its own session, with its three turns.
    last = claude.requests("session/prompt")[-1]["params"]["sessionId"]
    assert last == first_session
    at_fourth = next(r for r in claude.api.main if "Fourth question" in model_text(r))
    assert "Old third" in model_text(at_fourth) and "Edited second" not in model_text(at_fourth)


async def test_claude_codes_commands_are_listed_and_reach_it_as_typed(backend: BackendClient, claude: ClaudeCode) -> None:
    """docs/usage.md, "The agent's commands": the commands Claude Code announces (its own, and one of
    the user's: `~/.claude/commands/greet.md`) are listed with how to type them; one typed in Copilot's
    chat reaches it as typed, alone, also one whose name Copilot takes (`//compact`); a `/word` that is
    no command of the agent's stays what the user wrote."""
    commands = claude.home / ".claude" / "commands"
    commands.mkdir(parents=True, exist_ok=True)
    (commands / "greet.md").write_text("---\ndescription: Greets someone\n---\nSay a warm greeting to $ARGUMENTS.\n")
    claude.api.script(reply(text("Hi.")), reply(text("<summary>\nWe said hello.\n</summary>")), reply(text("A path.")), reply(text("Hello, world!")))
    copilot = Copilot(backend, claude.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        listed = (await backend.agent_commands(claude.agent))["commands"]
        compacted = await copilot.ask("//compact keep the greeting")
        plain = await copilot.ask("/usr/bin is a path?")
        greeted = await copilot.ask("/greet world")
    typed = {c["name"]: c["typed"] for c in listed}  # type: ignore[index, union-attr]
    assert typed.get("compact") == "//compact" and typed.get("greet") == "/greet", listed
    assert "We said hello." in compacted.text()
    assert claude.prompts()[1] == "/compact keep the greeting"
    assert claude.prompts()[2] == "/usr/bin is a path?" and plain.text() == "A path."  # what the user wrote, answered by the model
    assert claude.prompts()[3] == "/greet world" and greeted.text() == "Hello, world!"
    assert "Say a warm greeting to world." in "\n".join(claude.api.main[-1].user_texts())  # Claude Code ran its command
    assert len(set(sessions(claude))) == 1


async def test_a_task_subagents_calls_are_grouped_under_the_task_and_its_words_are_not_the_answer(backend: BackendClient, claude: ClaudeCode) -> None:
    """docs/usage.md, "Subagents": Claude Code's Task subagent works in the same prompt; its tool calls
    show under the Task's heading, and what it says goes to its parent, never into the answer."""
    task = {"description": "List the files", "prompt": "List the files here.", "subagent_type": "general-purpose", "run_in_background": False}
    claude.api.script(
        reply(tool_use("Task", task)),
        reply(text("Looking."), tool_use("Glob", {"pattern": "*"})),
        reply(text("There are some files.")),
        reply(text("Done: some files.")),
    )
    copilot = Copilot(backend, claude.agent)
    with trio.fail_after(GUARD):
        result = await copilot.ask("What files are here?")
    answer = result.text()
    assert "**List the files** · subagent" in answer, answer
    heading = answer.index("**List the files** · subagent")
    assert answer.index("\n> ", heading) > heading  # the subagent's Glob, quoted under it
    assert "List the files · subagent, 1 call" in answer  # its end, with the report it gave its parent
    assert answer.endswith("Done: some files.")
    assert "Looking." not in answer  # the subagent's words went to its parent


async def test_claude_codes_session_gets_the_workspaces_second_folder_and_writes_there(backend: BackendClient, claude: ClaudeCode, tmp_path: Path) -> None:
    """docs/usage.md, "Workspace folders": Claude Code declares `additionalDirectories`; a two-folder
    workspace's second folder reaches its session/new, and its own write there lands."""
    second = tmp_path / "lib"
    second.mkdir()
    target = second / "notes.txt"
    claude.api.script(reply(tool_use("Write", {"file_path": str(target), "content": "written in the second folder\n"})), reply(text("Written.")))
    history, folders, tools = [user("Write the notes in the lib folder")], [str(claude.cwd), str(second)], [AGENT_ACTION_TOOL_DEF]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd), folders=folders)
        [call] = ask.tool_calls()  # its permission to write, as for a write in its first folder
        history += [ask.assistant_message(), tool_result(call["toolCallId"], AGENT_ACTION_APPROVED)]
        result = await backend.chat(history, agent=claude.agent, tools=tools, cwd=str(claude.cwd), folders=folders)
    [opened] = claude.requests("session/new")
    assert opened["params"].get("additionalDirectories") == [str(second)]
    assert target.read_text() == "written in the second folder\n", result.text()
    assert result.text().endswith("Written.")
