"""What an agent sends in a prompt, read once at the edge: `session/update`s and the prompt's result
(docs/DESIGN.md, "What an agent declares").

Each update is checked against the fields ACP's schema gives its kind, the table `FIELDS`: a field of
another type (null included) is dropped, so that every reader after this one finds each field it
knows either absent or of its type; fields the table does not name are kept as sent. An update that
is not an object, or names no kind, is no update. Nothing here raises on what an agent sends. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], Any]  # the value, made fit (nested parts checked), or ABSENT
ABSENT: Any = object()


def text(value: Any) -> Any:
    return value if isinstance(value, str) else ABSENT


def number(value: Any) -> Any:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else ABSENT


def anything(value: Any) -> Any:
    return value if value is not None else ABSENT


def obj(fields: Mapping[str, Check] | None = None) -> Check:
    """An object, its named `fields` checked (the others kept as sent)."""

    def check(value: Any) -> Any:
        if not isinstance(value, Mapping):
            return ABSENT
        return fitted(value, fields) if fields else value

    return check


def objects(fields: Mapping[str, Check] | None = None) -> Check:
    """A list of objects: the entries that are not objects are left out."""
    each = obj(fields)

    def check(value: Any) -> Any:
        if not isinstance(value, list):
            return ABSENT
        return [kept for item in value if (kept := each(item)) is not ABSENT]

    return check


def fitted(value: Mapping[str, Any], fields: Mapping[str, Check]) -> dict[str, Any]:
    kept = dict(value)
    for name, check in fields.items():
        if name in kept:
            fit = check(kept[name])
            if fit is ABSENT:
                del kept[name]
            else:
                kept[name] = fit
    return kept


# ACP's ContentBlock (text, image, audio, resource link, embedded resource).
CONTENT_BLOCK = obj({"type": text, "text": text, "data": text, "mimeType": text, "uri": text, "name": text, "resource": obj({"uri": text, "text": text, "mimeType": text, "blob": text})})
# A tool call's content: {type: content, content}, {type: diff, path, oldText, newText}, {type: terminal}.
TOOL_CALL_CONTENT = objects({"type": text, "content": CONTENT_BLOCK, "path": text, "oldText": text, "newText": text, "terminalId": text})
TOOL_CALL = {
    "toolCallId": text,
    "title": text,
    "kind": text,
    "status": text,
    "content": TOOL_CALL_CONTENT,
    "locations": objects({"path": text, "line": number}),
    "rawInput": anything,
    "rawOutput": anything,
}
CHUNK = {"content": CONTENT_BLOCK, "messageId": text}

# Per `sessionUpdate` kind, the fields we read and their types; `_meta` is an object in every kind.
FIELDS: dict[str, dict[str, Check]] = {
    "user_message_chunk": CHUNK,
    "agent_message_chunk": CHUNK,
    "agent_thought_chunk": CHUNK,
    "tool_call": TOOL_CALL,
    "tool_call_update": TOOL_CALL,
    "plan": {"entries": objects({"content": text, "priority": text, "status": text})},
    "available_commands_update": {"availableCommands": objects({"name": text, "description": text})},
    "current_mode_update": {"currentModeId": text},
    "current_model_update": {"currentModelId": text},
    "config_option_update": {"configOptions": objects()},
    "session_info_update": {"title": text, "updatedAt": text},
    "usage_update": {"used": number, "size": number, "cost": obj({"amount": number, "currency": text})},
}
COMMON: dict[str, Check] = {"_meta": obj()}


def read_update(raw: Any) -> dict[str, Any] | None:
    """One `session/update`'s `update`, fit to read; None when it is no update at all."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("sessionUpdate"), str):
        return None
    return fitted(raw, {**COMMON, **FIELDS.get(raw["sessionUpdate"], {})})


PROMPT_RESULT: dict[str, Check] = {
    "stopReason": text,
    "usage": obj({"inputTokens": number, "outputTokens": number, "totalTokens": number, "thoughtTokens": number, "cachedReadTokens": number, "cachedWriteTokens": number}),
    **COMMON,
}


def read_prompt_result(raw: Any) -> dict[str, Any]:
    """`session/prompt`'s result, fit to read: not an object reads as an empty one (no stop reason)."""
    return fitted(raw, PROMPT_RESULT) if isinstance(raw, Mapping) else {}


SESSION_ANSWER: dict[str, Check] = {
    "sessionId": text,
    "models": obj({"availableModels": objects(), "currentModelId": text}),
    "modes": obj({"availableModes": objects(), "currentModeId": text}),
    "configOptions": objects(),
    **COMMON,
}


def read_session_answer(raw: Any) -> dict[str, Any]:
    """`session/new`'s (`load`, `resume`, `fork`) result, fit to read."""
    return fitted(raw, SESSION_ANSWER) if isinstance(raw, Mapping) else {}
