"""One scenario suite run against each real agent: Claude Code and Codex end to end, offline.

Each agent is its real ACP adapter, the catalogue's at its catalogue version (installed by `make agents`)
behind `tests/support/acp_tee.py`, so the test reads its ACP traffic, with a home of its own; its
model is a fake API scripted per test (`tests/support/fake_anthropic.py`,
`tests/support/fake_openai.py`), each main-conversation model request taking the next scripted
reply. The `agent` fixture (tests/agents/conftest.py) runs each scenario once per agent; the
driver says how its fake API scripts a text, a thought, a command, a VS Code tool call, and what
the agent does differently (`tests/support/real_agent.py`). What only one agent does is tested
in `test_claude_code.py` and `test_codex.py`.
"""

from __future__ import annotations

import trio

from protocol.vscode.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, tool_result, user
from tests.support.real_agent import GUARD, WEATHER, RealAgent, answer_to, assert_well_formed


async def test_plain_turn_streams_text(backend: BackendClient, agent: RealAgent) -> None:
    # Paced: the fake sends each delta once the previous one has come out as a part, so the
    # parts show the text streamed through (the backend merges parts that queue up together).
    agent.api.script(agent.reply(agent.text("Hello ", "from ", "the fake ", "model."), paced=True))
    with trio.fail_after(GUARD):
        result = await agent.chat(backend, [user("Hello")], on_part=lambda _: agent.api.advance())
    assert_well_formed(result)
    assert result.text() == "Hello from the fake model."
    assert [p["value"] for p in result.parts if p["type"] == "text"] == ["Hello ", "from ", "the fake ", "model."]
    [request] = agent.api.main
    assert request.user_texts() == ["Hello"]
    header, key = agent.key_header
    assert request.headers.get(header) == key  # the key from the agent's own configuration
    assert not agent.api.unscripted


async def test_second_turn_continues_the_same_session(backend: BackendClient, agent: RealAgent) -> None:
    agent.api.script(agent.reply(agent.text("The answer ", "is 42.")), agent.reply(agent.text("You asked ", "about 42.")))
    history = [user("What is the answer?")]
    with trio.fail_after(GUARD):
        first = await agent.chat(backend, history)
        history += [first.assistant_message(), user("What did I ask?")]
        second = await agent.chat(backend, history)
    assert_well_formed(second)
    assert second.text() == "You asked about 42."
    assert agent.prompts() == ["What is the answer?", "What did I ask?"]  # only what was new
    assert len(agent.requests("session/new")) == 1 and len(agent.agent_pids()) == 1
    later = agent.api.main[1]
    assert later.user_texts() == ["What is the answer?", "What did I ask?"]
    assert later.assistant_texts() == ["The answer is 42."]
    assert not agent.api.unscripted


async def test_thinking_arrives_as_thinking_parts(backend: BackendClient, agent: RealAgent) -> None:
    agent.api.script(agent.reply(agent.thinking("The user greets me. ", "I should greet back."), agent.text("Hi ", "there.")))
    with trio.fail_after(GUARD):
        result = await agent.chat(backend, [user("Hi")])
    assert_well_formed(result)
    assert result.thinking().strip() == "The user greets me. I should greet back."
    assert result.text() == "Hi there."
    assert result.parts[0]["type"] == "thinking"


async def test_cancel_mid_stream_answers_cancelled_and_the_next_turn_is_clean(backend: BackendClient, agent: RealAgent) -> None:
    agent.api.script(
        agent.reply(agent.text("one ", "two ", "three ", "four"), stall_after=1),
        agent.reply(agent.text("Fresh ", "answer."), answers="Say something else"),
    )
    history = [user("Count to four")]
    with trio.fail_after(GUARD):
        pending = backend.start_chat(history, agent=agent.agent, cwd=str(agent.cwd))
        await pending.first_part.wait()
        await backend.cancel(pending.request_id)
        await pending.done.wait()
        assert pending.error is not None and pending.error.code == -32800
        assert not pending.completed
        if agent.hangs_up_on_cancel:
            stream = await agent.api.wait_for(lambda r: r.main and (r.aborted or r.finished))
            assert stream.aborted
        history += [pending.assistant_message(), user("Say something else")]
        after = await agent.chat(backend, history)
    assert_well_formed(after)
    assert after.text() == "Fresh answer."
    assert agent.prompts() == ["Count to four", "Say something else"]
    assert len(agent.requests("session/cancel")) == 1 and len(agent.requests("session/new")) == 1
    assert [m for m in agent.messages("a2c") if (m.get("result") or {}).get("stopReason") == "cancelled"]
    # The model sees the interrupted partial answer (if the agent keeps it), then the new message.
    assert agent.api.main[-1].assistant_texts() == (["one "] if agent.keeps_cancelled_text else [])
    assert agent.api.main[-1].user_texts()[-1] == "Say something else"
    assert not agent.api.unscripted


async def test_a_shell_command_is_one_confirmation_and_the_approval_runs_it(backend: BackendClient, cautious_agent: RealAgent) -> None:
    agent = cautious_agent
    out = agent.cwd / "out.txt"
    ask_reply = agent.reply(agent.text("I will write it."), agent.shell(f"echo hi > {out}"))
    agent.api.script(ask_reply, agent.reply(agent.text("Done: ", "the file is written.")))
    tools = [AGENT_ACTION_TOOL_DEF]
    history = [user("Write hi to out.txt")]
    with trio.fail_after(GUARD):
        ask = await agent.chat(backend, history, tools=tools)
        assert_well_formed(ask)
        [call] = ask.tool_calls()
        assert call["toolName"] == "symposium-agent-action"
        assert call["parameters"]["kind"] == "execute"
        assert agent.command_of(call["parameters"]["raw_input"]) == f"echo hi > {out}"
        assert not out.exists()
        history += [ask.assistant_message(), tool_result(call["toolCallId"], AGENT_ACTION_APPROVED)]
        done = await agent.chat(backend, history, tools=tools)
    assert_well_formed(done)
    assert done.tool_calls() == []
    assert "Done: the file is written." in done.text()
    assert out.read_text() == "hi\n"
    assert len(agent.requests("session/prompt")) == 1  # the same agent turn went on
    [permission] = agent.requests("session/request_permission")
    assert permission["params"]["toolCall"]["kind"] == "execute"
    assert answer_to(agent, permission)["result"]["outcome"] == {"outcome": "selected", "optionId": agent.allow_once}
    # The model got the command's result in the request after the one that asked for it.
    [call_id] = ask_reply.call_ids()
    assert [o["call_id"] for o in agent.api.main[1].tool_outputs()] == [call_id]
    assert not agent.api.unscripted


async def test_a_vscode_tool_runs_with_a_single_confirmation(backend: BackendClient, agent: RealAgent) -> None:
    ask_reply = agent.reply(agent.text("Let me check."), agent.vscode_tool("get_weather", {"city": "Paris"}))
    agent.api.script(ask_reply, agent.reply(agent.text("It is ", "sunny.")))
    tools = [AGENT_ACTION_TOOL_DEF, WEATHER]
    history = [user("Weather in Paris?")]
    with trio.fail_after(GUARD):
        ask = await agent.chat(backend, history, tools=tools)
        assert_well_formed(ask)
        # (Codex sends a session's first model request without waiting for its MCP servers: when vscode_tools
        # was not up yet, its model is told "unsupported call", and a user's first message goes without the tools.)
        assert ask.tool_calls(), f"the agent did not call the tool; its model was told: {[r.tool_outputs() for r in agent.api.main[1:]]}"
        [call] = ask.tool_calls()  # VS Code confirms and runs its own tool: no agent action on top
        assert call["toolName"] == "get_weather" and call["parameters"] == {"city": "Paris"}
        history += [ask.assistant_message(), tool_result(call["toolCallId"], "Sunny, 25 C")]
        done = await agent.chat(backend, history, tools=tools)
    assert_well_formed(done)
    assert done.tool_calls() == []
    assert "It is sunny." in done.text()
    assert "get_weather" not in done.text() and "Sunny, 25 C" not in done.text()  # VS Code showed its own tool's call: once
    # The agent asked before calling the MCP tool; the backend approved it itself, once.
    [asked] = agent.requests(agent.vscode_tool_approval)
    agent.assert_asks_for_vscode_tool(asked["params"], "get_weather")
    agent.assert_approved(answer_to(agent, asked)["result"])
    # The model got the tool's output in the agent's next request, under the call's id.
    [call_id] = ask_reply.call_ids()
    [output] = agent.api.main[1].tool_outputs()
    assert output["call_id"] == call_id and "Sunny, 25 C" in output["text"]
    assert not agent.api.unscripted


async def test_a_response_carries_the_usage_the_agent_reported(backend: BackendClient, agent: RealAgent) -> None:
    agent.api.script(agent.reply(agent.text("Hi."), usage=(1200, 34)))
    with trio.fail_after(GUARD):
        result = await agent.chat(backend, [user("Hi")])
    assert_well_formed(result)
    # The agent's context (its last `usage_update`) is the prompt tokens: what the fake API said the call cost.
    updates = [m["params"]["update"] for m in agent.messages("a2c") if (m.get("params") or {}).get("update", {}).get("sessionUpdate") == "usage_update"]
    assert updates[-1]["used"] == 1200 + 34
    [usage] = [p for p in result.parts if p["type"] == "usage"]
    assert usage == {"type": "usage", "promptTokens": 1234, "completionTokens": 34, "totalTokens": 1234 + 34, "cachedTokens": 0}
    assert result.parts[-1]["type"] == "marker"  # the usage comes before the end, the marker last


# A 1x1 PNG, as VS Code sends an attached image: a data part of the user's message.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


async def test_an_attached_image_reaches_the_model_and_the_picker_lets_images_through(backend: BackendClient, agent: RealAgent) -> None:
    entry = {"id": "pictured", "name": "Pictured", "agent": agent.agent}
    before = {m["id"]: m for m in await backend.models([entry])}
    # Unknown until one of its sessions says: let through, or VS Code would drop the user's first image.
    assert before["pictured"]["capabilities"]["imageInput"] is True
    agent.api.script(agent.reply(agent.text("A single pixel.")))
    # As Copilot Chat 0.67 sends a pasted image: inside its turn's <attachments>, the text in two pieces.
    request_text = "\n</attachments>\n<context>\nThe current date is 2026-11-26.\n</context>\n<userRequest>\nWhat is in this image?\n</userRequest>\n"
    message = {"role": "user", "content": [{"type": "text", "value": "<attachments>\n"}, {"type": "data", "mimeType": "image/png", "data": PNG}, {"type": "text", "value": request_text}]}
    with trio.fail_after(GUARD):
        result = await agent.chat(backend, [message], model_id="pictured")
        await backend.models_changed()
    assert_well_formed(result)
    assert result.text() == "A single pixel."
    [request] = agent.api.main
    assert request.images() == [("image/png", PNG)]
    # Claude Code ends the message with a text naming where it saved the image.
    assert "What is in this image?" in [t.strip() for t in request.user_texts()]
    after = {m["id"]: m for m in await backend.models([entry])}
    assert after["pictured"]["capabilities"]["imageInput"] is True
