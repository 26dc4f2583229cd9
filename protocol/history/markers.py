"""Conversation markers: opaque tokens naming (conversation, turn, history before it), authenticated.

Every response carries one; Copilot stores it and sends it back as the first part of that
assistant message in every later request, which names the conversation and the point in it
far more reliably than comparing re-rendered history. The MAC key lives in the user's state
directory (`actors/store/state.py` reads it), so markers from an earlier backend run are still
recognised; a forged or foreign token simply does not decode.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Callable, Sequence
from typing import Any

import attrs

_TOKEN = re.compile(r"^sym2\.([0-9a-f]{32})\.(\d{1,9})\.([0-9a-f]{16})\.([0-9a-f]{16})\.([A-Za-z0-9_-]{22})$")
_DIGEST_MASK = (1 << 64) - 1


@attrs.frozen
class Marker:
    conversation: str  # 32 hex digits
    turn: int  # the conversation's turn sequence number this reply ended
    prefix: int  # the digest of the conversation the user saw before this reply (`user_turns.conversation_step`)
    asked: int  # the digest of what its turn was asked (`user_turns.trailing_digest`)

    def follows(self, prefix: int, asked: Callable[[], int | None]) -> bool:
        """Whether the history before the marker is the one it was given after, as the user sees
        it: the user's turns and the agent's answers, not the agent's own tool rounds, which
        Copilot re-renders (docs/DESIGN.md, "Identity and markers").

        A marker is honoured only then: one copied into another conversation's history must
        not continue its own conversation with that other history. Where the consumer has
        replaced the earlier history with a summary, `asked()` is the digest of what the
        marker's turn was asked (None when there is no summary), and that must match.
        """
        if self.prefix == prefix & _DIGEST_MASK:
            return True
        digest = asked()
        return digest is not None and self.asked == digest & _DIGEST_MASK


@attrs.frozen
class MarkerCodec:
    key: bytes

    def _mac(self, body: str) -> str:
        digest = hmac.new(self.key, body.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode()[:22]

    def encode(self, marker: Marker) -> str:
        body = f"sym2.{marker.conversation}.{marker.turn}.{marker.prefix & _DIGEST_MASK:016x}.{marker.asked & _DIGEST_MASK:016x}"
        return f"{body}.{self._mac(body)}"

    def decode(self, token: str) -> Marker | None:
        match = _TOKEN.match(token)
        if match is None:
            return None
        body = f"sym2.{match[1]}.{match[2]}.{match[3]}.{match[4]}"
        if not hmac.compare_digest(self._mac(body), match[5]):
            return None
        return Marker(match[1], int(match[2]), int(match[3], 16), int(match[4], 16))

    def newest(self, messages: Sequence[Any]) -> tuple[int, Marker] | None:
        """The newest valid marker of ours in an assistant message, with that message's index.

        Read from the messages as they came (JSON values): normalising drops markers, and the
        marker also tells which conversation's earlier reading to reuse (`reading`).
        """
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if not isinstance(message, dict) or message.get("role") != "assistant" or not isinstance(message.get("content"), list):
                continue
            for part in message["content"]:
                if isinstance(part, dict) and part.get("type") == "marker" and isinstance(part.get("value"), str) and (marker := self.decode(part["value"])) is not None:
                    return index, marker
        return None
