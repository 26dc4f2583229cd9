"""Markers (pure): round trip, forgery, and a secret that survives restarts."""

from __future__ import annotations

import stat
from pathlib import Path

from actors.markers import Marker, MarkerCodec, load_secret
from protocol.lm import MarkerPart, Message, TextPart


def test_round_trip_and_no_backslash() -> None:
    codec = MarkerCodec(b"k" * 32)
    token = codec.encode(Marker("ab" * 16, 7))
    assert "\\" not in token
    assert codec.decode(token) == Marker("ab" * 16, 7)


def test_forged_foreign_and_malformed_tokens_do_not_decode() -> None:
    codec = MarkerCodec(b"k" * 32)
    token = codec.encode(Marker("ab" * 16, 7))
    assert codec.decode(token.replace(".7.", ".8.")) is None  # tampered turn
    assert MarkerCodec(b"x" * 32).decode(token) is None  # another installation's key
    assert codec.decode("resp_abc123") is None  # another provider's marker
    assert codec.decode("") is None


def test_newest_valid_marker_in_an_assistant_message() -> None:
    codec = MarkerCodec(b"k" * 32)
    old, new = codec.encode(Marker("ab" * 16, 1)), codec.encode(Marker("ab" * 16, 2))
    messages = [
        Message("user", (TextPart("hi"),)),
        Message("assistant", (MarkerPart(old), TextPart("a"))),
        Message("assistant", (MarkerPart(new), TextPart("b"))),
        Message("assistant", (MarkerPart("forged"), TextPart("c"))),
        Message("user", (MarkerPart(codec.encode(Marker("cd" * 16, 9))),)),  # only assistant messages count
    ]
    assert codec.newest(messages) == (2, Marker("ab" * 16, 2))


def test_the_secret_is_created_private_and_reused(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    key = load_secret(folder)
    assert stat.S_IMODE((folder / "marker-secret").stat().st_mode) == 0o600
    assert load_secret(folder) == key
