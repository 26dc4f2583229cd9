"""Conversation markers (DESIGN §4.1): opaque tokens naming (conversation, turn), authenticated.

Every response carries one; Copilot stores it and sends it back as the first part of that
assistant message in every later request, which names the conversation and the point in it
far more reliably than comparing re-rendered history. The MAC key lives in the user's state
directory, so markers from an earlier backend run are still recognised; a forged or foreign
token simply does not decode.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Sequence
from pathlib import Path

import attrs

from protocol.lm import MarkerPart, Message
from protocol.private import private_folder

_TOKEN = re.compile(r"^sym1\.([0-9a-f]{32})\.(\d{1,9})\.([A-Za-z0-9_-]{22})$")


def state_dir() -> Path:
    """Where the backend keeps what must survive it: $SYMPOSIUM_STATE_DIR, else XDG's state home."""
    if explicit := os.environ.get("SYMPOSIUM_STATE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "symposium"


def load_secret(directory: Path) -> bytes:
    """The marker key, created on first use (mode 0600)."""
    path = directory / "marker-secret"
    try:
        return bytes.fromhex(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        pass
    private_folder(directory, tighten=True)
    key = secrets.token_bytes(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(key.hex())
    return key


@attrs.frozen
class Marker:
    conversation: str  # 32 hex digits
    turn: int  # the conversation's turn sequence number this reply ended


@attrs.frozen
class MarkerCodec:
    key: bytes

    def _mac(self, body: str) -> str:
        digest = hmac.new(self.key, body.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode()[:22]

    def encode(self, marker: Marker) -> str:
        body = f"sym1.{marker.conversation}.{marker.turn}"
        return f"{body}.{self._mac(body)}"

    def decode(self, token: str) -> Marker | None:
        match = _TOKEN.match(token)
        if match is None:
            return None
        body = f"sym1.{match[1]}.{match[2]}"
        if not hmac.compare_digest(self._mac(body), match[3]):
            return None
        return Marker(match[1], int(match[2]))

    def newest(self, messages: Sequence[Message]) -> tuple[int, Marker] | None:
        """The newest valid marker of ours in an assistant message, with that message's index."""
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.role != "assistant":
                continue
            for part in message.content:
                if isinstance(part, MarkerPart) and (marker := self.decode(part.value)) is not None:
                    return index, marker
        return None
