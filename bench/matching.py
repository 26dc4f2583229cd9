"""Matching: the cost of one more request as conversations pile up (History's own work).

Each request is read as History reads it (`actors/reading.py`: the messages it shares with
its conversation's previous request are reused, the rest parsed and hashed), then matched
against every conversation by its prefixes' digests, and the conversation re-indexed.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from actors.matching import Conversation, ConversationIndex, root
from actors.reading import Read, read_messages
from protocol.lm import ElizaAgent, TextPart

AGENT = ElizaAgent()
ROOT = root(AGENT)
LENGTH = 200
SAMPLES = 200


def _message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "value": text}]}


def _history(conversation: int, length: int) -> list[dict[str, Any]]:
    return [
        _message("user" if i % 2 == 0 else "assistant", f"conversation {conversation} message {i} " + "lorem ipsum " * 8)
        for i in range(length)
    ]


def _handle(index: ConversationIndex, raw: list[dict[str, Any]], earlier: Read | None) -> tuple[Conversation, Read]:
    """What History does with a request: read, match, begin the turn, re-index."""
    read = read_messages(raw, ROOT, [earlier] if earlier else [])
    match = index.match(AGENT, read.messages, read.prefixes())
    conversation = match.conversation or Conversation("new", AGENT, ROOT, [])
    conversation.begin_turn(match.committed, list(read.messages[match.start :]), read.after[-1])
    conversation.reply = [TextPart("a reply")]
    index.update(conversation)
    return conversation, read


def per_request_ms(conversations: int) -> float:
    index = ConversationIndex()
    histories: list[list[dict[str, Any]]] = []
    reads: list[Read] = []
    for c in range(conversations):
        history = _history(c, LENGTH - 1)
        _, read = _handle(index, history[:-1], None)  # the conversation so far, with its last reply
        histories.append(history)
        reads.append(read)
    timings = []
    for sample in range(SAMPLES):
        c = sample % conversations
        histories[c] = [*histories[c], _message("user", f"more {sample}")]
        start = time.perf_counter()
        conversation, reads[c] = _handle(index, histories[c], reads[c])
        timings.append(time.perf_counter() - start)
        histories[c].append(_message("assistant", "a reply"))
    return statistics.median(timings) * 1000


def measure() -> dict[str, float]:
    return {"ms_10": per_request_ms(10), "ms_1000": per_request_ms(1000)}
