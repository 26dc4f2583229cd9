"""No input kills the backend: each way a line once crashed `symposium vscodelm`, over the real wire.

Every test sends the hostile input to a real backend subprocess, checks the answer a client
would get (an error naming the problem, with the request's id where it can be read), then
checks that the backend is still alive and answering.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.shared.failures import resource_failure
from symposium.client import ELIZA, BackendClient, process_agent, user
from tests.wire.test_backend_wire import Raw, chat_request, raw_backend

GUARD = 30
HELLO_REPLY = "How do you do. Please state your problem."


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


async def still_answers(raw: Raw, id: Any = "alive") -> None:
    """The backend is alive: a chat with Eliza streams and completes."""
    await raw.send(chat_request(id, "Hello"))
    text = ""
    while (msg := await raw.receive()).get("id") != id:
        if msg.get("method") == "lm/responsePart" and msg["params"]["part"]["type"] == "text":
            text += msg["params"]["part"]["value"]
    assert msg.get("result") == {}, msg
    assert text == HELLO_REPLY


async def finish(raw: Raw) -> None:
    await raw.process.stdin.aclose()  # type: ignore[union-attr]
    assert await raw.process.wait() == 0  # a clean exit, not a crash


async def test_nesting_beyond_the_limit_is_refused_with_the_request_id() -> None:
    raw = await raw_backend()
    with trio.fail_after(GUARD):
        line = b'{"jsonrpc":"2.0","id":1,"method":"lm/provideLanguageModelChatInformation","params":' + b"[" * 1000 + b"]" * 1000 + b"}"
        await raw.send(line)
        error = (await raw.response(1))["error"]
        assert error["code"] == -32700 and "nesting 1001 deep exceeds the limit of 256" in error["message"]
        # Deep tool parameters in a chat's history (canonical JSON once recursed over them).
        deep_call = chat_request(2, "Hello")
        deep_call["params"]["messages"] += [
            {"role": "assistant", "content": [{"type": "tool_call", "toolCallId": "c1", "toolName": "t", "parameters": {"x": nested(900)}}]},
            user("and again"),
        ]
        await raw.send(deep_call)
        assert (await raw.response(2))["error"]["code"] == -32700
        # A deep line with no readable id is still answered, with id null.
        await raw.send(b"[" * 5000)
        reply = await raw.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        await still_answers(raw)
        await finish(raw)


async def test_tool_parameters_nested_within_the_limit_are_matched_like_any_others() -> None:
    raw = await raw_backend()
    with trio.fail_after(GUARD):
        history = [user("Hello"), {"role": "assistant", "content": [
            {"type": "tool_call", "toolCallId": "c1", "toolName": "t", "parameters": {"x": nested(240)}}]}, user("I am sad")]
        for id in (1, 2):  # the second request is matched against the first one's history
            request = chat_request(id, "Hello")
            request["params"]["messages"] = history
            await raw.send(request)
            while (msg := await raw.receive()).get("id") != id:
                pass
            assert msg.get("result") == {}, msg
        await finish(raw)


async def test_a_cancel_right_behind_its_request_cancels_it() -> None:
    # Both in one write: the cancel is read before the request's handler has started.
    raw = await raw_backend()
    with trio.fail_after(GUARD):
        cancel = {"jsonrpc": "2.0", "method": "lm/cancel", "params": {"requestId": 1}}
        await raw.send(json.dumps(chat_request(1, "count slowly to 40")).encode() + b"\n" + json.dumps(cancel).encode())
        assert (await raw.response(1))["error"]["code"] == -32800
        await still_answers(raw)
        await finish(raw)


async def test_lone_surrogates_never_crash_the_writer() -> None:
    raw = await raw_backend()
    with trio.fail_after(GUARD):
        # In chat text (JavaScript clients cut strings inside surrogate pairs): replaced, answered.
        request = chat_request(1, "Hello \ud83d")
        await raw.send(json.dumps(request).encode())
        while (msg := await raw.receive()).get("id") != 1:
            pass
        assert msg.get("result") == {}, msg
        # In a request id: it cannot be echoed, so the request is refused with id null.
        await raw.send(json.dumps({"jsonrpc": "2.0", "id": "x\udc00", "method": "lm/provideLanguageModelChatInformation", "params": {"modelId": "m", "text": "a"}}).encode())
        reply = await raw.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32600 and "id" in reply["error"]["message"]
        # In a method name: an unknown method, answered with its id.
        await raw.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "lm/\ud83d", "params": {}}).encode())
        assert (await raw.response(3))["error"]["code"] == -32601
        await still_answers(raw)
        await finish(raw)


async def test_non_finite_numbers_are_refused() -> None:
    raw = await raw_backend()
    with trio.fail_after(GUARD):
        for id, literal in enumerate([b"NaN", b"Infinity", b"-Infinity", b"1e999"], start=1):
            await raw.send(b'{"jsonrpc":"2.0","id":%d,"method":"lm/provideLanguageModelChatInformation","params":{"modelId":"m","text":"a","n":%s}}' % (id, literal))
            error = (await raw.response(id))["error"]
            assert error["code"] == -32700, error
        await raw.send(b'{"jsonrpc":"2.0","id":1e999,"method":"lm/provideLanguageModelChatInformation"}')  # the id itself: unreadable
        reply = await raw.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        await still_answers(raw)
        await finish(raw)


async def test_an_over_limit_line_is_answered_with_its_id_when_it_can_be_read() -> None:
    raw = await raw_backend()
    padding = b"x" * (64 * 1024 * 1024)
    with trio.fail_after(GUARD):
        await raw.send(b'{"jsonrpc":"2.0","id":"big","method":"lm/provideLanguageModelChatInformation","params":{"modelId":"m","text":"' + padding + b'"}}')
        error = (await raw.response("big"))["error"]
        assert error["code"] == -32700 and "exceeds the limit" in error["message"]
        # The id after the huge member cannot be read: answered with id null.
        await raw.send(b'{"jsonrpc":"2.0","method":"lm/provideLanguageModelChatInformation","params":{"modelId":"m","text":"' + padding + b'"},"id":7}')
        reply = await raw.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        await still_answers(raw)
        await finish(raw)


# What an agent sends ----------------------------------------------------------------------------

MISBEHAVING = process_agent("misbehaving", sys.executable, [str(Path(__file__).parents[1] / "support" / "misbehaving_agent.py")])


def emit(line: bytes) -> str:
    return "emit " + base64.b64encode(line).decode()


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b'{"jsonrpc":"2.0","method":"session/update","params":{"text":"\xff\xfe"}}', "invalid UTF-8"),
        (b'{"jsonrpc":"2.0","method":"session/update","params":' + b"[" * 2000 + b"]" * 2000 + b"}", "nesting 2001 deep"),
        (b'{"jsonrpc":"2.0","method":"session/update","params":{"used":NaN}}', "NaN"),
        (b'{"jsonrpc":"2.0","method":"session/upd', "Unterminated string"),
        (b'{"loaded": tru', "Expecting value"),
    ],
    ids=["invalid UTF-8", "too deep", "NaN", "truncated", "broken JSON"],
)
async def test_a_bad_line_from_an_agent_fails_its_turn_not_the_backend(backend: BackendClient, line: bytes, problem: str) -> None:
    with trio.fail_after(GUARD):
        failed = await backend.chat([user(emit(line))], agent=MISBEHAVING)
        assert failed.error is not None and failed.error.code == -32000, failed
        assert failed.error.data["kind"] == "agent_protocol_error"
        assert "misbehaving" in failed.error.message and problem in failed.error.message
        # The agent was stopped; the next conversation with it starts a fresh one.
        again = await backend.chat([user("hello")], agent=MISBEHAVING)
        assert again.completed and again.text() == "echo: hello"
        eliza = await backend.chat([user("Hello")], agent=ELIZA)
        assert eliza.text() == HELLO_REPLY


async def test_a_stray_text_line_from_an_agent_is_skipped_and_its_connection_stays(backend: BackendClient) -> None:
    # What Gemini CLI printed on its stdout, then other text a CLI prints: none of it starts like
    # a JSON-RPC message, so none of it can be the reply a request waits for.
    with trio.fail_after(GUARD):
        before = (await backend.chat([user("pid")], agent=MISBEHAVING)).text()
        for line in [b"Ignore file not found: /work/project/.geminiignore", b"Loading model... done", b"\xff\xfe not UTF-8", b"  42% ]"]:
            result = await backend.chat([user(emit(line))], agent=MISBEHAVING)
            assert result.completed and result.text() == "emitted", (line, result)
        # The same agent process answered all of them: it was never stopped.
        after = await backend.chat([user("pid")], agent=MISBEHAVING)
        assert after.completed and after.text() == before


async def test_odd_but_readable_agent_lines_are_survived(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        for line in [
            b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"nope","update":{}}}',
            b'{"jsonrpc":"2.0","method":"session/update","params":[1,2]}',
            b'{"jsonrpc":"2.0","id":12345,"result":{}}',
            b'{"jsonrpc":"2.0","id":{"x":1},"method":"session/request_permission"}',
            b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":"\\ud83d"}}}',
            b"[]",
        ]:
            result = await backend.chat([user(emit(line))], agent=MISBEHAVING)
            assert result.completed and result.text() == "emitted", (line, result)
        # A prompt answered without result or error (or with garbage) ends, it does not hang.
        for template, ok in [(b'{"jsonrpc":"2.0","id":{ID}}', False), (b'{"jsonrpc":"2.0","id":{ID},"result":"odd"}', True),
                             (b'{"jsonrpc":"2.0","id":{ID},"error":"boom"}', False)]:
            result = await backend.chat([user("respond " + base64.b64encode(template).decode())], agent=MISBEHAVING)
            assert result.completed if ok else result.error is not None and result.error.code == -32000, (template, result)


# Agent definitions and resources ------------------------------------------------------------------


def _agent(**fields: Any) -> dict[str, Any]:
    definition = {"name": "x", "command": sys.executable, "args": ["-m", "symposium", "eliza"], "env": []}
    return {"mcp_server": {**definition, **fields}}


@pytest.mark.parametrize(
    ("agent", "cwd", "field", "problem"),
    [
        (_agent(args=["-m", "sym\0posium"]), None, "agent.mcp_server.args[1]", "NUL"),
        (_agent(env=[{"name": "KEY", "value": "s3cr\0t-value"}]), None, "agent.mcp_server.env[0].value", "NUL"),
        (_agent(env=[{"name": "A=B", "value": "x"}]), None, "agent.mcp_server.env[0].name", "'='"),
        (_agent(env=[{"name": "", "value": "x"}]), None, "agent.mcp_server.env[0].name", "empty"),
        (_agent(command="py\0thon"), None, "agent.mcp_server.command", "NUL"),
        (_agent(), "/tmp/a\0b", "cwd", "NUL"),
        (_agent(), "/nonexistent/folder", "cwd", "no such folder: /nonexistent/folder"),
        (_agent(), __file__, "cwd", "not a folder"),
    ],
    ids=["NUL in an argument", "NUL in an env value", "= in an env name", "empty env name", "NUL in the command", "NUL in cwd", "missing cwd", "cwd a file"],
)
async def test_agent_definitions_are_refused_on_arrival_naming_the_field(agent: dict[str, Any], cwd: str | None, field: str, problem: str) -> None:
    raw = await raw_backend()
    with trio.fail_after(GUARD):
        request = chat_request(1, "Hello", **({"cwd": cwd} if cwd is not None else {}))
        request["params"]["agent"] = agent
        await raw.send(request)
        error = (await raw.response(1))["error"]
        assert error["code"] == -32602 and f"{field}: " in error["message"] and problem in error["message"], error
        assert "s3cr" not in error["message"]  # an env value is never echoed
        # The model list leaves the bad agent out and lists the others.
        await raw.send({"jsonrpc": "2.0", "id": 2, "method": "lm/provideLanguageModelChatInformation", "params": {
            "agents": [{"id": "bad", "name": "Bad", "agent": agent}, {"id": "good", "name": "Good", "agent": _agent()}]}})
        models = [m["id"] for m in (await raw.response(2))["result"]["models"]]
        assert models == ["symposium-eliza", "good"] if cwd is None else ["symposium-eliza", "bad", "good"]
        await still_answers(raw)
        await finish(raw)


async def test_running_out_of_file_descriptors_fails_one_request_saying_so() -> None:
    limit = 64
    process = await trio.lowlevel.open_process(
        ["sh", "-c", f'ulimit -n {limit} && exec "$0" -m symposium vscodelm', sys.executable],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    raw = Raw(process)
    with trio.fail_after(GUARD * 2):
        first = chat_request(0, "I am sad")
        await raw.send(first)
        reply: dict[str, Any] = {"role": "assistant", "content": []}
        while (msg := await raw.receive()).get("id") != 0:
            if msg.get("method") == "lm/responsePart":
                reply["content"].append(msg["params"]["part"])
        assert msg.get("result") == {}
        # One conversation after another, each with an agent process of its own (whose pipes are
        # descriptors; a conversation itself holds none), until one cannot start.
        for id in range(1, limit + 10):
            await raw.send(chat_request(id, f"Hello number {id}", agent=_agent(env=[{"name": "RUN", "value": str(id)}])))
            while (msg := await raw.receive()).get("id") != id:
                pass
            if "error" in msg:
                break
        else:
            raise AssertionError(f"{limit + 10} conversations under ulimit -n {limit} and no error")
        error = msg["error"]
        assert error["code"] == -32000 and error["data"]["kind"] == "resource_exhausted", error
        assert "too many open files" in error["message"], error
        # Nothing else is lost: the first conversation goes on, and the backend ends cleanly.
        again = chat_request("again", "I am sad")
        again["params"]["messages"] = [first["params"]["messages"][0], reply, user("I am sad")]
        await raw.send(again)
        while (msg := await raw.receive()).get("id") != "again":
            pass
        assert msg.get("result") == {}, msg
        await finish(raw)


async def test_a_state_folder_that_cannot_be_used_costs_memory_across_restarts_not_the_chat(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    async with BackendClient.spawn(["vscodelm"], env={"SYMPOSIUM_STATE_DIR": str(blocker / "state")}) as backend:
        with trio.fail_after(GUARD):
            first = await backend.chat([user("Hello")], agent=ELIZA)
            again = await backend.chat([user("Hello"), first.assistant_message(), user("I feel sad")], agent=ELIZA)
    assert first.text() == HELLO_REPLY and again.completed and again.error is None


def test_resource_exhaustion_is_named_for_what_ran_out() -> None:
    for number, words in [(errno.EMFILE, "too many open files"), (errno.ENOMEM, "out of memory"), (errno.EAGAIN, "no more processes")]:
        error = resource_failure("start agent 'x'", OSError(number, os.strerror(number)))
        assert error is not None and error.kind == "resource_exhausted" and words in error.message
    assert resource_failure("start agent 'x'", OSError(errno.ENOENT, "No such file or directory")) is None
