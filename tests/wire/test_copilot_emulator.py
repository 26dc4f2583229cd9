"""Conversation identity and permissions against a faithful emulation of Copilot Chat.

Each scenario checks what the agent was prompted with (only what it had not seen) and
whether the same agent session went on (or, for a fork and after a restart, that a new one
started primed with the conversation so far).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import trio

from symposium.client import BackendClient, process_agent
from tests.conftest import Tap
from tests.support.copilot import SUMMARY_ASK, Copilot

GUARD = 30
HERE = Path(__file__).parents[1] / "support"


def sessions(tap: Tap) -> list[str]:
    """The ACP session of every prompt, in order."""
    return [m["params"]["sessionId"] for m in tap.requests("session/prompt")]


async def test_a_multi_turn_conversation_keeps_one_session_despite_rerendering(backend: BackendClient, tap: Tap) -> None:
    copilot = Copilot(backend, tap.agent)
    with trio.fail_after(GUARD):
        first = await copilot.ask("Hello")
        assert [p["type"] for p in first.parts][-1] == "marker"
        await copilot.ask("think about my mother")
        await copilot.ask("I feel sad")
    assert tap.prompts() == ["Hello", "think about my mother", "I feel sad"]
    assert len(set(sessions(tap))) == 1


def permission_answers(tap: Tap) -> list[dict]:
    return [m["result"]["outcome"] for m in tap.messages("c2a") if "outcome" in (m.get("result") or {})]


async def test_the_agent_gets_what_the_user_typed_not_copilots_wrappers(backend: BackendClient, tap: Tap) -> None:
    copilot = Copilot(backend, tap.agent)
    copilot.editor = "/workspace/app.py"
    with trio.fail_after(GUARD):
        hello = await copilot.ask("Hello")
    assert hello.text().startswith("How do you do.")  # Eliza answered "Hello", not the reminders
    [prompt] = tap.requests("session/prompt")
    blocks = [b["text"] for b in prompt["params"]["prompt"]]
    assert blocks == ["<editorContext>\nThe user's current file is /workspace/app.py. \n</editorContext>", "Hello"]


async def test_the_permission_tool_is_offered_because_the_extension_lets_it_be_referenced(backend: BackendClient, tap: Tap) -> None:
    copilot = Copilot(backend, tap.agent)
    assert [t["name"] for t in copilot.tools] == ["symposium-agent-action"]
    with trio.fail_after(GUARD):
        ask = await copilot.ask("run ls")
    assert [c["toolName"] for c in ask.tool_calls()] == ["symposium-agent-action"]


async def test_allow_runs_the_action_in_the_same_agent_turn(backend: BackendClient, tap: Tap) -> None:
    copilot = Copilot(backend, tap.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        ask = await copilot.ask("run make test")
        assert ask.tool_calls()
        done = await copilot.allow()
        await copilot.ask("I feel sad")
    assert "I ran `make test`" in done.text()
    assert "✓ Run `make test`" in done.text()
    assert tap.prompts() == ["Hello", "run make test", "I feel sad"]
    assert len(set(sessions(tap))) == 1
    assert permission_answers(tap) == [{"outcome": "selected", "optionId": "allow"}]


async def test_skip_and_a_disabled_tool_reject_and_the_agent_goes_on(backend: BackendClient, tap: Tap) -> None:
    copilot = Copilot(backend, tap.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("run rm -rf /")
        skipped = await copilot.skip()
        await copilot.ask("run make install")
        disabled = await copilot.disabled()
        after = await copilot.ask("I feel sad")
    assert "You did not let me run `rm -rf /`" in skipped.text() and "✗ Run `rm -rf /`" in skipped.text()
    assert "You did not let me run `make install`" in disabled.text()
    assert after.text() == "Do you often feel sad?"
    assert tap.prompts() == ["run rm -rf /", "run make install", "I feel sad"]
    assert len(set(sessions(tap))) == 1
    assert permission_answers(tap) == [{"outcome": "selected", "optionId": "reject"}] * 2


async def test_an_abandoned_confirmation_then_a_new_message_goes_on_in_the_same_session(backend: BackendClient, tap: Tap) -> None:
    copilot = Copilot(backend, tap.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        await copilot.ask("run rm -rf /")
        after = await copilot.abandon_confirmation("I feel sad")
        again = await copilot.ask("I remember my dog")
    assert after.text() == "Do you often feel sad?"
    assert again.completed
    assert tap.prompts() == ["Hello", "run rm -rf /", "I feel sad", "I remember my dog"]
    assert len(set(sessions(tap))) == 1
    assert permission_answers(tap) == [{"outcome": "cancelled"}]  # answered after session/cancel
    assert len(tap.requests("session/cancel")) == 1


async def test_a_turn_rebuilt_from_markdown_with_another_editor_goes_on_in_the_same_session(backend: BackendClient, tap: Tap) -> None:
    copilot = Copilot(backend, tap.agent)
    copilot.editor = "/workspace/app.py"
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        await copilot.ask("run rm -rf /")
        copilot.rebuild_from_markdown()
        copilot.editor = "/workspace/other.py"  # the user moved to another file meanwhile
        after = await copilot.ask("I feel sad")
    assert after.text() == "Do you often feel sad?"
    assert [p.split("</editorContext> ")[-1] for p in tap.prompts()] == ["Hello", "run rm -rf /", "I feel sad"]
    assert len(set(sessions(tap))) == 1
    assert permission_answers(tap) == [{"outcome": "cancelled"}]


async def test_a_cancelled_turn_rebuilt_as_markdown_is_not_resent(backend: BackendClient, tap: Tap) -> None:
    copilot = Copilot(backend, tap.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        await copilot.ask_cancelled("count slowly to 100")
        after = await copilot.ask("I feel sad")
    assert after.text() == "Do you often feel sad?"
    assert tap.prompts() == ["Hello", "count slowly to 100", "I feel sad"]
    assert len(set(sessions(tap))) == 1


async def test_a_summarisation_is_answered_in_the_agents_own_session_and_the_conversation_goes_on(backend: BackendClient, tap: Tap) -> None:
    """docs/how-it-works.md, "Compaction": an agent with no compaction command of its own (Eliza) is
    asked Copilot's question in its own session; the turn after the summary goes on there, unprimed."""
    copilot = Copilot(backend, tap.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        await copilot.ask("I feel sad")
        summary = await copilot.summarise(compact=True)
        assert summary.completed and summary.text()
        after = await copilot.ask("My mother hates me")
    assert after.text() == "Your mother hates you?"
    used = sessions(tap)
    assert used[0] == used[1] == used[2] == used[3]  # one agent session throughout
    assert len(tap.requests("session/new")) == 1
    assert tap.prompts()[2:] == [SUMMARY_ASK, "My mother hates me"]  # asked in its own session, then unprimed


async def test_a_summarisation_mid_turn_leaves_the_waiting_session_alone(backend: BackendClient, tap: Tap) -> None:
    """A summary asked while the agent waits on a permission (its context overflowed mid-turn) cannot
    be asked of its session: a throwaway session answers it, and the turn goes on in its own."""
    copilot = Copilot(backend, tap.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        waiting = await copilot.ask("run ls")
        assert waiting.tool_calls()
        summary = await copilot.summarise()
        assert summary.completed
    used = sessions(tap)
    assert used[0] == used[1] != used[2]


async def test_editing_an_earlier_message_forks_a_new_primed_session(backend: BackendClient, tap: Tap) -> None:
    copilot = Copilot(backend, tap.agent)
    with trio.fail_after(GUARD):
        await copilot.ask("Hello")
        await copilot.ask("I feel sad")
        copilot.edit(1, "")
        fork = await copilot.ask("I feel happy")
        await copilot.ask("I remember my dog")
    used = sessions(tap)
    assert used[0] == used[1] and used[2] == used[3] and used[2] != used[0]
    forked_prompt = tap.requests("session/prompt")[2]["params"]["prompt"]
    assert forked_prompt[0]["text"].startswith("Earlier in this conversation:\n\nUser: Hello")
    assert forked_prompt[-1]["text"] == "I feel happy"
    assert fork.completed
    assert tap.prompts()[3] == "I remember my dog"


async def test_a_subagent_interleaved_with_its_parent_keeps_its_own_session(backend: BackendClient, tap: Tap) -> None:
    parent = Copilot(backend, tap.agent, name="parent")
    child = Copilot(backend, tap.agent, name="subagent")
    with trio.fail_after(GUARD):
        await parent.ask("Hello")
        await child.ask("Hello")  # the same first message: only the markers tell them apart
        await parent.ask("I feel sad")
        await child.ask("I remember my dog")
        await parent.ask("My mother hates me")
    used = sessions(tap)
    assert used[0] == used[2] == used[4]
    assert used[1] == used[3] != used[0]
    assert tap.prompts() == ["Hello", "Hello", "I feel sad", "I remember my dog", "My mother hates me"]


async def test_after_a_backend_restart_the_marker_resumes_the_conversation_primed(tap: Tap) -> None:
    async with BackendClient.spawn() as first_backend:
        copilot = Copilot(first_backend, tap.agent)
        with trio.fail_after(GUARD):
            await copilot.ask("Hello")
            await copilot.ask("I feel sad")
    async with BackendClient.spawn() as second_backend:  # a reload: same state folder, new process
        copilot.backend = second_backend
        with trio.fail_after(GUARD):
            resumed = await copilot.ask("My mother hates me")
            later = await copilot.ask("I remember my dog")
    assert resumed.text() == "Your mother hates you?"
    assert later.completed
    assert len(tap.pids()) == 2
    used = sessions(tap)
    assert used[0] == used[1] and used[2] == used[3] and used[2] != used[0]
    primed = tap.requests("session/prompt")[2]["params"]["prompt"]
    assert primed[0]["text"].startswith("Earlier in this conversation:\n\nUser: Hello\n\nAssistant: How do you do.")
    assert tap.prompts()[3] == "I remember my dog"


async def test_system_messages_are_forwarded_only_when_asked_and_only_when_changed(tap: Tap) -> None:
    async with BackendClient.spawn(["vscodelm", "--forward-system"]) as backend:
        copilot = Copilot(backend, tap.agent)
        copilot.system = lambda: {"role": "system", "content": [{"type": "text", "value": "Be brief."}]}  # type: ignore[method-assign]
        with trio.fail_after(GUARD):
            await copilot.ask("Hello")
            await copilot.ask("I feel sad")
    prompts = [m["params"]["prompt"] for m in tap.requests("session/prompt")]
    assert prompts[0][0]["text"].startswith("Instructions from the VS Code chat:\n\nBe brief.")
    assert prompts[1] == [{"type": "text", "text": "I feel sad"}]


async def test_after_a_restart_an_agent_that_can_load_sessions_resumes_its_own(tmp_path: Path) -> None:
    log = tmp_path / "quirky.jsonl"
    agent = process_agent("loader", sys.executable, [str(HERE / "acp_tee.py"), str(log), "--", sys.executable, str(HERE / "quirky_agent.py"), "--load"])
    async with BackendClient.spawn() as first_backend:
        copilot = Copilot(first_backend, agent)
        with trio.fail_after(GUARD):
            await copilot.ask("Hello")
    async with BackendClient.spawn() as second_backend:
        copilot.backend = second_backend
        with trio.fail_after(GUARD):
            resumed = await copilot.ask("again")
    assert resumed.text() == "echo: again"  # not primed: the agent has its session back
    records = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [r["msg"] for r in records if r.get("dir") == "c2a" and "method" in r.get("msg", {})]
    first_session = next(m for m in [r["msg"] for r in records if "result" in r.get("msg", {})] if "sessionId" in m["result"])["result"]["sessionId"]
    [load] = [m for m in sent if m["method"] == "session/load"]
    assert load["params"]["sessionId"] == first_session
    assert [m["params"]["sessionId"] for m in sent if m["method"] == "session/prompt"] == [first_session, first_session]


async def test_after_a_restart_a_chat_that_lost_its_last_turn_is_primed_not_resumed_past_it(tmp_path: Path) -> None:
    """Copilot writes a chat's history a little after each turn: a window reloaded at once can
    come back without the last one. Its newest marker is then older than the saved session's
    last turn, and loading that session would show the agent a turn the chat no longer shows."""
    log = tmp_path / "quirky.jsonl"
    agent = process_agent("loader", sys.executable, [str(HERE / "acp_tee.py"), str(log), "--", sys.executable, str(HERE / "quirky_agent.py"), "--load"])
    async with BackendClient.spawn() as first_backend:
        copilot = Copilot(first_backend, agent)
        with trio.fail_after(GUARD):
            await copilot.ask("Hello")
            await copilot.ask("the lost turn")
    copilot.rounds = copilot.rounds[:1]  # the reloaded chat: turn 2 was never written
    async with BackendClient.spawn() as second_backend:
        copilot.backend = second_backend
        with trio.fail_after(GUARD):
            answer = await copilot.ask("again")
            later = await copilot.ask("and on")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [r["msg"] for r in records if r.get("dir") == "c2a" and "method" in r.get("msg", {})]
    assert not [m for m in sent if m["method"] == "session/load"]
    prompts = [" ".join(b.get("text", "") for b in m["params"]["prompt"]) for m in sent if m["method"] == "session/prompt"]
    assert len(prompts) == 4
    assert "User: Hello" in prompts[2] and "again" in prompts[2]  # primed with what the chat shows
    assert "lost turn" not in prompts[2]
    assert answer.text().startswith("echo: Earlier in this conversation")
    assert later.completed and prompts[3] == "and on"  # and it goes on in that new session
    sessions_prompted = [m["params"]["sessionId"] for m in sent if m["method"] == "session/prompt"]
    assert sessions_prompted[0] == sessions_prompted[1] != sessions_prompted[2] == sessions_prompted[3]


async def test_after_a_restart_a_chat_showing_every_turn_resumes_its_session_unprimed(tmp_path: Path) -> None:
    log = tmp_path / "quirky.jsonl"
    agent = process_agent("loader", sys.executable, [str(HERE / "acp_tee.py"), str(log), "--", sys.executable, str(HERE / "quirky_agent.py"), "--load"])
    async with BackendClient.spawn() as first_backend:
        copilot = Copilot(first_backend, agent)
        with trio.fail_after(GUARD):
            await copilot.ask("Hello")
            await copilot.ask("the second turn")
    async with BackendClient.spawn() as second_backend:
        copilot.backend = second_backend
        with trio.fail_after(GUARD):
            resumed = await copilot.ask("again")
    assert resumed.text() == "echo: again"  # not primed: the agent has its session back
    records = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [r["msg"] for r in records if r.get("dir") == "c2a" and "method" in r.get("msg", {})]
    [load] = [m for m in sent if m["method"] == "session/load"]
    assert [m["params"]["sessionId"] for m in sent if m["method"] == "session/prompt"] == [load["params"]["sessionId"]] * 3
