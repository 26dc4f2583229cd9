"""Matching: the cost of one more request as conversations pile up (History's own work).

Each request goes through History's own transitions (`protocol.history.conversations.Conversations`): read
(the messages it shares with its conversation's previous request are reused, the rest parsed
and hashed), matched against every conversation by its prefixes' digests, its turn begun and
the conversation re-indexed, then a reply recorded. No markers: the content decides, which is
the slower path.

The budget is a ratio to a same-run baseline: decoding the same request's JSON (`decode_ms`).
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from protocol.history.conversations import Conversations, Route
from protocol.vscode.lm import ChatParams, TextPart

LENGTH = 200
SAMPLES = 200


def _message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "value": text}]}


def _history(conversation: int, length: int) -> list[dict[str, Any]]:
    return [
        _message("user" if i % 2 == 0 else "assistant", f"conversation {conversation} message {i} " + "lorem ipsum " * 8)
        for i in range(length)
    ]


def _handle(conversations: Conversations, raw: list[dict[str, Any]]) -> None:
    """What History does with a request: route it, begin its turn, record the reply."""
    route = conversations.route(ChatParams("eliza", tuple(raw)), None)
    assert isinstance(route, Route) and route.error is None, route
    conversations.begin(route.record, route.read)
    conversations.reply(route.record, TextPart("a reply"))


def per_request_ms(count: int) -> tuple[float, float]:
    """Milliseconds of one more request (median), and of the same-run baseline: decoding that
    request from its JSON, which any reader of it does before it can match anything, timed
    beside each sample so both see the same machine."""
    conversations = Conversations()
    histories: list[list[dict[str, Any]]] = []
    for c in range(count):
        history = _history(c, LENGTH - 1)  # ends with the user's message
        _handle(conversations, history)
        histories.append([*history, _message("assistant", "a reply")])  # as the client sends the reply back
    timings, decodes = [], []
    for sample in range(SAMPLES):
        c = sample % count
        histories[c] = [*histories[c], _message("user", f"more {sample}")]
        wire = json.dumps({"jsonrpc": "2.0", "id": sample, "method": "lm/provideLanguageModelChatResponse", "params": {"modelId": "eliza", "messages": histories[c]}})
        start = time.perf_counter()
        json.loads(wire)
        decodes.append(time.perf_counter() - start)
        start = time.perf_counter()
        _handle(conversations, histories[c])
        timings.append(time.perf_counter() - start)
        histories[c].append(_message("assistant", "a reply"))
    return statistics.median(timings) * 1000, statistics.median(decodes) * 1000


def measure() -> dict[str, float]:
    ms_10, _ = per_request_ms(10)
    ms_1000, decode = per_request_ms(1000)
    return {"ms_10": ms_10, "ms_1000": ms_1000, "decode_ms": decode}
