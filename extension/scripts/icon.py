"""Draws the extension's icon, extension/icon.png (128x128 RGBA), with the standard library only.

The Marketplace and VS Code's extension views want a PNG (they refuse SVG); drawing it here keeps it
reproducible without an image editor or an imaging library: `python3 extension/scripts/icon.py`.

The picture: a speech bubble (a chat) on a round-cornered indigo square, holding three dots in three
colours, the agents that answer in it. Each pixel is the coverage of 4x4 samples, so edges are smooth.
"""

from __future__ import annotations

import math
import pathlib
import struct
import zlib

SIZE = 128
SAMPLES = 4
BACKGROUND = (43, 45, 110)
BUBBLE = (255, 255, 255)
DOTS = [((40.0, 58.0), (232, 93, 63)), ((64.0, 58.0), (242, 180, 41)), ((88.0, 58.0), (52, 168, 133))]
DOT_RADIUS = 9.0


def rounded_rect(x: float, y: float, left: float, top: float, right: float, bottom: float, radius: float) -> bool:
    """Whether (x, y) lies in the rectangle with rounded corners."""
    cx = min(max(x, left + radius), right - radius)
    cy = min(max(y, top + radius), bottom - radius)
    return left <= x <= right and top <= y <= bottom and math.hypot(x - cx, y - cy) <= radius


def in_tail(x: float, y: float) -> bool:
    """The bubble's tail: a triangle below its lower left."""
    (ax, ay), (bx, by), (cx, cy) = (38.0, 84.0), (60.0, 84.0), (34.0, 104.0)

    def side(px: float, py: float, qx: float, qy: float) -> float:
        return (x - qx) * (py - qy) - (px - qx) * (y - qy)

    d1, d2, d3 = side(ax, ay, bx, by), side(bx, by, cx, cy), side(cx, cy, ax, ay)
    return not ((d1 < 0 or d2 < 0 or d3 < 0) and (d1 > 0 or d2 > 0 or d3 > 0))


def colour_at(x: float, y: float) -> tuple[int, int, int, int]:
    """The colour of one sample: transparent outside the background square."""
    if not rounded_rect(x, y, 0, 0, SIZE, SIZE, 24):
        return (0, 0, 0, 0)
    for (dx, dy), dot in DOTS:
        if math.hypot(x - dx, y - dy) <= DOT_RADIUS:
            return (*dot, 255)
    if rounded_rect(x, y, 18, 28, 110, 88, 20) or in_tail(x, y):
        return (*BUBBLE, 255)
    return (*BACKGROUND, 255)


def pixel(px: int, py: int) -> bytes:
    """Average the samples of one pixel, weighting colour by alpha (premultiplied)."""
    r = g = b = a = 0
    for sy in range(SAMPLES):
        for sx in range(SAMPLES):
            cr, cg, cb, ca = colour_at(px + (sx + 0.5) / SAMPLES, py + (sy + 0.5) / SAMPLES)
            r, g, b, a = r + cr * ca, g + cg * ca, b + cb * ca, a + ca
    if a == 0:
        return bytes(4)
    return bytes((round(r / a), round(g / a), round(b / a), round(a / SAMPLES**2)))


def png(width: int, height: int, rows: list[bytes]) -> bytes:
    """A PNG file of 8-bit RGBA rows (filter 0 on every row)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    raw = b"".join(b"\x00" + row for row in rows)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def main() -> None:
    rows = [b"".join(pixel(x, y) for x in range(SIZE)) for y in range(SIZE)]
    target = pathlib.Path(__file__).resolve().parent.parent / "icon.png"
    target.write_bytes(png(SIZE, SIZE, rows))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
