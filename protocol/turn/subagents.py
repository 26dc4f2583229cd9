"""A subagent's work, told apart from its parent's by what each agent sends, read through typed
values (docs/usage.md, "Subagents"). Pure.

Claude Code (its ACP adapter, without the child-session form we do not ask for) stamps every update a
Task subagent makes, its text, its thoughts and its tool calls, with `_meta.claudeCode.parentToolUseId`:
the id of the Task tool call that started it. Codex reports its subagents as tool calls of their own
with `_meta.codex.subagent` (`path`, `activity`: started, interacted, interrupted); their own work runs
in another thread and is not sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _object(value: Any, key: str) -> Mapping[str, Any]:
    found = value.get(key) if isinstance(value, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def parent_call(update: Mapping[str, Any]) -> str | None:
    """The id of the tool call whose subagent made this update (None: the agent's own)."""
    parent = _object(_object(update, "_meta"), "claudeCode").get("parentToolUseId")
    return parent if isinstance(parent, str) and parent else None


def subagent_name(update: Mapping[str, Any]) -> str | None:
    """The name of the subagent a Codex tool call starts or talks to (the last part of its path)."""
    path = _object(_object(_object(update, "_meta"), "codex"), "subagent").get("path")
    if not isinstance(path, str):
        return None
    parts = [p for p in path.split("/") if p]
    return parts[-1] if parts else "subagent"
