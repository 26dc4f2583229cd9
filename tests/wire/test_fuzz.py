"""A standing fuzz test: generated hostile input into one real `symposium vscodelm`, on both sides.

Hypothesis generates batches of wire lines (deep nesting, lone surrogates, huge numbers,
NaN, wrong types, bad ids, truncated lines, garbage, cancels interleaved with streaming
chats) and lines a misbehaving agent sends (`tests/support/misbehaving_agent.py`). Every batch goes
to the same backend subprocess, sent at once so the requests interleave. Invariants:

- the process lives (and exits 0 at the end of its input);
- every request with a readable id is answered exactly once, and no id is answered twice;
  a reply with id null only for a line whose id could not be read;
- every line the backend writes is valid JSON in UTF-8;
- other conversations are untouched: a conversation started before the fuzzing continues
  afterwards exactly as an undisturbed one does.

Deterministic (derandomized, no example database) and bounded (`EXAMPLES` batches, no
shrinking: examples share one backend, so a smaller example would not replay the failure).
"""

from __future__ import annotations

import base64
import itertools
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from symposium.client import ELIZA, process_agent, user

EXAMPLES = 100
GUARD = 30.0  # a hang guard, not a timing: the waits end when the replies arrive
MISBEHAVING = process_agent("misbehaving", sys.executable, [str(Path(__file__).parents[1] / "support" / "misbehaving_agent.py")])
CHAT = "lm/provideLanguageModelChatResponse"


def _refuse(name: str) -> Any:
    raise ValueError(f"the backend wrote {name}")


class Backend:
    """The backend subprocess with a thread reading its output: every reply by id, strictly parsed."""

    def __init__(self, stderr: Path) -> None:
        self._stderr = stderr.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "symposium", "--log-level", "info", "vscodelm"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
        )
        self.replies: dict[str, list[dict[str, Any]]] = {}  # id key -> every reply with that id
        self.null_replies = 0
        self.parts: dict[str, list[dict[str, Any]]] = {}
        self._arrived: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            msg = json.loads(raw.decode("utf-8"), parse_constant=_refuse)  # strict: UTF-8, no NaN
            assert isinstance(msg, dict), msg
            if "method" in msg:
                if msg["method"] == "lm/responsePart":
                    self.parts.setdefault(key(msg["params"]["requestId"]), []).append(msg["params"]["part"])
                continue
            if msg.get("id") is None:
                self.null_replies += 1
                continue
            self.replies.setdefault(key(msg["id"]), []).append(msg)
            self._arrived.put(key(msg["id"]))
        self._arrived.put(None)

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(data + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            self._stderr.flush()
            tail = Path(self._stderr.name).read_text(errors="replace")[-3000:]
            raise AssertionError(f"the backend died (exit code {self.process.wait()}):\n{tail}") from None

    def wait_for(self, ids: set[str]) -> None:
        missing = {i for i in ids if i not in self.replies}
        while missing:
            try:
                arrived = self._arrived.get(timeout=GUARD)
            except queue.Empty:
                raise AssertionError(f"no reply within {GUARD} s for {sorted(missing)}") from None
            assert arrived is not None, f"the backend ended its output; unanswered: {sorted(missing)}"
            missing.discard(arrived)

    def chat(self, id: str, messages: list[dict[str, Any]], agent: dict[str, Any] = ELIZA) -> dict[str, Any]:
        self.send(json.dumps(chat(id, messages, agent)).encode())
        self.wait_for({key(id)})
        return self.replies[key(id)][0]

    def text(self, id: str) -> str:
        return "".join(p["value"] for p in self.parts.get(key(id), []) if p["type"] == "text")

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=GUARD)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._reader.join(GUARD)
        self._stderr.close()
        return code


def key(id: Any) -> str:
    return json.dumps(id)


def chat(id: Any, messages: list[dict[str, Any]], agent: dict[str, Any] = ELIZA) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": CHAT, "params": {"modelId": "m", "messages": messages, "agent": agent, "options": {"tools": []}}}


# What is generated ------------------------------------------------------------------------------


@attrs.frozen
class Line:
    """One line to send; `build(id)` makes it with a fresh id. `expect`: "once" (a reply with that
    id, exactly one), "at most once" (the id may not be readable: id null instead), "none"."""

    build: Callable[[str], bytes]
    expect: str
    cancel_after: int | None = None  # a streaming chat: lm/cancel it after this many more lines


def _encode(obj: Any) -> bytes:
    return json.dumps(obj).encode()  # ensure_ascii: a lone surrogate travels as its escape


def _request_with(params_json: bytes, method: bytes = b"lm/provideLanguageModelChatInformation") -> Callable[[str], bytes]:
    return lambda id: b'{"jsonrpc":"2.0","id":' + _encode(id) + b',"method":"' + method + b'","params":' + params_json + b"}"


_SURROGATES = st.sampled_from(["\ud83d", "\udfff", "\ud800x", "a\udc00"])
_text = st.lists(st.one_of(st.text(max_size=12), _SURROGATES, st.sampled_from(["\x00", "\u2028", "😀", '"', "\\"])), max_size=4).map("".join)
_json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)


def _chat_line(text: str) -> Line:
    return Line(lambda id: _encode(chat(id, [user(text)])), "once")


_deep = st.integers(200, 3000).map(lambda d: Line(_request_with(b'{"silent":true,"x":' + b"[" * d + b"]" * d + b"}"), "once"))
_deep_tool_params = st.integers(200, 600).map(
    lambda d: Line(
        lambda id: _encode(chat(id, [user("hi"), {"role": "assistant", "content": [
            {"type": "tool_call", "toolCallId": "t", "toolName": "x", "parameters": json.loads("[" * d + "]" * d)}]}, user("again")])),
        "once",
    )
)
_non_finite = st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e400"]).flatmap(
    lambda literal: st.sampled_from([
        Line(_request_with(b'{"silent":true,"n":' + literal + b"}"), "once"),
        Line(lambda id: b'{"jsonrpc":"2.0","id":' + literal + b',"method":"lm/provideLanguageModelChatInformation"}', "none"),
    ])
)
_huge_number = st.integers(1, 6000).map(lambda digits: Line(_request_with(b'{"silent":true,"n":' + b"7" * digits + b"}"), "once"))
_wrong_types = st.sampled_from([
    {"messages": "hello"}, {"messages": [{"role": "robot", "content": []}]}, {"messages": [{"role": "user", "content": [{"type": "text"}]}]},
    {"modelId": 5}, {"agent": []}, {"agent": {"eliza": {}, "mcp_server": {}}}, {"options": {"tools": "none"}}, {"cwd": 7},
    {"messages": [{"role": "user", "content": [{"type": "tool_result", "toolCallId": 1}]}]}, {"messages": []},
]).map(lambda change: Line(lambda id: _encode({**chat(id, [user("typed")]), "params": {**chat(id, [user("typed")])["params"], **change}}), "once"))
_bad_ids = st.sampled_from([b"true", b"{}", b"[1]", b"null", b'"\\ud83d"', b'"a\\udc00"']).map(
    lambda id: Line(lambda _: b'{"jsonrpc":"2.0","id":' + id + b',"method":"lm/provideLanguageModelChatInformation","params":{"silent":true}}', "none")
)
_surrogate_method = st.just(Line(lambda id: b'{"jsonrpc":"2.0","id":' + _encode(id) + b',"method":"lm/\\ud83d","params":{}}', "once"))
_truncated = st.tuples(_text, st.floats(0.02, 0.98)).map(
    lambda t: Line(lambda id: (lambda line: line[: max(1, int(len(line) * t[1]))])(_encode(chat(id, [user(t[0])]))), "at most once")
)
_garbage = st.binary(max_size=60).filter(lambda b: b"\n" not in b).map(lambda b: Line(lambda _: b, "none"))
_notification = st.sampled_from([
    b'{"jsonrpc":"2.0","method":"lm/cancel","params":{"requestId":"nobody"}}',
    b'{"jsonrpc":"2.0","method":"lm/cancel","params":[1]}',
    b'{"jsonrpc":"2.0","method":"lm/cancel"}',
    b'{"jsonrpc":"2.0","method":"lm/whatever","params":{"x":NaN}}',
    b'{"jsonrpc":"2.0","id":12345678,"result":{}}',
]).map(lambda line: Line(lambda _: line, "none"))
_slow = st.tuples(st.integers(2, 4), st.none() | st.integers(0, 3)).map(
    lambda t: Line(lambda id: _encode(chat(id, [user(f"count slowly to {t[0]}")])), "once", cancel_after=t[1])
)

# Lines a misbehaving agent sends, then answers the prompt (or not: a line that starts as JSON and
# cannot be read stops it; a line of plain text is skipped).
_agent_line = st.one_of(
    st.sampled_from([
        b'{"jsonrpc":"2.0","method":"session/update","params":{"x":"\xff\xfe"}}',
        b'{"jsonrpc":"2.0","method":"session/update","params":' + b"[" * 300 + b"]" * 300 + b"}",
        b"Downloading model weights... 42%",
        b'{"jsonrpc":"2.0","method":"session/update","params":{"used":NaN}}',
        b'{"jsonrpc":"2.0","method":"session/upd',
        b'{"jsonrpc":"2.0","id":{"x":1},"method":"session/request_permission"}',
        b'{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"{SID}","toolCall":{"toolCallId":"c"},"options":[]}}',
        b'{"jsonrpc":"2.0","id":424242,"result":{"stopReason":"end_turn"}}',
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{SID}","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\\ud83d"}}}}',
    ]),
    st.tuples(st.sampled_from(["agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan", "usage_update", "nope"]), _json_value).map(
        lambda t: json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "{SID}", "update": {
            "sessionUpdate": t[0], "content": t[1], "toolCallId": t[1], "entries": t[1], "status": t[1], "title": t[1]}}}).encode()
    ),
    st.binary(max_size=40).filter(lambda b: b"\n" not in b),
)
_agent = _agent_line.map(lambda line: Line(lambda id: _encode(chat(id, [user("emit " + base64.b64encode(line).decode())], MISBEHAVING)), "once"))

_line = st.one_of(
    _text.map(_chat_line), _deep, _deep_tool_params, _non_finite, _huge_number, _wrong_types, _bad_ids, _surrogate_method,
    _truncated, _garbage, _notification, _slow, _agent,
)


# The test ---------------------------------------------------------------------------------------


@attrs.define
class Fuzzing:
    backend: Backend
    ids: Iterator[int]
    once: set[str] = attrs.Factory(set)
    at_most_once: set[str] = attrs.Factory(set)
    unreadable: int = 0  # lines that may be answered with id null


@pytest.fixture(scope="module")
def fuzzing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzing]:
    log = tmp_path_factory.mktemp("fuzz") / "backend.log"
    backend = Backend(log)
    run = Fuzzing(backend, itertools.count(1))
    try:
        # A conversation from before the fuzzing (and a twin that finishes now, to compare).
        twin_first = backend.chat("twin-1", [user("I am sad")])
        assert twin_first["result"] == {}
        twin_reply = {"role": "assistant", "content": [{"type": "text", "value": backend.text("twin-1")}]}
        assert backend.chat("twin-2", [user("I am sad"), twin_reply, user("I am sad")])["result"] == {}
        assert backend.chat("kept-1", [user("I am sad")])["result"] == {}
        assert backend.text("kept-1") == backend.text("twin-1")
        yield run
        # ...continues after it exactly as the undisturbed twin did.
        kept_reply = {"role": "assistant", "content": [{"type": "text", "value": backend.text("kept-1")}]}
        assert backend.chat("kept-2", [user("I am sad"), kept_reply, user("I am sad")])["result"] == {}
        assert backend.text("kept-2") == backend.text("twin-2") != backend.text("twin-1")
    finally:
        code = backend.close()
    assert code == 0, log.read_text()[-3000:]
    twice = {id: replies for id, replies in backend.replies.items() if len(replies) > 1}
    assert not twice, f"answered more than once: {twice}"
    sent = run.once | run.at_most_once | {key(i) for i in ("twin-1", "twin-2", "kept-1", "kept-2")}
    assert set(backend.replies) <= sent, f"replies to ids never sent: {set(backend.replies) - sent}"
    assert backend.null_replies <= run.unreadable


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(batch=st.lists(_line, min_size=1, max_size=8))
def test_generated_input_never_kills_the_backend_and_every_request_is_answered_once(fuzzing: Fuzzing, batch: list[Line]) -> None:
    backend = fuzzing.backend
    expected: set[str] = set()
    cancels: list[tuple[int, str]] = []  # (lines still to send before it, the chat it cancels)
    for line in batch:
        id = f"f{next(fuzzing.ids)}"
        backend.send(line.build(id))
        cancels = [(left - 1, chat_id) for left, chat_id in cancels]
        if line.cancel_after is not None:
            cancels.append((line.cancel_after, id))
        for chat_id in [chat_id for left, chat_id in cancels if left <= 0]:
            backend.send(_encode({"jsonrpc": "2.0", "method": "lm/cancel", "params": {"requestId": chat_id}}))
        cancels = [(left, chat_id) for left, chat_id in cancels if left > 0]
        match line.expect:
            case "once":
                expected.add(key(id))
                fuzzing.once.add(key(id))
            case "at most once":
                fuzzing.at_most_once.add(key(id))
                fuzzing.unreadable += 1
            case "none":
                fuzzing.unreadable += 1
    for _, chat_id in cancels:
        backend.send(_encode({"jsonrpc": "2.0", "method": "lm/cancel", "params": {"requestId": chat_id}}))
    # A request sent last is answered after every earlier line was read (and any id-null reply sent).
    barrier = f"f{next(fuzzing.ids)}"
    fuzzing.once.add(key(barrier))
    backend.send(_encode({"jsonrpc": "2.0", "id": barrier, "method": "lm/provideLanguageModelChatInformation", "params": {"silent": True}}))
    backend.wait_for(expected | {key(barrier)})
    assert backend.replies[key(barrier)][0]["result"]["models"]
    for id in expected:
        [reply] = backend.replies[id]
        assert "result" in reply or reply["error"]["code"] in (-32700, -32600, -32601, -32602, -32000, -32800), reply
        if "error" in reply and reply["error"]["code"] == -32000:
            assert reply["error"]["message"], reply
    # Still alive, and still answering as Eliza does.
    alive = f"f{next(fuzzing.ids)}"
    fuzzing.once.add(key(alive))
    assert backend.chat(alive, [user(f"Hello {alive}")])["result"] == {}
    assert backend.text(alive)
