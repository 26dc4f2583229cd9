"""What a data part's `data` must be for its mime type, checked where a request is read.

A data part is bytes in base64 (the extension encodes every `LanguageModelDataPart` so). Data that is
not base64, or an `image/*` part whose bytes are not an image of that kind, would reach the agent as
an image it cannot read (its model API refuses the turn, or worse, reads whatever it is); it is
refused where the request is read instead, with a message naming the part (docs/reliability.md,
"Bad input gets a clear error"). Pure: no I/O.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable

# The start of each image kind agents take, by its mime subtype.
_IMAGES: dict[str, tuple[str, Callable[[bytes], bool]]] = {
    "png": ("PNG", lambda b: b.startswith(b"\x89PNG\r\n\x1a\n")),
    "jpeg": ("JPEG", lambda b: b.startswith(b"\xff\xd8\xff")),
    "gif": ("GIF", lambda b: b[:6] in (b"GIF87a", b"GIF89a")),
    "webp": ("WebP", lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP"),
    "bmp": ("BMP", lambda b: b.startswith(b"BM")),
    "tiff": ("TIFF", lambda b: b[:4] in (b"II*\x00", b"MM\x00*")),
    "x-icon": ("icon", lambda b: b.startswith(b"\x00\x00\x01\x00")),
    "avif": ("AVIF", lambda b: b[4:8] == b"ftyp"),
    "heic": ("HEIC", lambda b: b[4:8] == b"ftyp"),
    "heif": ("HEIF", lambda b: b[4:8] == b"ftyp"),
    "svg+xml": ("SVG", lambda b: b.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"<")),
}
_ALIASES = {"jpg": "jpeg", "pjpeg": "jpeg", "vnd.microsoft.icon": "x-icon", "x-ms-bmp": "bmp"}


# What was found for data read before, by its mime type, length and hash: each request carries the
# conversation's images again, as the same string objects (`protocol/shared/incremental_json.py`), whose hash Python
# keeps, so a second look costs nothing, and nothing of the image is held here.
_SEEN: dict[tuple[str, int, int], str | None] = {}
_SEEN_MAX = 256
_WORTH_KEEPING = 64 * 1024  # characters: shorter data is checked again, as fast as a lookup


def data_problem(mime_type: str, data: str) -> str | None:
    """Why `data` cannot be a `mime_type` data part, or None when it can."""
    if len(data) < _WORTH_KEEPING:
        return _problem(mime_type, data)
    key = (mime_type, len(data), hash(data))
    if key not in _SEEN:
        if len(_SEEN) >= _SEEN_MAX:
            del _SEEN[next(iter(_SEEN))]
        _SEEN[key] = _problem(mime_type, data)
    return _SEEN[key]


def _problem(mime_type: str, data: str) -> str | None:
    try:
        raw = binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError):
        return "not base64"
    kind, _, subtype = mime_type.lower().partition("/")
    if kind != "image":
        return None
    subtype = _ALIASES.get(subtype, subtype)
    known = _IMAGES.get(subtype)
    if known is not None:
        name, matches = known
        return None if matches(raw) else f"not a {name} image, as its mime type {mime_type} says"
    if any(matches(raw) for _, matches in _IMAGES.values()):
        return None
    kinds = ", ".join(dict.fromkeys(name for name, _ in _IMAGES.values()))
    return f"not an image of a kind Symposium knows ({kinds}), as its mime type {mime_type} says"
