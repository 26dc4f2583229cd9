"""VS Code tools bridged to the agent as the MCP server `vscode_tools` (docs/DESIGN.md, "Tool bridge").

Through a real `symposium vscodelm`: Eliza (a real MCP client, through the real relay)
lists and calls the tools VS Code offered; every call surfaces as a `tool_call` part, and the
next request's tool result goes back to the agent.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from actors.bridge.listener import MAX_HANDSHAKES, BridgeListener
from actors.bridge.mcp_stream import MAX_IN_FLIGHT
from actors.bridge.tool_bridge import ToolBridge
from protocol.bridge.tool_names import ToolNames
from protocol.turn.events import ToolRequested
from protocol.turn.rules import NO_PROMPT_CALL
from protocol.vscode.lm import TextPart, Tool, ToolResultPart
from symposium.client import ELIZA, BackendClient, ChatResult, tool_result, user
from symposium.launch import RELAY
from symposium.vscodelm import task_count

GUARD = 60


def tool(name: str, description: str = "", **properties: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}}
    return {"name": name, "description": description or f"The {name} tool", "inputSchema": schema}


READ = tool("read_notes", "Read contents of a file", path="string")
WRITE = tool("write_notes", "Write contents to a file", path="string", text="string")
SEARCH = tool("search", "Search the workspace", query="string")


def answer(result: ChatResult, outputs: dict[str, str]) -> list[dict[str, Any]]:
    """VS Code's next messages: our assistant message, then one user message per tool result."""
    return [result.assistant_message(), *(tool_result(c["toolCallId"], outputs[c["toolName"]]) for c in result.tool_calls())]


async def test_eliza_lists_the_tools_vscode_offers_and_sees_changes(backend: BackendClient) -> None:
    with trio.fail_after(GUARD):
        history = [user("list tools from vscode_tools")]
        first = await backend.chat(history, agent=ELIZA, tools=[READ, WRITE])
        history += [first.assistant_message(), user("list tools from vscode_tools")]
        second = await backend.chat(history, agent=ELIZA, tools=[SEARCH])
    assert first.text() == "Available tools:\n  - read_notes: Read contents of a file\n  - write_notes: Write contents to a file"
    assert second.text() == "Available tools:\n  - search: Search the workspace"


async def test_one_tool_call_round_trip(backend: BackendClient) -> None:
    history = [user('use tool vscode_tools::read_notes with {"path": "/tmp/test.txt"}')]
    with trio.fail_after(GUARD):
        call = await backend.chat(history, agent=ELIZA, tools=[READ, WRITE])
        assert call.completed and call.error is None
        [part] = call.tool_calls()
        assert part["toolName"] == "read_notes" and part["parameters"] == {"path": "/tmp/test.txt"}
        assert part["toolCallId"].startswith("sym-")
        history += answer(call, {"read_notes": "Hello from the file!"})
        done = await backend.chat(history, agent=ELIZA, tools=[READ, WRITE])
    assert done.error is None and done.completed
    assert done.text() == "OK: Hello from the file!"


async def test_tools_whose_names_no_model_api_takes_are_listed_by_safe_names_and_called_by_their_own(backend: BackendClient) -> None:
    # docs/DESIGN.md, "Tool names": a dot, a space, 80 characters; the agent sees names within
    # ^[a-zA-Z0-9_-]{1,64}$ with its `mcp__vscode_tools__` prefix, and VS Code gets its own names back.
    dotted, spaced, long = tool("notes.read", "Read notes", path="string"), tool("my notes", "Notes"), tool("n" * 80, "Long")
    names = ToolNames.of(t["name"] for t in (dotted, spaced, long))
    with trio.fail_after(GUARD):
        listed = await backend.chat([user("list tools from vscode_tools")], agent=ELIZA, tools=[dotted, spaced, long, READ])
        history = [user('use tool vscode_tools::notes_read with {"path": "a.md"}')]
        call = await backend.chat(history, agent=ELIZA, tools=[dotted, spaced, long, READ])
        [part] = call.tool_calls()
        history += answer(call, {"notes.read": "the notes"})
        done = await backend.chat(history, agent=ELIZA, tools=[dotted, spaced, long, READ])
    safe_long = names.agent("n" * 80)
    assert len("mcp__vscode_tools__" + safe_long) == 64
    assert listed.text() == f"Available tools:\n  - notes_read: Read notes\n  - my_notes: Notes\n  - {safe_long}: Long\n  - read_notes: Read contents of a file"
    assert part["toolName"] == "notes.read" and part["parameters"] == {"path": "a.md"}
    assert done.text() == "OK: the notes"


async def test_parallel_calls_to_three_tools_go_to_vscode_in_one_response(backend: BackendClient) -> None:
    command = (
        'use tools vscode_tools::read_notes with {"path": "a.py"} and vscode_tools::search with {"query": "TODO"}'
        ' and vscode_tools::write_notes with {"path": "b.py", "text": "x"}'
    )
    history = [user(command)]
    with trio.fail_after(GUARD):
        calls = await backend.chat(history, agent=ELIZA, tools=[READ, WRITE, SEARCH])
        assert sorted(c["toolName"] for c in calls.tool_calls()) == ["read_notes", "search", "write_notes"]
        assert len({c["toolCallId"] for c in calls.tool_calls()}) == 3
        history += answer(calls, {"read_notes": "print(1)", "search": "3 matches", "write_notes": "written"})
        done = await backend.chat(history, agent=ELIZA, tools=[READ, WRITE, SEARCH])
    assert done.error is None
    assert done.text() == "read_notes: OK: print(1)\nsearch: OK: 3 matches\nwrite_notes: OK: written"


async def test_sequential_calls_to_two_tools_take_one_round_trip_each(backend: BackendClient) -> None:
    history = [user('use tools vscode_tools::search with {"query": "main"} then vscode_tools::read_notes with {"path": "main.py"}')]
    names = []
    with trio.fail_after(GUARD):
        result = await backend.chat(history, agent=ELIZA, tools=[READ, SEARCH])
        while result.tool_calls():
            names.append([c["toolName"] for c in result.tool_calls()])
            history += answer(result, {"search": "main.py:1", "read_notes": "def main(): ..."})
            result = await backend.chat(history, agent=ELIZA, tools=[READ, SEARCH])
    assert names == [["search"], ["read_notes"]]
    assert result.text() == "search: OK: main.py:1\nread_notes: OK: def main(): ..."


async def test_vscode_moving_on_while_a_tool_is_pending_cancels_it_and_the_next_prompt_works(backend: BackendClient) -> None:
    history = [user('use tool vscode_tools::read_notes with {"path": "x"}')]
    with trio.fail_after(GUARD):
        call = await backend.chat(history, agent=ELIZA, tools=[READ])
        assert call.tool_calls()
        # The user cancelled the tool: VS Code drops the call and the next prompt comes.
        after = await backend.chat([*history, user("Hello")], agent=ELIZA, tools=[READ])
    assert after.error is None
    assert after.text() == "How do you do. Please state your problem."


async def test_a_turn_with_results_and_a_new_turn_of_the_users_is_not_consumed_as_results(backend: BackendClient) -> None:
    """Copilot at its request limit: the pending call's result, then the user's new message (a turn of
    the user's as Copilot sends one): the user moved on, and the new message is answered."""
    history = [user('use tool vscode_tools::read_notes with {"path": "x"}')]
    with trio.fail_after(GUARD):
        call = await backend.chat(history, agent=ELIZA, tools=[READ])
        history += [*answer(call, {"read_notes": "content"}), user("<context>\nThe current date is today.\n</context>\n<userRequest>\nHello\n</userRequest>")]
        after = await backend.chat(history, agent=ELIZA, tools=[READ])
    assert after.text() == "How do you do. Please state your problem."


async def test_results_followed_by_the_consumers_own_note_carry_the_agents_turn_on(backend: BackendClient) -> None:
    """A consumer with its own tool loop (prompt-tsx's, in Microsoft's chat sample) adds a note after
    the results: the awaited call is answered with its result and the note after it, and the note
    is not a new turn."""
    history = [user('use tool vscode_tools::read_notes with {"path": "x"}')]
    note = user("Above is the result of calling one or more tools. The user cannot see the results, so you should explain them to the user if referencing them in your answer.")
    with trio.fail_after(GUARD):
        call = await backend.chat(history, agent=ELIZA, tools=[READ])
        history += [*answer(call, {"read_notes": "content"}), note]
        after = await backend.chat(history, agent=ELIZA, tools=[READ])
    assert after.text() == f"OK: content\n{note['content'][0]['value']}"


# The bridge itself, with the SDK's client through the relay ----------------------------------------


# Both transports: the Unix socket where there is one, and the loopback fallback (Windows).
TRANSPORTS = [pytest.param(True, id="unix"), pytest.param(False, id="loopback")]


async def _bridge(nursery: trio.Nursery, tools: tuple[Tool, ...], *, unix: bool = True) -> tuple[ToolBridge, trio.MemoryReceiveChannel[Any]]:
    events_send, events = trio.open_memory_channel[Any](100)
    bridge = ToolBridge(events_send, BridgeListener(nursery, RELAY, unix=unix))
    await nursery.start(bridge.run, tools)
    bridge.accept_calls(True)  # as while a prompt runs
    return bridge, events


def _client(bridge: ToolBridge, key: str | None = None, handler: Any = None) -> Any:
    """The SDK's client through the relay, as the bridge's entry starts it (`key`: another key file)."""
    from mcp import Client, StdioServerParameters

    entry = bridge.entry()
    args = entry["args"] if key is None else [*entry["args"][:-1], key]
    params = StdioServerParameters(command=entry["command"], args=args, env={"PATH": "/usr/bin:/bin"})
    return Client(params, mode="legacy", read_timeout_seconds=GUARD, message_handler=handler)


async def _connect(bridge: ToolBridge) -> trio.SocketStream:
    """A bare connection to the bridge's listener, nothing said yet."""
    assert bridge.endpoint is not None
    if bridge.endpoint.socket_path is not None:
        return await trio.open_unix_socket(bridge.endpoint.socket_path)
    assert bridge.endpoint.port is not None
    return await trio.open_tcp_stream("127.0.0.1", bridge.endpoint.port)


def _key_file(tmp_path: Path, token: str) -> str:
    path = tmp_path / "key"
    path.write_text(token + "\n")
    path.chmod(0o600)
    return str(path)


@pytest.mark.parametrize("unix", TRANSPORTS)
async def test_list_changed_reaches_a_connected_client_and_calls_get_vscode_results(nursery: trio.Nursery, unix: bool) -> None:
    import mcp.types as types

    bridge, events = await _bridge(nursery, (Tool("a", "tool a", {"type": "object"}), Tool("odd", "", "not a schema")), unix=unix)
    changed = trio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(getattr(message, "root", message), types.ToolListChangedNotification):
            changed.set()

    with trio.fail_after(GUARD):
        async with _client(bridge, handler=on_message) as client:
            listed = (await client.list_tools()).tools
            assert [(t.name, t.input_schema) for t in listed] == [("a", {"type": "object"}), ("odd", {"type": "object"})]

            async def vscode() -> None:
                call: ToolRequested = await events.receive()
                assert (call.name, call.arguments) == ("a", {"x": 1})
                call.handle.answer(ToolResultPart("sym-1", (TextPart("result text"),)))

            nursery.start_soon(vscode)
            result = await client.call_tool("a", {"x": 1})
            assert [c.text for c in result.content] == ["result text"] and not result.is_error
            unknown = await client.call_tool("nope", {})
            assert unknown.is_error and "not found" in unknown.content[0].text
            bridge.update_tools((Tool("b", "tool b", {"type": "object"}),))
            await changed.wait()
            assert [t.name for t in (await client.list_tools()).tools] == ["b"]
            # Between prompts (the turn machine's AcceptToolCalls): refused at once, VS Code never asked.
            bridge.accept_calls(False)
            refused = await client.call_tool("b", {})
            assert refused.is_error and refused.content[0].text == NO_PROMPT_CALL
            assert events.statistics().current_buffer_used == 0


@pytest.mark.parametrize("unix", TRANSPORTS)
async def test_a_wrong_or_absent_relay_secret_is_refused_and_logged(nursery: trio.Nursery, caplog: pytest.LogCaptureFixture, tmp_path: Path, unix: bool) -> None:
    bridge, events = await _bridge(nursery, (Tool("a", "", {}),), unix=unix)
    with trio.fail_after(GUARD), caplog.at_level(logging.WARNING):
        with pytest.raises(BaseException):  # noqa: B017 - the SDK wraps it in exception groups
            async with _client(bridge, _key_file(tmp_path, "not-the-token")) as client:
                await client.list_tools()
        assert "refused a connection: wrong token" in caplog.text
        # No secret at all: the connection says nothing, or closes at once, or sends MCP at once.
        hello = b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}\n'
        for said in [b"", b"\n", hello]:
            stream = await _connect(bridge)
            await stream.send_all(said)
            if not said:
                await stream.send_eof()
            assert await stream.receive_some() == b"", said  # closed, nothing served
            await stream.aclose()
    assert events.statistics().current_buffer_used == 0


def test_relay_needs_its_arguments_and_a_private_key_file(tmp_path: Path) -> None:
    import subprocess

    def relay(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*RELAY.command, *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)

    done = relay()
    assert done.returncode == 2 and "usage" in done.stderr
    done = relay("--socket", str(tmp_path / "s"), "--key", str(tmp_path / "missing"))
    assert done.returncode == 1 and "cannot read the key file" in done.stderr
    key = tmp_path / "key"
    key.write_text("k3y-v4lue\n")
    key.chmod(0o644)  # anyone could have read it: it is no secret
    done = relay("--socket", str(tmp_path / "s"), "--key", str(key))
    assert done.returncode == 1 and "is not this user's alone" in done.stderr and "k3y-v4lue" not in done.stderr


async def test_one_listener_serves_every_bridge_and_a_closed_bridge_takes_its_connections_along(
    nursery: trio.Nursery, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    listener = BridgeListener(nursery, RELAY)
    bridges = [ToolBridge(trio.open_memory_channel[Any](100)[0], listener) for _ in range(2)]
    key = _key_file(tmp_path, bridges[0].token)  # the first bridge's secret, kept after it ended
    first_ended = trio.Event()

    async def run_first(task_status: trio.TaskStatus[None]) -> None:
        try:
            await bridges[0].run((Tool("a", "tool a", {"type": "object"}),), task_status=task_status)
        finally:
            first_ended.set()

    await nursery.start(run_first)
    await nursery.start(bridges[1].run, (Tool("b", "tool b", {"type": "object"}),))
    assert bridges[0].endpoint == bridges[1].endpoint and len(listener) == 2
    first_key = bridges[0].key_path
    assert first_key is not None and os.path.exists(first_key)
    with trio.fail_after(GUARD):
        async with _client(bridges[1]) as second:
            with pytest.raises(BaseException):  # noqa: B017 - the SDK wraps the closed connection in groups
                async with _client(bridges[0]) as first:
                    assert [t.name for t in (await first.list_tools()).tools] == ["a"]
                    bridges[0].close()  # its conversation ended: its connection ends with it
                    await first_ended.wait()
                    await first.list_tools()
            assert len(listener) == 1 and not os.path.exists(first_key)  # its key file went with it
            with caplog.at_level(logging.WARNING), pytest.raises(BaseException):  # noqa: B017
                async with _client(bridges[0], key) as late:  # a released secret
                    await late.list_tools()
            assert "refused a connection: wrong token" in caplog.text
            assert [t.name for t in (await second.list_tools()).tools] == ["b"]


def _sockets() -> int:
    """This process's open sockets (a file some thread reads meanwhile is not counted)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:  # closed while we looked
            pass
    return count


@pytest.mark.parametrize("unix", TRANSPORTS)
async def test_connections_that_never_say_their_token_hold_few_descriptors_and_the_bridge_still_serves(nursery: trio.Nursery, unix: bool) -> None:
    bridge, _ = await _bridge(nursery, (Tool("a", "tool a", {"type": "object"}),), unix=unix)
    await trio.testing.wait_all_tasks_blocked()
    before = _sockets()
    with trio.fail_after(GUARD):
        silent = [await _connect(bridge) for _ in range(3 * MAX_HANDSHAKES)]
        await trio.testing.wait_all_tasks_blocked()
        # Ours (the clients') and the bridge's: the rest wait in the kernel's backlog.
        assert _sockets() - before == len(silent) + MAX_HANDSHAKES
        for stream in silent:
            await stream.aclose()
        async with _client(bridge) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["a"]


async def test_a_client_that_never_reads_its_answers_is_no_longer_read(nursery: trio.Nursery) -> None:
    # Large answers, so that the socket's buffers fill after a few and the bridge's writer waits.
    tools = tuple(Tool(f"t{i}", "x" * 4096, {"type": "object"}) for i in range(25))
    bridge, _ = await _bridge(nursery, tools)

    def request(id: int, method: str, **params: Any) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode() + b"\n"

    with trio.fail_after(GUARD):
        stream = await _connect(bridge)
        hello = request(0, "initialize", protocolVersion="2025-06-18", capabilities={}, clientInfo={"name": "t", "version": "0"})
        await stream.send_all(bridge.token.encode() + b"\n" + hello)
        answer = b""
        while b"\n" not in answer:  # the server is up (the SDK is imported in a thread on first use)
            answer += await stream.receive_some()
        assert b'"id":0,"result"' in answer
        initialized = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
        await stream.send_all(initialized + b"".join(request(n, "tools/list") for n in range(1, 501)))
        await trio.testing.wait_all_tasks_blocked()
        # Without a bound the SDK ran a task per request read, each holding its answer.
        assert task_count() < MAX_IN_FLIGHT + 40, task_count()
        await stream.aclose()
