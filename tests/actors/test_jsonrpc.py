"""The NDJSON JSON-RPC peer: framing, classification, and the defects trio-jsonrpc had."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.shared.peer import STRAY_LOGGED, ConnectionClosed, Peer
from protocol.shared.jsonrpc import (
    INVALID_REQUEST,
    MAX_DEPTH,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    Invalid,
    LineSplitter,
    Notification,
    Overlong,
    Request,
    Response,
    RpcError,
    classify,
    encode_lines,
    nesting_depth,
    parse_line,
    request_id_in,
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


def test_splitter_keeps_the_head_of_an_overlong_line() -> None:
    splitter = LineSplitter(max_line=10)
    [overlong] = splitter.feed(b'{"id":1,"method":"m"' + b"x" * 20 + b"\n")
    assert isinstance(overlong, Overlong) and overlong.head.startswith(b'{"id":1,"method":"m"')
    splitter.feed(b'{"id":2,')
    splitter.feed(b'"method":"m"' + b"y" * 10000)
    [overlong] = splitter.feed(b"\n")
    assert isinstance(overlong, Overlong) and overlong.head.startswith(b'{"id":2,"method":"m"yy') and overlong.size == 10020


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


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


# Strings full of what could fool a scanner: brackets, quotes, backslashes, escapes.
_tricky_text = st.text(alphabet='[]{}"\\/ab\n\u00e9\U0001f600', max_size=8)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_tricky_text, inner, max_size=3),
    max_leaves=30,
)


@settings(max_examples=300, derandomize=True, database=None)
@given(_json, st.booleans())
def test_nesting_depth_counts_structure_not_brackets_in_strings(value: Any, ascii_only: bool) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only).encode()
    depth = _depth(value)
    assert nesting_depth(line) == depth
    for limit in (1, 3):  # with a limit: exact beyond it, a bound within it
        bounded = nesting_depth(line, limit)
        assert bounded == depth if depth > limit else depth <= bounded <= limit


def test_parse_line_refuses_what_cannot_be_handled_and_reads_the_id_if_it_can() -> None:
    deep = b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}"
    ok = b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    assert isinstance(parse_line(deep), Invalid) and parse_line(deep).reply["id"] == 1  # type: ignore[union-attr]
    assert not isinstance(parse_line(ok), Invalid)
    for bad, problem in [
        (b'{"jsonrpc":"2.0","id":"a","method":"m","params":[NaN]}', "NaN"),
        (b'{"jsonrpc":"2.0","id":"a","method":"m","params":[-Infinity]}', "-Infinity"),
        (b'{"jsonrpc":"2.0","id":"a","method":"m","params":[1e400]}', "out of range"),
        (b'{"jsonrpc":"2.0","id":"a","method":"m","params":[' + b"9" * 5000 + b"]}", "4,300 digits"),
        (b'{"jsonrpc":"2.0","id":"a","method":"m","params":["\xff"]}', "invalid UTF-8"),
        (b'{"jsonrpc":"2.0","id":"a","method":"m","params":["trunc', "Unterminated"),
    ]:
        msg = parse_line(bad)
        assert isinstance(msg, Invalid) and msg.unreadable and msg.reply is not None
        assert msg.reply["id"] == "a" and msg.reply["error"]["code"] == PARSE_ERROR and problem in msg.reply["error"]["message"]


def test_lone_surrogates_are_replaced_except_in_an_id() -> None:
    assert parse_line(b'{"a":["x\\ud83d","\\ud83d\\ude00","\\\\ud83d"]}') == {"a": ["x\ufffd", "\U0001f600", "\\ud83d"]}
    msg = parse_line(b'{"jsonrpc":"2.0","id":"\\udc00","method":"m"}')
    assert isinstance(msg, Invalid) and msg.reply is not None and msg.reply["id"] is None


@pytest.mark.parametrize(
    ("head", "id"),
    [
        (b'{"jsonrpc":"2.0","id":12,"method":"m","params":{"x":', 12),
        (b' { "id" : "s-1" , "method":"m", "params":[[[', "s-1"),
        (b'{"method":"m","jsonrpc":"2.0","id":-3.5,"params":', -3.5),
        (b'{"jsonrpc":"2.0","params":{},"id":12,"method":"m"}', None),  # after a nested value: not read
        (b'{"jsonrpc":"2.0","id":12,"result":{"x"', None),  # a response: never answered
        (b'{"jsonrpc":"2.0","id":true,"method":"m","params"', None),
        (b'{"jsonrpc":"2.0","id":"\\ud800","method":"m","params"', None),
        (b'[{"id":1,"method":"m"}', None),
    ],
)
def test_request_id_in_the_head_of_a_broken_line(head: bytes, id: Any) -> None:
    assert request_id_in(head) == id


def test_encode_lines_repairs_what_json_cannot_carry() -> None:
    data = encode_lines(({"a": "x\ud83d", "b": float("nan"), "c": [float("inf")], "d": "\U0001f600"},))
    assert json.loads(data) == {"a": "x\ufffd", "b": None, "c": [None], "d": "\U0001f600"}
    assert data.decode().endswith("\n")


def test_malformed_response_fails_its_request_and_is_not_answered() -> None:
    # Left alone, the request it names would wait forever; answering it back would start an
    # error ping-pong between two peers.
    msg = classify(b'{"jsonrpc":"2.0","id":5}')
    assert isinstance(msg, Response) and msg.id == 5 and msg.error is not None and "malformed" in msg.error.message


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


async def test_batched_notifications_keep_their_order_among_other_messages(nursery: trio.Nursery) -> None:
    # An agent's flood of updates is handed over one list per read, but never after a message
    # read later (the prompt's reply must find every update of its turn already delivered).
    ours, theirs = trio.testing.memory_stream_pair()
    peer = Peer(ours, name="t")
    seen: list[Any] = []

    def batch(params: list[Any], size: int) -> None:
        assert size > 0  # the bytes of their lines, for the handler's backpressure
        seen.append(("u", params))
        if params == [["boom"]]:
            raise ValueError("a failing handler is logged; reading goes on")

    async def other(params: Any) -> None:
        seen.append(("other", params))

    peer.on_notifications("u", batch)
    peer.on_notification("other", other)
    nursery.start_soon(peer.serve)
    wire = Wire(theirs)

    async def answer() -> None:
        request = await wire.receive()
        lines = [
            {"jsonrpc": "2.0", "method": "u", "params": [0]},
            {"jsonrpc": "2.0", "method": "u", "params": [1]},
            {"jsonrpc": "2.0", "method": "other", "params": ["x"]},
            {"jsonrpc": "2.0", "method": "u", "params": [2]},
            {"jsonrpc": "2.0", "id": request["id"], "result": list(seen)},
            {"jsonrpc": "2.0", "method": "u", "params": ["boom"]},
        ]
        await wire.stream.send_all(b"".join(json.dumps(line).encode() + b"\n" for line in lines))  # one read
        await wire.send({"jsonrpc": "2.0", "method": "u", "params": [3]})
        await wire.stream.aclose()

    nursery.start_soon(answer)
    assert await peer.request("q") == []
    assert seen[:3] == [("u", [[0], [1]]), ("other", ["x"]), ("u", [[2]])]  # all read before the reply
    await peer.eof.wait()
    assert seen == [("u", [[0], [1]]), ("other", ["x"]), ("u", [[2]]), ("u", [["boom"]]), ("u", [[3]])]


async def test_an_unreadable_line_ends_a_connection_that_treats_it_as_fatal(nursery: trio.Nursery) -> None:
    # How the backend talks to agents: the unreadable line may have been the awaited reply,
    # so the request fails at once instead of waiting forever.
    ours, theirs = trio.testing.memory_stream_pair()
    peer = Peer(ours, name="agent", unreadable_is_fatal=True)
    nursery.start_soon(peer.serve)
    wire = Wire(theirs)

    async def answer_garbage() -> None:
        await wire.receive()
        await wire.send({"jsonrpc": "2.0", "id": 99, "result": "not ours"})  # odd but readable: dropped
        await wire.send(b'{"jsonrpc":"2.0","id":0,"result":"\xff\xfe"}')

    nursery.start_soon(answer_garbage)
    with pytest.raises(ConnectionClosed, match="invalid UTF-8"):
        await peer.request("session/prompt", {})
    assert peer.eof.is_set() and peer.failure == "invalid UTF-8 at byte 34"


async def test_a_stray_text_line_is_skipped_even_where_unreadable_lines_are_fatal(nursery: trio.Nursery, caplog: pytest.LogCaptureFixture) -> None:
    # An agent's CLI printing a log line on stdout: it cannot be a reply, so the connection stays.
    ours, theirs = trio.testing.memory_stream_pair()
    peer = Peer(ours, name="agent", unreadable_is_fatal=True)
    nursery.start_soon(peer.serve)
    wire = Wire(theirs)

    async def answer_after_noise() -> None:
        await wire.receive()
        await wire.send(b"Ignore file not found: /w/.geminiignore token=sk-ant-api03-Qm7vT2pXw9LcR4nYh8sKd3Fj6GbZ1eUa")
        for n in range(STRAY_LOGGED + 5):
            await wire.send(f"noise {n}".encode())
        await wire.send({"jsonrpc": "2.0", "id": 0, "result": "ok"})

    nursery.start_soon(answer_after_noise)
    with caplog.at_level(logging.WARNING, logger="actors.shared.peer"):
        assert await peer.request("session/new", {}) == "ok"
    assert peer.failure is None and not peer.eof.is_set() and peer.stray == STRAY_LOGGED + 6
    logged = [r.getMessage() for r in caplog.records if "not JSON-RPC" in r.getMessage()]
    assert len(logged) == STRAY_LOGGED  # bounded: the rest at debug level
    assert "geminiignore" in logged[0] and "sk-ant" not in logged[0]


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=10,
)


def _outcome(decode: Any, text: str) -> Any:
    try:
        return ("value", decode(text))
    except Exception as exc:
        return ("error", type(exc), str(exc))


@given(
    st.one_of(
        st.builds(lambda v, pad: pad + json.dumps(v) + pad, _JSON_VALUES, st.sampled_from(["", " ", "\t", "\r", " \n "])),
        st.text(alphabet='{}[]",:0123456789.eE+-truefalsnl \\u', max_size=20),
        st.sampled_from(["NaN", "[Infinity]", "1e400", '{"a":1} x', '{"a":1}{"b":2}', "", " "]),
    )
)
def test_a_line_is_decoded_as_the_decoder_alone_decodes_it(text: str) -> None:
    # The scanner is called directly on the hot path; nothing it accepts or refuses may change.
    from protocol.shared.jsonrpc import _decode, _decode_line

    assert _outcome(_decode_line, text) == _outcome(_decode, text)


@given(st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\x00", b"\n")), max_size=8), st.integers(1, 12))
def test_the_splitters_fast_path_cuts_as_the_bounded_one(chunks: list[bytes], max_line: int) -> None:
    fast, bounded = LineSplitter(max_line), LineSplitter(max_line)
    bounded.feed = bounded._feed_bounded  # type: ignore[method-assign]

    def seen(splitter: LineSplitter) -> list[Any]:
        out = [line for chunk in chunks for line in splitter.feed(chunk)] + [splitter.leftover()]
        return [(line.size, line.head) if isinstance(line, Overlong) else line for line in out]

    assert seen(fast) == seen(bounded)


async def test_a_flow_hook_holds_the_reader_between_reads(nursery: trio.Nursery) -> None:
    # Backpressure: while `flow` waits, nothing more is read (the peer then blocks on its writes).
    ours, theirs = trio.testing.memory_stream_pair()
    go_on = trio.Event()
    seen: list[Any] = []

    async def flow() -> None:
        await go_on.wait()

    peer = Peer(ours, name="t", flow=flow)
    peer.on_notifications("u", lambda params, size: seen.extend(params))
    nursery.start_soon(peer.serve)
    wire = Wire(theirs)
    await wire.send({"jsonrpc": "2.0", "method": "u", "params": ["first"]})
    await trio.testing.wait_all_tasks_blocked()
    await wire.send({"jsonrpc": "2.0", "method": "u", "params": ["second"]})
    await trio.testing.wait_all_tasks_blocked()
    assert seen == [["first"]]
    go_on.set()
    await trio.testing.wait_all_tasks_blocked()
    assert seen == [["first"], ["second"]]
