"""Agent-supplied text that VS Code shows as metadata: session titles, model and option names and
descriptions, sign-in methods, the titles of its tool calls; and, kept whole (`shown_whole`), the
title of a permission card. Not chat content (that is the agent's answer, shown as it wrote it).

An agent is a program someone else wrote. What it names things goes into quick picks, the model
picker and tooltips, where a control character, a bidi override (which can make text read
differently from what it is, e.g. `‮txt.exe` shown as `exe.txt`) or 10,000 characters does
harm and no good. So every such text passes through `shown` on its way to the extension, and
identifiers that would need cleaning (a model's id ends up in a VS Code model id) are not offered
at all: changing one would name something the agent does not have.
"""

from __future__ import annotations

import re
from typing import Any

MAX_SHOWN = 200  # characters of one shown text
MAX_ENTRIES = 100  # entries of one list an agent offers (its models, an option's values, its options)

# C0 and C1 controls (escape sequences, carriage returns) and line or paragraph separators: a space.
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Bidi embeddings, overrides, isolates and marks; invisible characters that can hide or smuggle text
# (zero-width space, word joiner and invisible operators, BOM, interlinear annotations, tag
# characters): dropped. The zero-width joiners that emoji and some scripts need are kept.
_INVISIBLE = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]")
_SPACES = re.compile(r"\s+")
_LINE_BREAKS = re.compile("\r\n|[\r\u2028\u2029\x85]")
_BREAKS_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and line feed


def shown(value: Any, limit: int = MAX_SHOWN) -> str:
    """`value` as text fit to show: "" for anything but a string; controls and line breaks become
    spaces, bidi controls and invisible characters go, runs of white space become one, and at most
    `limit` characters remain (the last one `…` when it was cut)."""
    if not isinstance(value, str):
        return ""
    text = _SPACES.sub(" ", _INVISIBLE.sub("", _BREAKS.sub(" ", value))).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def shown_whole(value: Any) -> str:
    """`value` as text fit to show where every character counts (what a permission card asks the
    user to allow): bidi controls and invisible characters go, other controls become spaces, but
    line breaks stay and nothing is cut, so no part of a command is hidden from who approves it."""
    if not isinstance(value, str):
        return ""
    lines = _LINE_BREAKS.sub("\n", value)
    return _INVISIBLE.sub("", _BREAKS_BUT_LINES.sub(" ", lines)).strip()


def is_shown_as_is(value: Any) -> bool:
    """Whether `value` is an identifier fit to offer: a non-empty string `shown` leaves alone."""
    return isinstance(value, str) and 0 < len(value) <= MAX_SHOWN and shown(value) == value


def shown_or_none(value: Any) -> str | None:
    """`shown(value)`, or None when nothing is left to show (absent, not a string, or only noise)."""
    return shown(value) or None
