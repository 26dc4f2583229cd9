"""`symposium replay FILE`: run the backend against a recorded transcript and report the first divergence.

The backend runs in-process. Every recorded peer is played by a script: the VS Code side,
each agent (the backend "spawns" it by connecting to its script), and each MCP client of a
tool bridge. A script sends what the transcript says its peer sent, and expects what the
backend sent, in order. Interleaving comes from causality, not timestamps: a message is
sent only once every message the backend sent before it (on any channel) has been seen,
and the backend has gone quiet: every task waiting and no worker thread working
(`actors.shared.threads`). Time is trio's mock clock, moved only by `_drive_time` at that
same point, to the next deadline: timeouts cost nothing, and how fast the machine runs
(a thread slowed by load, say) changes nothing of what the backend is seen to do.

Values the backend generates (tool-call ids, markers, tokens, ports, paths) are normalised
before comparing; the live value is learned from the backend's message and substituted
into what the scripts send later.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import attrs
import trio
import trio.testing

from actors.agent.connection import StreamConnection
from actors.shared import threads
from actors.shared.memory_streams import memory_stream_pair
from actors.store.transcript import read
from protocol.history.markers import MarkerCodec
from protocol.shared.jsonrpc import LineSplitter
from protocol.shared.redact import REDACTED
from protocol.shared.settings import Settings
from protocol.vscode.lm import Agent
from symposium import mcp_relay

QUIET = 0.05  # real seconds: how often the clock's driver looks while nothing moves (never a jump by itself)
GIVE_UP = 600.0  # virtual seconds without progress: the backend will not send what is expected

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MARKER = re.compile(r"sym2\.[0-9a-f]{32}\.\d+\.[0-9a-f]{16}\.[0-9a-f]{16}\.[A-Za-z0-9_-]{22}")
_HEX32 = re.compile(r"\b[0-9a-f]{32}\b")


def normalise(value: Any, key: str = "") -> Any:
    """The form in which generated values (ids, markers, ports, paths, secrets) compare equal."""
    if isinstance(value, dict):
        if {"name", "command", "args", "env"} <= value.keys() and value.get("name") == "vscode_tools":
            return {"name": "vscode_tools", "command": "<relay>", "args": "<relay>", "env": "<relay>"}
        if value.get("type") == "http" and value.get("name") == "vscode_tools":  # the HTTP entry: its port and secret are live
            return {"type": "http", "name": "vscode_tools", "url": "<bridge>", "headers": "<bridge>"}
        return {k: "<cwd>" if k == "cwd" else normalise(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(item, key) for item in value]
    if isinstance(value, str):
        if key == "value" and value == REDACTED:
            return REDACTED
        value = _MARKER.sub("<marker>", value)
        value = _UUID.sub("<uuid>", value)
        return _HEX32.sub("<hex>", value)
    return value


@attrs.define
class Divergence(Exception):
    channel: str
    index: int  # position of the message in that channel's script
    expected: Any
    actual: Any

    def report(self) -> str:
        if self.actual is None:
            return f"DIVERGED on {self.channel} at message {self.index}: expected\n{_pretty(self.expected)}\nbut the backend sent nothing more"
        diff = difflib.unified_diff(
            _pretty(normalise(self.expected)).splitlines(),
            _pretty(normalise(self.actual)).splitlines(),
            "expected (transcript)",
            "actual (backend)",
            lineterm="",
        )
        return f"DIVERGED on {self.channel} at message {self.index}:\n" + "\n".join(diff)


def _reorder_responses(steps: list[_Step], index: int, actual: dict[str, Any]) -> _Step:
    """Responses to concurrent requests may come in any order: take the one with this id.

    Only within the run of consecutive messages from the backend; everything else (parts,
    notifications, requests) must come in the recorded order.
    """
    if "id" not in actual or "method" in actual or steps[index].msg.get("id") == actual["id"]:
        return steps[index]
    for later in range(index + 1, len(steps)):
        if steps[later].incoming:
            break
        if steps[later].msg.get("id") == actual["id"] and "method" not in steps[later].msg:
            steps[index], steps[later] = steps[later], steps[index]
            break
    return steps[index]


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@attrs.define
class _Step:
    order: int  # position in the whole transcript
    incoming: bool  # True: the peer sends it to the backend; False: the backend sends it
    msg: dict[str, Any]
    orders: list[int] = attrs.Factory(list)  # every transcript position it stands for
    ends: list[int] = attrs.Factory(list)  # for merged text: where each position's text ends


def _text_of(msg: dict[str, Any]) -> tuple[Any, str] | None:
    """(requestId, text) of a text `lm/responsePart`, else None."""
    if msg.get("method") == "lm/responsePart":
        part = msg.get("params", {}).get("part", {})
        if part.get("type") == "text":
            return msg["params"].get("requestId"), part.get("value", "")
    return None


def _with_text(msg: dict[str, Any], text: str) -> dict[str, Any]:
    return {**msg, "params": {**msg["params"], "part": {**msg["params"]["part"], "value": text}}}


def _merge_text(steps: list[_Step]) -> list[_Step]:
    """Consecutive text parts as one step: how a stream is cut into parts depends on timing
    (the backend merges whatever is queued), what it says does not."""
    merged: list[_Step] = []
    for step in steps:
        text = None if step.incoming else _text_of(step.msg)
        last = merged[-1] if merged else None
        previous = None if last is None or last.incoming else _text_of(last.msg)
        if text is not None and previous is not None and text[0] == previous[0]:
            value = previous[1] + text[1]
            merged[-1] = _Step(last.order, False, _with_text(last.msg, value), [*last.orders, step.order], [*last.ends, len(value)])  # type: ignore[union-attr]
        else:
            merged.append(_Step(step.order, step.incoming, step.msg, [step.order], [len(text[1])] if text else []))
    return merged


class Replay:
    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.scripts: dict[str, list[_Step]] = defaultdict(list)
        for order, record in enumerate(records):
            if "msg" in record:
                self.scripts[record["ch"]].append(_Step(order, record["dir"] == "in", record["msg"]))
        self.agent_channels = sorted((c for c in self.scripts if c.startswith("agent ")), key=lambda c: int(c.split()[1]))
        self.seen_outs: set[int] = set()
        self.progress = trio.Event()  # set (and replaced) whenever an expected message arrives
        self.live: dict[str, str] = {}  # recorded value → live value, learned from the backend
        self.bridges: list[dict[str, Any]] = []  # live vscode_tools entries, in the order seen
        self.agents_started = 0
        self.failure: Divergence | None = None

    # Causality -----------------------------------------------------------------------------------

    def _all_outs_before(self, order: int) -> bool:
        return all(step.order in self.seen_outs for steps in self.scripts.values() for step in steps if not step.incoming and step.order < order)

    async def _may_send(self, order: int) -> None:
        while not self._all_outs_before(order):
            await self._wait_progress()
        await _settled()  # the backend has digested everything so far

    async def _wait_progress(self) -> None:
        event = self.progress
        with trio.move_on_after(GIVE_UP) as scope:
            await event.wait()
        if scope.cancelled_caught:
            raise self._stuck()

    def _stuck(self) -> Divergence:
        pending = [(step.order, channel, index, step.msg) for channel, steps in self.scripts.items() for index, step in enumerate(steps)
                   if not step.incoming and step.order not in self.seen_outs]
        _order, channel, index, msg = min(pending, key=lambda p: p[0])
        return Divergence(channel, index, msg, None)

    # Values ----------------------------------------------------------------------------------------

    def _learn(self, expected: Any, actual: Any) -> None:
        if isinstance(expected, dict) and isinstance(actual, dict):
            for k in expected.keys() & actual.keys():
                self._learn(expected[k], actual[k])
        elif isinstance(expected, list) and isinstance(actual, list):
            for e, a in zip(expected, actual, strict=False):
                self._learn(e, a)
        elif isinstance(expected, str) and isinstance(actual, str) and expected != actual:
            # Only generated ids: paths and commands differ between machines, and must not be
            # carried into what the scripts send.
            form = normalise(expected)
            if form == normalise(actual) and any(p in form for p in ("<uuid>", "<marker>", "<hex>")):
                self.live[expected] = actual

    def substitute(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.substitute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        if isinstance(value, str):
            return self.live.get(value, value)
        return value

    # Scripts ----------------------------------------------------------------------------------------

    async def play(self, channel: str, stream: trio.abc.Stream) -> None:
        """Play one peer's part over `stream`."""
        splitter = LineSplitter()
        pending: list[dict[str, Any]] = []

        async def receive(index: int, step: _Step) -> dict[str, Any]:
            while not pending:
                with trio.move_on_after(GIVE_UP) as scope:
                    chunk = await stream.receive_some()
                if scope.cancelled_caught or not chunk:
                    raise Divergence(channel, index, step.msg, None)
                pending.extend(json.loads(line) for line in splitter.feed(chunk) if isinstance(line, bytes) and line.strip())
            return pending.pop(0)

        steps = _merge_text(self.scripts[channel])
        for index in range(len(steps)):
            step = steps[index]
            if step.incoming:
                await self._may_send(step.order)
                data = json.dumps(self.substitute(step.msg)).encode() + b"\n"
                await stream.send_all(data)
                continue
            actual = await receive(index, step)
            expected_text, actual_text = _text_of(step.msg), _text_of(actual)
            if expected_text is not None and actual_text is not None:
                text = actual_text[1]
                while text != expected_text[1] and expected_text[1].startswith(text):
                    # What the backend has said so far lets the peers it answered go on.
                    self._saw(order for order, end in zip(step.orders, step.ends, strict=False) if end <= len(text))
                    more = await receive(index, step)
                    if (more_text := _text_of(more)) is None or more_text[0] != actual_text[0]:
                        pending.insert(0, more)
                        break
                    text += more_text[1]
                actual = _with_text(actual, text)
            step = steps[index] = _reorder_responses(steps, index, actual)
            if normalise(actual) != normalise(step.msg):
                raise Divergence(channel, index, step.msg, actual)
            self._learn(step.msg, actual)
            if channel.startswith("agent ") and actual.get("method") == "session/new":
                for server in actual.get("params", {}).get("mcpServers", []):
                    if server.get("name") == "vscode_tools" and server not in self.bridges:
                        self.bridges.append(server)
            self._saw(step.orders)

    def _saw(self, orders: Any) -> None:
        new = set(orders) - self.seen_outs
        if new:
            self.seen_outs |= new
            self.progress.set()
            self.progress = trio.Event()

    async def connect_agent(self, agent: Agent, cwd: str, nursery: trio.Nursery) -> StreamConnection:
        """The backend starts an agent: hand it the next recorded agent's script instead."""
        channel = self.agent_channels[self.agents_started]
        self.agents_started += 1
        ours, theirs = memory_stream_pair()
        nursery.start_soon(self._guarded, self.play, channel, theirs)
        return StreamConnection(ours)

    async def play_mcp_client(self, channel: str) -> None:
        """An agent's MCP client: connect to the live bridge as its relay would (where and its
        key are live values)."""
        steps = self.scripts[channel]
        await self._may_send(steps[0].order)
        bridge = self.bridges[int(channel.split()[1]) - 1]
        options = mcp_relay.parse(bridge["args"][-4:])
        assert options is not None, bridge["args"]
        # The listener is this process's own: connecting and saying the key never waits on it.
        sock = mcp_relay.open_bridge(options)
        await self.play(channel, trio.SocketStream(trio.socket.from_stdlib_socket(sock)))

    async def _guarded(self, play: Any, *args: Any) -> None:
        try:
            await play(*args)
        except Divergence as divergence:
            if self.failure is None:
                self.failure = divergence
            self._cancel.cancel()

    async def run(self, clock: trio.testing.MockClock) -> Divergence | None:
        from symposium.vscodelm import serve

        import_mcp_now()
        vscode_end, backend_end = memory_stream_pair()
        with trio.CancelScope() as self._cancel:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_drive_time, clock)

                async def backend() -> None:
                    markers = MarkerCodec(b"replay" * 6)
                    await serve(backend_end, cwd="/", settings=Settings(), connector=self.connect_agent, markers=markers, learn=False)
                    await backend_end.aclose()

                nursery.start_soon(backend)
                async with trio.open_nursery() as scripts:
                    for channel in self.scripts:
                        if channel.startswith("mcp "):
                            scripts.start_soon(self._guarded, self.play_mcp_client, channel)
                    await self._guarded(self.play, "vscode", vscode_end)
                await vscode_end.send_eof()  # the backend shuts down; it must say nothing more
                async for chunk in vscode_end:
                    for line in LineSplitter().feed(chunk):
                        if isinstance(line, bytes) and line.strip() and self.failure is None:
                            self.failure = Divergence("vscode", len(self.scripts["vscode"]), None, json.loads(line))
                            self._cancel.cancel()
                nursery.cancel_scope.cancel()  # the backend has ended: only the clock's driver is left
        return self.failure


async def _settled() -> None:
    """Until every task waits and no worker thread is working: nothing more can happen unless a
    script sends or virtual time moves."""
    await trio.testing.wait_all_tasks_blocked()
    while threads.working():
        await trio.testing.wait_all_tasks_blocked(QUIET / 2)


async def _drive_time(clock: trio.testing.MockClock) -> None:
    """Virtual time jumps to the next deadline only once everything has settled and no script
    is about to send. Not trio's autojump, which jumps once every task has waited a while in
    real time: a worker thread slower than that (a loaded machine) let a timeout fire that the
    recording never saw. Trio wakes the waiters of the smallest cushion first, all of them at
    once: this one's is the largest, so every script's `_settled` has returned, and its
    message been sent, before time may move."""
    while True:
        await trio.testing.wait_all_tasks_blocked(QUIET)
        if threads.working():
            continue
        gap = trio.lowlevel.current_statistics().seconds_to_next_deadline
        if 0 < gap < math.inf:
            clock.jump(gap)


def import_mcp_now() -> None:
    """Import the SDK and the backend's actors up front: a thread doing it mid-replay (the SDK on a
    bridge's first connection, the actors when the backend first needs them: `vscodelm.ACTOR_MODULES`)
    would let virtual time run ahead."""
    import importlib

    from actors.bridge.mcp_stream import import_mcp
    from symposium.vscodelm import ACTOR_MODULES

    import_mcp()
    for name in ACTOR_MODULES:
        importlib.import_module(name)


def replay(path: str | Path) -> Divergence | None:
    records = list(read(path))
    clock = trio.testing.MockClock()  # moved by `_drive_time` only
    return trio.run(Replay(records).run, clock, clock=clock)


def main(path: str) -> int:
    failure = replay(path)
    if failure is None:
        print("PASS")
        return 0
    print(failure.report())
    return 1


