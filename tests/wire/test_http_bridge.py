"""`vscode_tools` over MCP's Streamable HTTP, for agents that take no stdio server (docs/DESIGN.md, "Tool bridge").

The bridge's HTTP entry, reached with the real `mcp` SDK's HTTP client: without the entry's bearer
secret, or with another, nothing is served; with it, the same tools as the stdio relay, and a call is
taken only while a prompt runs. The listener ends with the bridge.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
import trio

from actors.bridge.listener import BridgeListener
from actors.bridge.tool_bridge import ToolBridge
from protocol.bridge.mcp_transport import HTTP, STDIO
from protocol.turn.events import ToolRequested
from protocol.turn.rules import NO_PROMPT_CALL
from protocol.vscode.lm import TextPart, Tool, ToolResultPart
from symposium.launch import RELAY

GUARD = 60
TOOLS = (Tool("read_notes", "Read contents of a file", {"type": "object", "properties": {"path": {"type": "string"}}}),)


async def _bridge(nursery: trio.Nursery) -> tuple[ToolBridge, trio.MemoryReceiveChannel[Any], dict[str, Any]]:
    events_send, events = trio.open_memory_channel[Any](100)
    bridge = ToolBridge(events_send, BridgeListener(nursery, RELAY))
    await nursery.start(bridge.run, TOOLS)
    return bridge, events, await bridge.entry_for(HTTP)


def _client(url: str, headers: dict[str, str]) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers=headers, timeout=GUARD)
    return Client(streamable_http_client(url, http_client=http), mode="legacy", read_timeout_seconds=GUARD)


def _headers(entry: dict[str, Any]) -> dict[str, str]:
    return {h["name"]: h["value"] for h in entry["headers"]}


async def test_the_entry_is_acp_http_with_a_bearer_secret_and_stdio_stays_the_default(nursery: trio.Nursery) -> None:
    bridge, _, entry = await _bridge(nursery)
    assert entry["type"] == "http" and entry["name"] == "vscode_tools"
    assert entry["url"].startswith("http://127.0.0.1:") and entry["url"].endswith("/mcp")
    [(name, value)] = _headers(entry).items()
    assert name == "Authorization" and value.startswith("Bearer ") and len(value) > 40
    assert value.removeprefix("Bearer ") != bridge.token  # not the relay's secret
    assert "command" in await bridge.entry_for(STDIO)
    assert await bridge.entry_for(HTTP) == entry  # one listener per bridge
    bridge.close()


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}], ids=["none", "wrong", "basic"])
async def test_a_request_without_the_secret_is_refused_unread(nursery: trio.Nursery, headers: dict[str, str]) -> None:
    bridge, _, entry = await _bridge(nursery)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with trio.fail_after(GUARD):
        async with httpx2.AsyncClient(headers=headers) as http:
            response = await http.post(entry["url"], json=body, headers={"Accept": "application/json, text/event-stream"})
        assert response.status_code == 401
        assert "read_notes" not in response.text
        with pytest.raises(Exception):  # noqa: B017 - how the SDK's client fails on a 401 is not its API
            async with _client(entry["url"], headers) as client:
                await client.list_tools()
    bridge.close()


async def test_with_the_secret_the_tools_are_listed_and_called_only_while_a_prompt_runs(nursery: trio.Nursery) -> None:
    bridge, events, entry = await _bridge(nursery)
    with trio.fail_after(GUARD):
        async with _client(entry["url"], _headers(entry)) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == ["read_notes"]
            refused = await client.call_tool("read_notes", {"path": "a"})
            assert refused.is_error and refused.content[0].text == NO_PROMPT_CALL

            bridge.accept_calls(True)  # a prompt runs

            async def vscode() -> None:
                call: ToolRequested = await events.receive()
                assert (call.name, call.arguments) == ("read_notes", {"path": "a"})
                call.handle.answer(ToolResultPart("sym-1", (TextPart("the notes"),)))

            nursery.start_soon(vscode)
            done = await client.call_tool("read_notes", {"path": "a"})
            assert not done.is_error and done.content[0].text == "the notes"
            bridge.accept_calls(False)
    bridge.close()
    with trio.fail_after(GUARD):
        await bridge.ended.wait()
        with pytest.raises(OSError):
            await trio.open_tcp_stream("127.0.0.1", int(entry["url"].rsplit(":", 1)[1].split("/")[0]))


async def test_the_secret_is_in_no_transcript(nursery: trio.Nursery, tmp_path: Any) -> None:
    from actors.store.transcript import Recorder

    recorder = Recorder(tmp_path / "traces")
    events_send, _events = trio.open_memory_channel[Any](100)
    bridge = ToolBridge(events_send, BridgeListener(nursery, RELAY), recorder=recorder)
    await nursery.start(bridge.run, TOOLS)
    entry = await bridge.entry_for(HTTP)
    secret = _headers(entry)["Authorization"].removeprefix("Bearer ")
    # session/new as the agent's channel records it, and the MCP traffic over HTTP.
    recorder.channel("agent 1 copilot")("send", {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": [entry]}})
    with trio.fail_after(GUARD):
        async with _client(entry["url"], _headers(entry)) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["read_notes"]
    bridge.close()
    recorder.close()
    assert recorder.path is not None
    text = recorder.path.read_text()
    assert secret not in text and "session/new" in text and "read_notes" in text


async def test_garbage_and_oversized_requests_cost_their_connection_only(nursery: trio.Nursery) -> None:
    from actors.bridge.http_server import MAX_BODY

    bridge, _, entry = await _bridge(nursery)
    port = int(entry["url"].rsplit(":", 1)[1].split("/")[0])
    with trio.fail_after(GUARD):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(b"\x00\x01 not http at all\r\n\r\n")
        assert await stream.receive_some(4096) == b""  # closed unanswered
        await stream.aclose()
        async with httpx2.AsyncClient(headers=_headers(entry)) as http:
            response = await http.post(entry["url"], content=b"x" * (MAX_BODY + 1), headers={"Content-Type": "application/json"})
        assert response.status_code == 413
        async with _client(entry["url"], _headers(entry)) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["read_notes"]
    bridge.close()


async def _idle(port: int, count: int, head: bytes = b"") -> list[trio.SocketStream]:
    """`count` local connections that send `head` (nothing, or part of a request without the secret) and wait."""
    streams = []
    for _ in range(count):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        if head:
            await stream.send_all(head)
        streams.append(stream)
    return streams


async def _agent_calls(bridge: ToolBridge, events: trio.MemoryReceiveChannel[Any], entry: dict[str, Any], nursery: trio.Nursery) -> None:
    """What the agent does with its secret: list the tools, and call one while a prompt runs."""
    async with _client(entry["url"], _headers(entry)) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["read_notes"]
        bridge.accept_calls(True)

        async def vscode() -> None:
            call: ToolRequested = await events.receive()
            call.handle.answer(ToolResultPart("sym-1", (TextPart("the notes"),)))

        nursery.start_soon(vscode)
        done = await client.call_tool("read_notes", {"path": "a"})
        assert not done.is_error and done.content[0].text == "the notes"
        bridge.accept_calls(False)


@pytest.mark.parametrize("head", [b"", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "], ids=["silent", "half-a-request"])
async def test_idle_local_connections_do_not_keep_the_agent_out(nursery: trio.Nursery, head: bytes) -> None:
    from actors.bridge.http_server import MAX_CONNECTIONS

    bridge, events, entry = await _bridge(nursery)
    port = int(entry["url"].rsplit(":", 1)[1].split("/")[0])
    with trio.fail_after(GUARD):
        idle = await _idle(port, MAX_CONNECTIONS, head)  # as many as the bridge has slots
        await _agent_calls(bridge, events, entry, nursery)
        for stream in idle:
            await stream.aclose()
    bridge.close()


async def test_any_number_of_idle_connections_cost_a_bounded_few_and_keep_nobody_out(nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch) -> None:
    from actors.bridge import http_server as http_bridge

    monkeypatch.setattr(http_bridge, "AUTH_TIMEOUT", GUARD * 2)  # only room for newer ones closes them here
    bridge, events, entry = await _bridge(nursery)
    port = int(entry["url"].rsplit(":", 1)[1].split("/")[0])
    more = http_bridge.MAX_PENDING + http_bridge.MAX_CONNECTIONS
    with trio.fail_after(GUARD):
        idle = await _idle(port, more)
        await _agent_calls(bridge, events, entry, nursery)
        # The oldest were closed to make room: the bridge holds at most MAX_PENDING unauthenticated.
        for stream in idle[: more - http_bridge.MAX_PENDING]:
            assert await stream.receive_some(4096) == b""
        for stream in idle:
            await stream.aclose()
    bridge.close()


async def test_a_connection_that_does_not_authenticate_in_time_is_closed(nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch) -> None:
    from actors.bridge import http_server as http_bridge

    monkeypatch.setattr(http_bridge, "AUTH_TIMEOUT", 0.5)
    bridge, _, entry = await _bridge(nursery)
    port = int(entry["url"].rsplit(":", 1)[1].split("/")[0])
    with trio.fail_after(GUARD):
        silent, partial = await _idle(port, 1) + await _idle(port, 1, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert await silent.receive_some(4096) == b""  # closed unanswered
        assert await partial.receive_some(4096) == b""
        await silent.aclose()
        await partial.aclose()
    bridge.close()


async def test_a_partial_secret_another_host_or_another_origin_is_refused(nursery: trio.Nursery) -> None:
    bridge, _, entry = await _bridge(nursery)
    secret = _headers(entry)["Authorization"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    with trio.fail_after(GUARD):
        async with httpx2.AsyncClient() as http:
            for headers in ({"Authorization": secret[:-1]}, {"Authorization": secret + "x"}, {"Authorization": secret.lower()}):
                response = await http.post(entry["url"], json=body, headers={**accept, **headers})
                assert response.status_code == 401 and "read_notes" not in response.text
            for headers in ({"Host": "evil.example"}, {"Origin": "http://evil.example"}):
                response = await http.post(entry["url"], json=body, headers={**accept, "Authorization": secret, **headers})
                assert response.status_code in (403, 421) and "read_notes" not in response.text
            response = await http.post(entry["url"], json=body, headers={**accept, "Authorization": secret})
            assert response.status_code == 200 and "read_notes" in response.text
    bridge.close()
