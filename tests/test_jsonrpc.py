"""The NDJSON JSON-RPC peer: framing, classification, and the defects trio-jsonrpc had."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

from protocol.jsonrpc import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    ConnectionClosed,
    Invalid,
    LineSplitter,
    Notification,
    Overlong,
    Peer,
    Request,
    Response,
    RpcError,
    classify,
)

# Pure parts ---------------------------------------------------------------------------------


def test_splitter_joins_partial_lines_and_splits_many() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a":') == []
    assert splitter.feed(b'1}\n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert splitter.feed(b":3}\n") == [b'{"c":3}']
    assert splitter.leftover() is None


def test_splitter_bounds_memory_and_reports_overlong_lines_once() -> None:
    splitter = LineSplitter(max_line=10)
    assert splitter.feed(b"x" * 8) == []
    assert splitter.feed(b"y" * 8) == []  # over the limit: discarding, not buffering
    assert splitter.feed(b"z" * 100) == []
    assert splitter.feed(b"zz\nok\n") == [Overlong(118), b"ok"]


def test_splitter_leftover_is_the_unterminated_last_line() -> None:
    splitter = LineSplitter()
    splitter.feed(b'{"a":1}')
    assert splitter.leftover() == b'{"a":1}'


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"m","params":{}}', Request(1, "m", {})),
        (b'{"jsonrpc":"2.0","id":"abc","method":"m"}', Request("abc", "m", None)),
        (b'{"jsonrpc":"2.0","method":"n","params":[1]}', Notification("n", [1])),
        (b'{"jsonrpc":"2.0","id":0,"result":null}', Response(0, None)),
    ],
)
def test_classify_messages(line: bytes, expected: Any) -> None:
    assert classify(line) == expected


def test_classify_error_response_keeps_code_and_data() -> None:
    msg = classify(b'{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"boom","data":{"kind":"x"}}}')
    assert isinstance(msg, Response) and msg.error is not None
    assert (msg.error.code, msg.error.message, msg.error.data) == (-32000, "boom", {"kind": "x"})


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"{not json", PARSE_ERROR),
        (b"[1, 2]", INVALID_REQUEST),
        (b"42", INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":1,"method":7}', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0"}', INVALID_REQUEST),
    ],
)
def test_classify_bad_lines_get_an_error_reply(line: bytes, code: int) -> None:
    msg = classify(line)
    assert isinstance(msg, Invalid) and msg.reply is not None
    assert msg.reply["error"]["code"] == code


def test_malformed_response_is_dropped_not_answered() -> None:
    # Answering it would start an error ping-pong between two peers.
    msg = classify(b'{"jsonrpc":"2.0","id":5}')
    assert isinstance(msg, Invalid) and msg.reply is None


# The peer over an in-memory stream ---------------------------------------------------------------


class Wire:
    """The far end of a Peer, as raw lines."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.splitter = LineSplitter()
        self.pending: list[bytes] = []

    async def send(self, obj: Any) -> None:
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        await self.stream.send_all(data + b"\n")

    async def receive(self) -> dict[str, Any]:
        while not self.pending:
            data = await self.stream.receive_some()
            assert data, "peer closed"
            self.pending.extend(self.splitter.feed(data))  # type: ignore[arg-type]
        return json.loads(self.pending.pop(0))


@pytest.fixture
async def pair(nursery: trio.Nursery) -> tuple[Peer, Wire]:
    ours, theirs = trio.testing.memory_stream_pair()
    peer = Peer(ours, name="test", max_line=1000)

    async def echo(params: Any, _id: Any) -> Any:
        return params

    async def nothing(params: Any, _id: Any) -> None:
        return None

    async def wait_forever(params: Any, _id: Any) -> None:
        await trio.sleep_forever()

    async def fail(params: Any, _id: Any) -> None:
        raise RpcError(-32000, "it failed", {"kind": "test"})

    async def crash(params: Any, _id: Any) -> None:
        raise ValueError("bug")

    peer.on_request("echo", echo)
    peer.on_request("null", nothing)
    peer.on_request("wait", wait_forever)
    peer.on_request("fail", fail)
    peer.on_request("crash", crash)
    nursery.start_soon(peer.serve)
    return peer, Wire(theirs)


async def test_requests_are_answered_with_results_including_null(pair: tuple[Peer, Wire]) -> None:
    _, wire = pair
    await wire.send({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": 1}})
    assert await wire.receive() == {"jsonrpc": "2.0", "id": 1, "result": {"x": 1}}
    await wire.send({"jsonrpc": "2.0", "id": "s", "method": "null"})
    assert await wire.receive() == {"jsonrpc": "2.0", "id": "s", "result": None}


async def test_errors_unknown_methods_and_crashing_handlers(pair: tuple[Peer, Wire]) -> None:
    _, wire = pair
    await wire.send({"jsonrpc": "2.0", "id": 1, "method": "fail"})
    assert (await wire.receive())["error"] == {"code": -32000, "message": "it failed", "data": {"kind": "test"}}
    await wire.send({"jsonrpc": "2.0", "id": 2, "method": "nope"})
    assert (await wire.receive())["error"]["code"] == METHOD_NOT_FOUND
    await wire.send({"jsonrpc": "2.0", "id": 3, "method": "crash"})
    reply = await wire.receive()
    assert reply["id"] == 3 and reply["error"]["code"] == -32603 and "bug" in reply["error"]["message"]


async def test_bad_lines_get_errors_and_the_peer_keeps_serving(pair: tuple[Peer, Wire]) -> None:
    _, wire = pair
    await wire.send(b"this is not json")
    assert (await wire.receive())["error"]["code"] == PARSE_ERROR
    await wire.send(b"x" * 5000)
    reply = await wire.receive()
    assert reply["error"]["code"] == PARSE_ERROR and "exceeds" in reply["error"]["message"]
    await wire.send({"jsonrpc": "2.0", "id": 9, "method": "echo", "params": [1]})
    assert (await wire.receive())["result"] == [1]


async def test_slow_request_does_not_block_others(pair: tuple[Peer, Wire]) -> None:
    peer, wire = pair
    await wire.send({"jsonrpc": "2.0", "id": 1, "method": "wait"})
    await wire.send({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {}})
    assert (await wire.receive())["id"] == 2
    assert peer.cancel_inbound(1)
    assert await wire.receive() == {"jsonrpc": "2.0", "id": 1, "error": {"code": REQUEST_CANCELLED, "message": "Request cancelled"}}


async def test_ids_keep_their_json_type(pair: tuple[Peer, Wire]) -> None:
    peer, wire = pair
    await wire.send({"jsonrpc": "2.0", "id": 1, "method": "wait"})
    await wire.send({"jsonrpc": "2.0", "id": "1", "method": "echo", "params": {}})
    assert (await wire.receive())["id"] == "1"
    assert not peer.cancel_inbound("2")
    assert peer.cancel_inbound(1)
    assert (await wire.receive())["id"] == 1


async def test_outbound_request_and_cancel_then_late_reply_is_dropped(pair: tuple[Peer, Wire]) -> None:
    peer, wire = pair
    scope = trio.CancelScope()

    async def caller() -> None:
        with scope:
            await peer.request("slow", {"n": 1})

    async with trio.open_nursery() as nursery:
        nursery.start_soon(caller)
        sent = await wire.receive()
        assert sent["method"] == "slow"
        scope.cancel()  # the caller gives up before the reply
    assert scope.cancelled_caught
    await wire.send({"jsonrpc": "2.0", "id": sent["id"], "result": "late"})  # dropped quietly, no error back

    async def answer() -> None:
        request = await wire.receive()
        await wire.send({"jsonrpc": "2.0", "id": request["id"], "result": None})

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer)
        assert await peer.request("next") is None  # the connection is still healthy


async def test_stray_response_is_not_answered(pair: tuple[Peer, Wire]) -> None:
    _, wire = pair
    await wire.send({"jsonrpc": "2.0", "id": 12345, "result": {}})
    await wire.send({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": ["x"]})
    # The first thing back is the echo: the stray response produced nothing.
    assert await wire.receive() == {"jsonrpc": "2.0", "id": 1, "result": ["x"]}


async def test_outbound_error_and_connection_closed(pair: tuple[Peer, Wire]) -> None:
    peer, wire = pair

    async def answer_then_close() -> None:
        request = await wire.receive()
        await wire.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}})
        await wire.receive()
        await wire.stream.aclose()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer_then_close)
        with pytest.raises(RpcError) as info:
            await peer.request("a")
        assert info.value.code == -32601
        with pytest.raises(ConnectionClosed):
            await peer.request("b")
    await peer.eof.wait()
    with pytest.raises(ConnectionClosed):
        await peer.request("c")


async def test_notifications_run_in_order(nursery: trio.Nursery) -> None:
    ours, theirs = trio.testing.memory_stream_pair()
    peer = Peer(ours, name="t")
    seen: list[Any] = []

    async def record(params: Any) -> None:
        seen.append(params)

    peer.on_notification("n", record)
    nursery.start_soon(peer.serve)
    wire = Wire(theirs)
    for i in range(50):
        await wire.send({"jsonrpc": "2.0", "method": "n", "params": [i]})
    await wire.stream.aclose()
    await peer.eof.wait()
    assert seen == [[i] for i in range(50)]
