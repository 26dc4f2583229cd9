"""Markers (pure): round trip, forgery, and a secret that survives restarts."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from actors.state import load_secret
from protocol.markers import Marker, MarkerCodec

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


def test_the_secret_is_created_private_and_reused(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    key = load_secret(folder)
    assert stat.S_IMODE((folder / "marker-secret").stat().st_mode) == 0o600
    assert load_secret(folder) == key


def test_a_key_that_is_not_whole_is_replaced_and_the_log_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # An empty key would let anyone forge markers; a short one nearly so.
    for held in ("", "ab", "not hex at all", "ab" * 31):
        folder = tmp_path / str(len(held))
        folder.mkdir()
        (folder / "marker-secret").write_text(held)
        caplog.clear()
        key = load_secret(folder)
        assert len(key) == 32 and (folder / "marker-secret").read_text() == key.hex()
        assert "making a new one" in caplog.text
        assert load_secret(folder) == key


def test_a_folder_that_cannot_hold_the_key_still_gives_one(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for folder in (blocker, blocker / "state"):
        assert len(load_secret(folder)) == 32
    assert "chats will not continue after this backend exits" in caplog.text
