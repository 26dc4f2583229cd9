"""Markers (pure): round trip and forgery. The key they are signed with: tests/actors/test_stores.py."""

from __future__ import annotations

from protocol.history.markers import Marker, MarkerCodec

PREFIX = 0x0123456789ABCDEF


def test_round_trip_and_no_backslash() -> None:
    codec = MarkerCodec(b"k" * 32)
    token = codec.encode(Marker("ab" * 16, 7, PREFIX, 42))
    assert "\\" not in token
    assert codec.decode(token) == Marker("ab" * 16, 7, PREFIX, 42)
    # Digests are signed Python hashes; the marker keeps their 64 bits.
    negative = codec.decode(codec.encode(Marker("ab" * 16, 7, -5, 42)))
    assert negative is not None and negative.follows(-5, lambda: None) and not negative.follows(5, lambda: None)
    assert negative.follows(5, lambda: 42)  # a summarised history: what the turn was asked decides
    assert not negative.follows(5, lambda: 41)


def test_forged_foreign_and_malformed_tokens_do_not_decode() -> None:
    codec = MarkerCodec(b"k" * 32)
    token = codec.encode(Marker("ab" * 16, 7, PREFIX, 42))
    assert codec.decode(token.replace(".7.", ".8.")) is None  # tampered turn
    assert codec.decode(token.replace("0123456789abcdef", "0123456789abcdee", 1)) is None  # tampered history
    assert MarkerCodec(b"x" * 32).decode(token) is None  # another installation's key
    assert codec.decode("resp_abc123") is None  # another provider's marker
    assert codec.decode("") is None


def test_newest_valid_marker_in_an_assistant_message() -> None:
    codec = MarkerCodec(b"k" * 32)
    old, new = codec.encode(Marker("ab" * 16, 1, PREFIX, 42)), codec.encode(Marker("ab" * 16, 2, PREFIX, 42))

    def marker(token: str) -> dict:
        return {"type": "marker", "value": token}

    messages = [
        {"role": "user", "content": [{"type": "text", "value": "hi"}]},
        {"role": "assistant", "content": [marker(old), {"type": "text", "value": "a"}]},
        {"role": "assistant", "content": [marker(new), {"type": "text", "value": "b"}]},
        {"role": "assistant", "content": [marker("forged"), {"type": "text", "value": "c"}]},
        {"role": "user", "content": [marker(codec.encode(Marker("cd" * 16, 9, PREFIX, 42)))]},  # only assistant messages count
        {"role": "assistant", "content": "not a list"},
        "not a message",
    ]
    assert codec.newest(messages) == (2, Marker("ab" * 16, 2, PREFIX, 42))
