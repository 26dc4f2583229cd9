"""Matching: the cost of one more request as conversations pile up (History's own work)."""

from __future__ import annotations

import statistics
import time

from actors.matching import Conversation, ConversationIndex, normalise, root
from protocol.lm import ElizaAgent, Message, TextPart

AGENT = ElizaAgent()
LENGTH = 200
SAMPLES = 200


def _history(conversation: int, length: int) -> list[Message]:
    return [
        Message("user" if i % 2 == 0 else "assistant", (TextPart(f"conversation {conversation} message {i} " + "lorem ipsum " * 8),))
        for i in range(length)
    ]


def _handle(index: ConversationIndex, messages: list[Message]) -> Conversation:
    """What History does with a request: normalise, match, commit, re-index."""
    messages = [normalise(m) for m in messages]
    match = index.match(AGENT, messages)
    conversation = match.conversation or Conversation("new", AGENT, root(AGENT), [])
    conversation.begin_turn(match.committed, messages[match.start :])
    conversation.reply = [TextPart("a reply")]
    index.update(conversation)
    return conversation


def per_request_ms(conversations: int) -> float:
    index = ConversationIndex()
    histories = []
    for c in range(conversations):
        history = _history(c, LENGTH - 1)
        _handle(index, history[:-1])  # the conversation so far, with its last reply
        index_conversation = index.match(AGENT, [normalise(m) for m in history]).conversation
        assert index_conversation is not None
        histories.append(history)
    timings = []
    for sample in range(SAMPLES):
        c = sample % conversations
        histories[c] = histories[c] + [Message("user", (TextPart(f"more {sample}"),))]
        start = time.perf_counter()
        conversation = _handle(index, histories[c])
        timings.append(time.perf_counter() - start)
        histories[c].append(Message("assistant", tuple(conversation.reply)))
    return statistics.median(timings) * 1000


def measure() -> dict[str, float]:
    return {"ms_10": per_request_ms(10), "ms_1000": per_request_ms(1000)}
