"""An agent's `fs/write_text_file` as VS Code's edit tools, and their results back (docs/DESIGN.md, "Edits through the client").

Pure. Agents that route their writes through the client (Gemini CLI, Qwen Code, ...) send the
whole new content of a file. Where the request offers Copilot's edit tools, the write becomes
tool calls of the turn, so that the edit lands in Copilot's chat editing session ("files
changed", Keep / Undo, the inline diff) like Copilot's own: a new file is `create_file`; an
existing one is changed by the smallest replacements that turn what it holds into what the
agent wrote (`replace_string_in_file`, or one `multi_replace_string_in_file` where offered and
there is more than one). Each `oldString` occurs exactly once in the text it is applied to, as the
tool requires, and the replacements are applied in order. Where the tools are not offered (Ask
and Plan modes, other consumers), or the file is one they cannot change (not text, too large, an
existing empty file), the write is done on disk by the backend (`WriteOnDisk`).

The agent's request is answered once VS Code's results are in: `{}` when every call succeeded,
an error naming what VS Code said otherwise (Copilot reports a failed tool as a result whose text
starts with "ERROR").
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from protocol.vscode.lm import ToolResultPart

CREATE = "create_file"
REPLACE = "replace_string_in_file"
MULTI_REPLACE = "multi_replace_string_in_file"
ROUTED = frozenset({CREATE, REPLACE, MULTI_REPLACE})  # the consumer's tools a write may become

# Larger existing files are written on disk: a line diff of them costs too much time on the loop.
MAX_DIFFED = 2 * 1024 * 1024

UNANSWERED = "the user moved on before VS Code applied the edit; the file is unchanged"
CANCELLED = "the turn was cancelled; the file is unchanged"


@attrs.frozen
class WriteOnDisk:
    """The backend writes the file itself (no edit tools to route it through)."""


ON_DISK = WriteOnDisk()


@attrs.frozen
class Replacement:
    old: str
    new: str


@attrs.frozen
class Call:
    name: str
    parameters: dict[str, Any]


def _lines(text: str) -> list[str]:
    """Lines with their ends kept; only "\\n" splits (a "\\r\\n" stays one end)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def replacements(before: str, after: str) -> list[Replacement] | None:
    """The smallest line replacements turning `before` into `after`, each unique in the text it is
    applied to (applied in order, top to bottom); [] when nothing changes; None when no replacement
    can say it (`before` empty: the tool cannot replace nothing)."""
    if before == after:
        return []
    if not before:
        return None
    old, new = _lines(before), _lines(after)
    groups = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if tag != "equal"]
    out: list[Replacement] = []
    current = before  # the text as the replacements so far leave it
    index = 0
    while index < len(groups):
        i1, i2, j1, j2 = groups[index]
        # Widen by whole lines of context until the old text is non-empty and unique where it applies.
        lo, hi = i1, i2
        while True:
            old_text = "".join(old[lo:hi])
            if old_text and current.count(old_text) == 1:
                break
            if lo == 0 and hi == len(old):
                break  # the whole text: unique by definition
            lo, hi = max(lo - 1, 0), min(hi + 1, len(old))
            # A widened span may reach the next group: take it in.
            while index + 1 < len(groups) and groups[index + 1][0] < hi:
                index += 1
                i2, j2 = max(i2, groups[index][1]), groups[index][3]
                hi = max(hi, i2)
        new_lo = j1 - (i1 - lo)
        new_hi = j2 + (hi - i2)
        old_text, new_text = "".join(old[lo:hi]), "".join(new[new_lo:new_hi])
        out.append(Replacement(old_text, new_text))
        current = current.replace(old_text, new_text, 1) if current.count(old_text) == 1 else current
        index += 1
    if apply(before, out) != after:  # never expected; one replacement of everything says it exactly
        return [Replacement(before, after)]
    return out


def apply(text: str, edits: list[Replacement]) -> str | None:
    """`edits` applied in order as the tool applies them: each old text must occur exactly once."""
    for edit in edits:
        if not edit.old or text.count(edit.old) != 1:
            return None
        text = text.replace(edit.old, edit.new, 1)
    return text


def plan(path: str, before: str | None, after: str, offered: Collection[str], *, diffable: bool = True) -> list[Call] | WriteOnDisk:
    """The tool calls that write `after` to `path` (which holds `before`, None: no such file), from
    the tools `offered` this turn; [] when the file already holds it; `ON_DISK` when they cannot.
    `diffable`: the existing file is text the backend could read whole (else it is written on disk)."""
    if before is None:
        return [Call(CREATE, {"filePath": path, "content": after})] if CREATE in offered else ON_DISK
    if not diffable or len(before) > MAX_DIFFED or len(after) > MAX_DIFFED:
        return ON_DISK
    edits = replacements(before, after)
    if edits is None:
        return ON_DISK
    if not edits:
        return []
    if len(edits) > 1 and MULTI_REPLACE in offered:
        explanation = f"Apply the agent's edit of {path}"
        return [Call(MULTI_REPLACE, {"explanation": explanation, "replacements": [{"filePath": path, "oldString": e.old, "newString": e.new} for e in edits]})]
    if REPLACE in offered:
        return [Call(REPLACE, {"filePath": path, "oldString": e.old, "newString": e.new}) for e in edits]
    return ON_DISK


def failed(result: ToolResultPart) -> str | None:
    """What VS Code said went wrong with one call, None when it succeeded."""
    text = result.text().strip()
    return text or "VS Code returned an error" if text.upper().startswith("ERROR") else None


def response(results: Mapping[str, ToolResultPart], call_ids: Collection[str]) -> dict[str, Any] | str:
    """The agent's answer once VS Code ran the calls: `{}`, or the error (a string) it gets instead."""
    problems = [why for call_id in call_ids if (result := results.get(call_id)) is not None and (why := failed(result))]
    missing = [call_id for call_id in call_ids if call_id not in results]
    if missing:
        problems.append("VS Code returned no result for the edit")
    if problems:
        return "VS Code did not apply the edit: " + "; ".join(problems)
    return {}
