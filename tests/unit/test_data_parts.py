"""A data part's bytes are checked against its mime type where a request is read
(`protocol/vscode/data_parts.py`): base64 that decodes, and for `image/*` an image of that kind. Pure."""

from __future__ import annotations

import base64

import pytest

from protocol.shared.structuring import WireError, structure
from protocol.vscode.data_parts import data_problem
from protocol.vscode.lm import DataPart, Message

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    ("mime", "raw"),
    [
        ("image/png", base64.b64decode(PNG)),
        ("image/jpeg", b"\xff\xd8\xff\xe0\x00\x10JFIF"),
        ("image/jpg", b"\xff\xd8\xff\xdb"),
        ("image/gif", b"GIF89a\x01\x00"),
        ("image/webp", b"RIFF\x24\x00\x00\x00WEBPVP8 "),
        ("IMAGE/PNG", base64.b64decode(PNG)),
        ("image/svg+xml", b'\xef\xbb\xbf  <svg xmlns="http://www.w3.org/2000/svg"/>'),
        ("image/x-unheard-of", base64.b64decode(PNG)),  # an unknown name for a known kind
        ("cache_control", b"ephemeral"),
        ("application/json", b"{}"),
        ("text/plain", b""),
    ],
)
def test_what_its_mime_type_says_passes(mime: str, raw: bytes) -> None:
    assert data_problem(mime, b64(raw)) is None


@pytest.mark.parametrize(
    ("mime", "data", "problem"),
    [
        ("image/png", "this is not base64!", "not base64"),
        ("image/png", "iVBORw0KGgo", "not base64"),  # cut short: no padding
        ("image/png", PNG + "\n", "not base64"),
        ("image/png", "iVBORw0KGgo=é", "not base64"),
        ("cache_control", "%%%", "not base64"),
        ("image/png", b64(b"GIF89a\x01\x00"), "not a PNG image, as its mime type image/png says"),
        ("image/jpeg", b64(b"<html>hello</html>"), "not a JPEG image, as its mime type image/jpeg says"),
        ("image/png", "", "not a PNG image, as its mime type image/png says"),
        ("image/x-unheard-of", b64(b"MZ\x90\x00 an executable"), "not an image of a kind Symposium knows"),
    ],
)
def test_anything_else_is_refused_saying_why(mime: str, data: str, problem: str) -> None:
    found = data_problem(mime, data)
    assert found is not None and found.startswith(problem), found


def test_a_request_part_that_fails_is_refused_where_the_request_is_read_naming_it() -> None:
    good = {"role": "user", "content": [{"type": "text", "value": "look"}, {"type": "data", "mimeType": "image/png", "data": PNG}]}
    assert structure(good, Message).content[1] == DataPart("image/png", PNG)
    bad = {"role": "user", "content": [{"type": "text", "value": "look"}, {"type": "data", "mimeType": "image/png", "data": "not an image"}]}
    with pytest.raises(WireError) as refused:
        structure(bad, Message)
    assert str(refused.value) == "content[1].data: not base64"
    in_a_result = {"role": "user", "content": [{"type": "tool_result", "toolCallId": "t", "content": [{"type": "data", "mimeType": "image/png", "data": b64(b"text")}]}]}
    with pytest.raises(WireError) as refused:
        structure(in_a_result, Message)
    assert str(refused.value) == "content[0].content[0].data: not a PNG image, as its mime type image/png says"


def test_long_data_is_judged_alike_when_it_comes_again() -> None:
    image = b64(base64.b64decode(PNG) + bytes(200_000))
    text = b64(b"plain text, not an image " * 10_000)
    for _ in range(2):  # each request carries the conversation's images again
        assert data_problem("image/png", image) is None
        assert data_problem("image/png", text) == "not a PNG image, as its mime type image/png says"
        assert data_problem("text/plain", text) is None
        assert data_problem("image/png", image[:-2] + "!!") == "not base64"
