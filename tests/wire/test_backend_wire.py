"""The backend as VS Code sees it: a real `symposium vscodelm` subprocess, driven over its stdio.

Agents are the built-in Eliza (in-process) and Eliza as an external subprocess that records
its ACP traffic (`tap`), so the tests can check what the agent was actually sent.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any

import pytest
import trio

from protocol.shared.jsonrpc import LineSplitter
from protocol.vscode.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, ELIZA, BackendClient, ChatResult, process_agent, tool_result, user
from tests.conftest import Tap
from tests.support.acp_validate import validate

HELLO_REPLY = "How do you do. Please state your problem."
GUARD = 30  # a hang guard, not a timing budget: the tests wait on events


def assert_well_formed(result: ChatResult) -> None:
    """Parts, then lm/responseComplete, then {}; at least one visible part."""
    assert result.error is None, result.error and result.error.message
    assert result.completed
    assert any(p["type"] in ("text", "tool_call") for p in result.parts)


async def test_models_list_eliza_and_configured_agents(backend: BackendClient) -> None:
    models = await backend.models([{"id": "claude", "name": "Claude Code", "agent": process_agent("claude", "claude-code-acp")}])
    assert [m["id"] for m in models] == ["symposium-eliza", "claude"]
    assert models[1]["name"] == "Claude Code (ACP)"
    assert all(m["capabilities"]["toolCalling"] for m in models)


async def test_single_turn(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hello")], agent=ELIZA)
    assert_well_formed(result)
    assert result.text() == HELLO_REPLY
    assert len([p for p in result.parts if p["type"] == "text"]) > 1  # streamed, not one blob


async def test_multi_turn_continues_the_same_agent_session(backend: BackendClient, tap: Tap) -> None:
    history = [user("I am sad")]
    with trio.fail_after(GUARD):
        first = await backend.chat(history, agent=tap.agent)
        history += [first.assistant_message(), user("I am sad")]
        second = await backend.chat(history, agent=tap.agent)
        fresh = await backend.chat([user("I am sad")], agent=tap.agent)
    assert_well_formed(second)
    # Eliza rotates its replies within a session: the same words get a new answer...
    assert second.text() != first.text()
    # ...while a new conversation starts a new session that answers as the first did.
    assert fresh.text() == first.text()
    assert len(tap.requests("session/new")) == 2
    assert len(tap.pids()) == 1  # one agent process, its sessions multiplexed
    assert tap.prompts() == ["I am sad", "I am sad", "I am sad"]  # only what was new, never the history


async def test_permission_approved_continues_the_same_agent_turn(backend: BackendClient, tap: Tap) -> None:
    history = [user("run ls -la")]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
        assert_well_formed(ask)
        [call] = ask.tool_calls()
        assert call["toolName"] == "symposium-agent-action"
        assert call["toolCallId"].startswith("sym-")
        assert call["parameters"]["kind"] == "execute"
        assert call["parameters"]["title"] == "Run `ls -la`"
        assert call["parameters"]["raw_input"]["command"] == "ls -la"
        history += [ask.assistant_message(), tool_result(call["toolCallId"], AGENT_ACTION_APPROVED)]
        done = await backend.chat(history, agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
    assert_well_formed(done)
    assert "I ran `ls -la`" in done.text()
    assert len(tap.requests("session/prompt")) == 1  # the same agent turn went on
    [answer] = [m for m in tap.messages("c2a") if m.get("result", {}).get("outcome")]
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}


async def test_at_shutdown_agents_hear_their_turns_cancelled_and_get_their_answers(tap: Tap) -> None:
    async with BackendClient.spawn() as backend:
        with trio.fail_after(GUARD):
            ask = await backend.chat([user("run ls")], agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
            assert ask.tool_calls()  # the card is shown; the agent waits for the user
            streaming = backend.start_chat([user("count slowly to 100")], agent=tap.agent)
            await streaming.first_part.wait()
    # Input closed (VS Code quit): both requests are answered, and the agent was told.
    assert streaming.error is not None and streaming.error.data["kind"] == "shutdown"
    asked = [m["id"] for m in tap.messages("a2c") if m.get("method") == "session/request_permission"]
    answered = [m["id"] for m in tap.messages("c2a") if "method" not in m]
    assert asked and all(answered.count(id) == 1 for id in asked)
    sessions = {m["params"]["sessionId"] for m in tap.requests("session/prompt")}
    assert {m["params"]["sessionId"] for m in tap.requests("session/cancel")} == sessions and len(sessions) == 2


NOT_APPROVALS = {
    "skip": ["The user chose to skip the tool call, they want to proceed without running it"],
    "disabled": [
        "ERROR while calling tool: Tool symposium-agent-action is currently disabled by the user, and cannot be called.",
        "Please check your input and try again.",
    ],
    "invalid input": ["ERROR: Your input to the tool was invalid (must be object)\nPlease check your input and try again."],
    "an error": ["Error: the tool threw"],
    "a near miss": [AGENT_ACTION_APPROVED + " "],
    "the old approval": ["Approved"],
    "no text": [],
}


@pytest.mark.parametrize("texts", NOT_APPROVALS.values(), ids=NOT_APPROVALS.keys())
async def test_every_result_but_the_approval_rejects_and_the_agent_turn_goes_on(backend: BackendClient, tap: Tap, texts: list[str]) -> None:
    history = [user("run rm -rf /")]
    with trio.fail_after(GUARD):
        ask = await backend.chat(history, agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
        [call] = ask.tool_calls()
        result = {"role": "user", "content": [{"type": "tool_result", "toolCallId": call["toolCallId"], "content": [{"type": "text", "value": t} for t in texts]}]}
        done = await backend.chat([*history, ask.assistant_message(), result], agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
    assert_well_formed(done)
    assert "You did not let me run `rm -rf /`" in done.text()  # in the response to the result
    assert len(tap.requests("session/prompt")) == 1  # the same agent turn went on
    assert not tap.requests("session/cancel")
    [answer] = [m for m in tap.messages("c2a") if "outcome" in (m.get("result") or {})]
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "reject"}


async def test_an_abandoned_confirmation_cancels_the_agent_turn_and_prompts_only_the_new_message(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        ask = await backend.chat([user("run rm -rf /")], agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
        assert ask.tool_calls()
        # The user typed a new message while the card was shown: the next request does not
        # carry the tool call.
        after = await backend.chat([user("run rm -rf /"), user("Hello")], agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
    assert_well_formed(after)
    assert after.text() == HELLO_REPLY
    assert tap.prompts() == ["run rm -rf /", "Hello"]
    assert [m["params"]["sessionId"] for m in tap.requests("session/cancel")]
    [answer] = [m for m in tap.messages("c2a") if "outcome" in (m.get("result") or {})]
    assert answer["result"]["outcome"] == {"outcome": "cancelled"}
    assert len(tap.requests("session/new")) == 1


async def test_permission_without_the_action_tool_is_denied_and_the_turn_goes_on(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        result = await backend.chat([user("run make install")], agent=ELIZA, tools=[])
    assert_well_formed(result)
    assert not result.tool_calls()
    assert "You did not let me run `make install`" in result.text()


async def test_cancel_mid_stream_answers_promptly_and_the_conversation_goes_on(backend: BackendClient, tap: Tap) -> None:
    history = [user("count slowly to 200")]
    with trio.fail_after(GUARD):
        pending = backend.start_chat(history, agent=tap.agent)
        await pending.first_part.wait()
        await backend.cancel(pending.request_id)
        await pending.done.wait()
        assert pending.error is not None and pending.error.code == -32800
        assert not pending.completed
        # As VS Code does, keep what was shown and go on.
        history += [pending.assistant_message(), user("Hello")]
        after = await backend.chat(history, agent=tap.agent)
    assert_well_formed(after)
    assert after.text() == HELLO_REPLY
    assert len(tap.requests("session/new")) == 1
    assert tap.prompts() == ["count slowly to 200", "Hello"]
    assert len(tap.requests("session/cancel")) == 1


async def test_a_newer_request_supersedes_a_streaming_one(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        old = backend.start_chat([user("count slowly to 200")], agent=ELIZA)
        await old.first_part.wait()
        new = await backend.chat([user("count slowly to 200"), user("Hello")], agent=ELIZA)
        await old.done.wait()
    assert old.error is not None and old.error.code == -32800
    assert_well_formed(new)
    assert new.text() == HELLO_REPLY


async def test_two_conversations_interleaved_do_not_cross(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        slow = backend.start_chat([user("count slowly to 3")], agent=tap.agent)
        quick = await backend.chat([user("Hello")], agent=tap.agent)
        await slow.done.wait()
        slow_next = backend.start_chat([user("count slowly to 3"), slow.assistant_message(), user("Hello")], agent=tap.agent)
        quick_next = await backend.chat([user("Hello"), quick.assistant_message(), user("I am sad")], agent=tap.agent)
        await slow_next.done.wait()
    for result in (slow, quick, slow_next, quick_next):
        assert_well_formed(result)
    assert slow.text() == "1 2 3 "
    assert quick.text() == HELLO_REPLY
    assert slow_next.text() == HELLO_REPLY
    sessions = {m["params"]["sessionId"] for m in tap.requests("session/prompt")}
    assert len(sessions) == 2 and len(tap.requests("session/new")) == 2
    assert sorted(tap.prompts()) == sorted(["count slowly to 3", "Hello", "Hello", "I am sad"])


async def test_external_agent_is_symposium_eliza(backend: BackendClient) -> None:
    agent = process_agent("eliza", sys.executable, ["-m", "symposium", "eliza", "--deterministic"])
    with trio.fail_after(GUARD):
        result = await backend.chat([user("Hello")], agent=agent)
    assert_well_formed(result)
    assert result.text() == HELLO_REPLY


async def test_every_acp_message_is_valid_per_the_schema(backend: BackendClient, tap: Tap) -> None:
    with trio.fail_after(GUARD):
        await backend.chat([user("Hello")], agent=tap.agent)
        ask = await backend.chat([user("run ls")], agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
        await backend.chat([user("run ls"), ask.assistant_message(), tool_result(ask.tool_calls()[0]["toolCallId"], "ok")], agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
        await backend.chat([user("run rm")], agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
        await backend.chat([user("run rm"), user("think about cats")], agent=tap.agent, tools=[AGENT_ACTION_TOOL_DEF])
        pending = backend.start_chat([user("count slowly to 100")], agent=tap.agent)
        await pending.first_part.wait()
        await backend.cancel(pending.request_id)
        await pending.done.wait()
        await backend.chat([user("count slowly to 100"), user("Hello")], agent=tap.agent)
    records = [r for r in tap.records() if "msg" in r]
    methods = {r["msg"].get("method") for r in records}
    assert {"initialize", "session/new", "session/prompt", "session/cancel", "session/update", "session/request_permission"} <= methods
    pending_ids: dict[Any, str] = {}
    for record in records:
        validate(record["dir"], record["msg"], pending_ids)


async def test_agent_that_cannot_start_fails_the_request_and_the_next_one_works(backend: BackendClient) -> None:
    missing = process_agent("ghost", "/nonexistent/agent-binary")
    with trio.fail_after(GUARD):
        failed = await backend.chat([user("Hello")], agent=missing)
        assert failed.error is not None and failed.error.code == -32000
        assert "/nonexistent/agent-binary" in failed.error.message
        again = await backend.chat([user("Hello")], agent=missing)
        assert again.error is not None and again.error.code == -32000  # retired, tried afresh, not hung
        ok = await backend.chat([user("Hello")], agent=ELIZA)
    assert_well_formed(ok)


async def test_agent_dying_mid_turn_fails_the_request_and_the_next_request_starts_afresh(backend: BackendClient, tap: Tap) -> None:
    history = [user("count slowly to 200")]
    with trio.fail_after(GUARD):
        pending = backend.start_chat(history, agent=tap.agent)
        await pending.first_part.wait()
        os.kill(tap.pids()[0], signal.SIGKILL)
        await pending.done.wait()
        assert pending.error is not None and pending.error.code == -32000
        assert pending.error.data["kind"] == "agent_exited"
        history += [pending.assistant_message(), user("Hello")]
        after = await backend.chat(history, agent=tap.agent)
    assert_well_formed(after)
    assert after.text() == HELLO_REPLY
    assert len(tap.pids()) == 2  # a fresh agent process


# Bad input, raw lines -----------------------------------------------------------------------------


class Raw:
    """The backend over raw lines, for input no well-behaved client would send."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.splitter = LineSplitter()
        self.lines: list[bytes] = []

    async def send(self, line: bytes | dict[str, Any]) -> None:
        data = line if isinstance(line, bytes) else json.dumps(line).encode()
        await self.process.stdin.send_all(data + b"\n")  # type: ignore[union-attr]

    async def receive(self) -> dict[str, Any]:
        while not self.lines:
            data = await self.process.stdout.receive_some()  # type: ignore[union-attr]
            assert data, "backend closed its output"
            self.lines.extend(self.splitter.feed(data))  # type: ignore[arg-type]
        return json.loads(self.lines.pop(0))

    async def response(self, id: Any) -> dict[str, Any]:
        while True:
            msg = await self.receive()
            if msg.get("id") == id and "method" not in msg:
                return msg


async def raw_backend() -> Raw:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "symposium", "vscodelm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
    )
    return Raw(process)


def chat_request(id: Any, text: str, **extra: Any) -> dict[str, Any]:
    params = {"modelId": "symposium-eliza", "messages": [user(text)], "agent": ELIZA, "options": {"tools": []}, **extra}
    return {"jsonrpc": "2.0", "id": id, "method": "lm/provideLanguageModelChatResponse", "params": params}


async def test_bad_input_gets_clear_errors_and_loses_nothing() -> None:
    raw = await raw_backend()
    with trio.fail_after(GUARD):
        await raw.send(b'{"jsonrpc": "2.0", "id": 1, "method": ')
        reply = await raw.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "lm/nope"})
        assert (await raw.response(2))["error"]["code"] == -32601
        bad = chat_request(3, "Hello")
        bad["params"]["messages"][0]["content"].append({"type": "tool_result", "toolCallId": 7})
        error = (await raw.response(3))["error"] if not await raw.send(bad) else None
        assert error["code"] == -32602
        assert "messages[0].content[1].toolCallId" in error["message"]
        await raw.send({"jsonrpc": "2.0", "method": "lm/cancel", "params": {"requestId": 99}})  # unknown: ignored
        await raw.send(chat_request("s-4", "Hello"))  # a string id is echoed as a string
        parts = []
        while (msg := await raw.receive()).get("id") != "s-4":
            parts.append(msg)
        assert msg == {"jsonrpc": "2.0", "id": "s-4", "result": {}}
        assert parts[-1] == {"jsonrpc": "2.0", "method": "lm/responseComplete", "params": {"requestId": "s-4"}}
        assert all(p["params"]["requestId"] == "s-4" for p in parts)
        await raw.process.stdin.aclose()  # type: ignore[union-attr]
        assert await raw.process.wait() == 0


async def test_stdin_eof_answers_every_pending_request_and_exits_cleanly() -> None:
    raw = await raw_backend()
    with trio.fail_after(GUARD):
        await raw.send(chat_request(1, "count slowly to 400"))
        assert (await raw.receive())["method"] == "lm/responsePart"
        await raw.process.stdin.aclose()  # type: ignore[union-attr]
        reply = await raw.response(1)
        assert reply["error"]["code"] == -32000 and reply["error"]["data"]["kind"] == "shutdown"
        assert await raw.process.wait() == 0


async def test_agent_thoughts_arrive_as_thinking_parts(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        result = await backend.chat([user("think about my mother")], agent=ELIZA)
    assert_well_formed(result)
    assert result.thinking() == "The user wants me to think about my mother."
    assert "mother" in result.text()
    assert result.parts[0]["type"] == "thinking"



# A 1x1 PNG, as VS Code sends a pasted image: a data part of the user's message.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


async def test_an_agent_not_yet_started_takes_images_until_it_says_it_does_not(backend: BackendClient, tap: Tap) -> None:
    """docs/DESIGN.md, "Images": before the agent has started, the picker lets an image through
    (VS Code would drop it otherwise); an agent whose prompts take none (Eliza) is sent a note in
    its place, and from then on the picker says no."""
    entry = {"id": "blind", "name": "Blind", "agent": tap.agent}
    [before] = [m for m in await backend.models([entry]) if m["id"] == "blind"]
    assert before["capabilities"]["imageInput"] is True
    message = {"role": "user", "content": [{"type": "text", "value": "I feel sad"}, {"type": "data", "mimeType": "image/png", "data": PNG}]}
    with trio.fail_after(GUARD):
        result = await backend.chat([message], agent=tap.agent, model_id="blind")
        await backend.models_changed()
    assert_well_formed(result)
    [prompt] = tap.requests("session/prompt")
    assert {"type": "text", "text": "[image omitted: image/png]"} in prompt["params"]["prompt"]
    assert not any(b.get("type") == "image" for b in prompt["params"]["prompt"])
    [after] = [m for m in await backend.models([entry]) if m["id"] == "blind"]
    assert after["capabilities"]["imageInput"] is False


async def test_an_image_part_that_is_not_an_image_is_refused_with_a_message_and_the_next_request_works() -> None:
    raw = await raw_backend()
    with trio.fail_after(GUARD):
        for id, data, problem in (
            (1, "this is not base64!", "not base64"),
            (2, "PGh0bWw+aGVsbG88L2h0bWw+", "not a PNG image"),  # <html>hello</html>
        ):
            bad = chat_request(id, "look at this")
            bad["params"]["messages"][0]["content"].append({"type": "data", "mimeType": "image/png", "data": data})
            await raw.send(bad)
            error = (await raw.response(id))["error"]
            assert error["code"] == -32602
            assert f"messages[0].content[1].data: {problem}" in error["message"], error
        good = chat_request(3, "I feel sad")
        good["params"]["messages"][0]["content"].append({"type": "data", "mimeType": "image/png", "data": PNG})
        await raw.send(good)
        assert (await raw.response(3)) == {"jsonrpc": "2.0", "id": 3, "result": {}}
        await raw.process.stdin.aclose()  # type: ignore[union-attr]
        assert await raw.process.wait() == 0
