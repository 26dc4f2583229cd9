"""What an agent's turns cost, as it reports them (`usage_update`, the prompt's `usage`), and the bytes
per token learned from it, which VS Code's token counts use (docs/DESIGN.md, "What VS Code shows").

Plain values and functions; the Session actor meters its session's updates with `UsageMeter`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from protocol.acp.update_kinds import UpdateKind

# A turn calibrates bytes per token only when it is big enough to say something.
MIN_SAMPLE_TOKENS = 16
MIN_SAMPLE_BYTES = 64


@attrs.frozen
class TurnUsage:
    """What one turn cost, as the agent reported it."""

    used: int | None = None  # tokens in the session's context after the turn (`usage_update`)
    size: int | None = None  # the context window (`usage_update`)
    cost: tuple[float, str] | None = None  # the session's cost so far (amount, currency)
    input_tokens: int | None = None  # the prompt response's `usage`, where the agent sends one
    output_tokens: int | None = None
    cached_tokens: int | None = None  # of the input tokens, those read from the model's cache
    sample: tuple[int, int] | None = None  # (bytes, tokens) of this turn's text, to calibrate with

    @property
    def reported(self) -> bool:
        return self.used is not None or self.input_tokens is not None or self.output_tokens is not None

    def describe(self) -> str:
        parts = []
        if self.used is not None:
            parts.append(f"context {self.used:,} of {self.size:,} tokens" if self.size else f"context {self.used:,} tokens")
        if self.input_tokens is not None or self.output_tokens is not None:
            parts.append(f"{self.input_tokens or 0:,} in / {self.output_tokens or 0:,} out")
        if self.cost is not None:
            parts.append(f"cost so far {self.cost[0]:.4f} {self.cost[1]}")
        if self.sample is not None:
            parts.append(f"{self.sample[0]:,} bytes of text for {self.sample[1]:,} tokens")
        return "; ".join(parts)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def text_bytes(blocks: Iterable[Any]) -> int:
    """The UTF-8 bytes of the text in ACP content blocks (text, and embedded text resources)."""
    total = 0
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            total += len(block["text"].encode())
        elif block.get("type") == "resource" and isinstance(block.get("resource"), dict) and isinstance(block["resource"].get("text"), str):
            total += len(block["resource"]["text"].encode())
    return total


class UsageMeter:
    """Follows one session's usage reports across turns.

    A turn's sample is the text it added (our prompt and the agent's streamed reply and
    thoughts) against the tokens its context grew by: the context the agent reported before
    the turn to the one it reported at its end. A session's first turn has no "before"; there
    the prompt response's output tokens against the reply's text stand in, where the agent
    reports them. Turns in which the agent ran tools (their input and output are tokens whose
    text we never see) give no sample.
    """

    def __init__(self) -> None:
        self._used: int | None = None  # the latest context size reported
        self._size: int | None = None
        self._cost: tuple[float, str] | None = None
        self._before: int | None = None
        self._prompt_bytes = 0
        self._reply_bytes = 0
        self._tools = False
        self._reported = False

    def start_turn(self, prompt: Sequence[Any]) -> None:
        self._before = self._used
        self._prompt_bytes = text_bytes(prompt)
        self._reply_bytes = 0
        self._tools = False
        self._reported = False

    def observe(self, update: dict[str, Any]) -> None:
        match update.get("sessionUpdate"):
            case UpdateKind.AGENT_MESSAGE_CHUNK | UpdateKind.AGENT_THOUGHT_CHUNK:
                self._reply_bytes += text_bytes([update.get("content")])
            case UpdateKind.TOOL_CALL:
                self._tools = True
            case UpdateKind.USAGE_UPDATE:
                if (used := _count(update.get("used"))) is not None:
                    self._used = used
                    self._reported = True
                if (size := _count(update.get("size"))) is not None and size > 0:
                    self._size = size
                cost = update.get("cost")
                if isinstance(cost, dict) and isinstance(cost.get("amount"), (int, float)) and math.isfinite(cost["amount"]):
                    self._cost = (float(cost["amount"]), str(cost.get("currency", "")))

    def observe_all(self, updates: Iterable[dict[str, Any]]) -> None:
        """`observe` each update; a streamed chunk of plain text (the hot path) counted inline."""
        for update in updates:
            tag = update.get("sessionUpdate")
            if tag == UpdateKind.AGENT_MESSAGE_CHUNK or tag == UpdateKind.AGENT_THOUGHT_CHUNK:
                content = update.get("content")
                if type(content) is dict and content.get("type") == "text" and type(text := content.get("text")) is str:
                    self._reply_bytes += len(text) if text.isascii() else len(text.encode())
                    continue
            self.observe(update)

    def finish(self, prompt_usage: Any) -> TurnUsage:
        usage = prompt_usage if isinstance(prompt_usage, dict) else {}
        input_tokens, output_tokens = _count(usage.get("inputTokens")), _count(usage.get("outputTokens"))
        cached_tokens = _count(usage.get("cachedReadTokens"))
        sample = None
        if not self._tools:
            if self._before is not None and self._reported and self._used is not None:
                sample = (self._prompt_bytes + self._reply_bytes, self._used - self._before)
            elif self._before is None and output_tokens is not None:
                sample = (self._reply_bytes, output_tokens)
        if sample is not None and (sample[0] < MIN_SAMPLE_BYTES or sample[1] < MIN_SAMPLE_TOKENS):
            sample = None
        return TurnUsage(
            used=self._used if self._reported else None,
            size=self._size,
            cost=self._cost,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_tokens=cached_tokens,
            sample=sample,
        )


# Bytes per token, learned --------------------------------------------------------------------

DEFAULT_BYTES_PER_TOKEN = 4.0
BYTES_PER_TOKEN_RANGE = (1.0, 8.0)
SAMPLE_DECAY = 0.7  # the weight of what was learned before, at each new sample


def add_sample(sums: tuple[float, float] | None, sample: tuple[int, int]) -> tuple[float, float]:
    """Running (bytes, tokens) sums, the older samples weighing less and less."""
    bytes_sum, tokens_sum = sums or (0.0, 0.0)
    return bytes_sum * SAMPLE_DECAY + sample[0], tokens_sum * SAMPLE_DECAY + sample[1]


def bytes_per_token(sums: tuple[float, float] | None) -> float:
    if not sums or sums[1] <= 0:
        return DEFAULT_BYTES_PER_TOKEN
    low, high = BYTES_PER_TOKEN_RANGE
    return min(high, max(low, sums[0] / sums[1]))

