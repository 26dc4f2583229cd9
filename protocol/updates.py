"""What an agent sends in a prompt, read once at the edge: `session/update`s and the prompt's result
(docs/DESIGN.md, "What an agent declares").

Each update is checked against the fields ACP's schema gives its kind, the table `FIELDS`: a field of
another type (null included) is dropped, so that every reader after this one finds each field it
knows either absent or of its type; fields the table does not name are kept as sent. An update that
is not an object, or names no kind, is no update. Nothing here raises on what an agent sends. Pure.

Every streamed chunk passes here, so the common case costs little: a plain text chunk is known fit at
a glance, what is already fit is returned as it is, not copied, and a text field is checked without a
call (docs/benchmarks.md, "streaming").
What is read is JSON, so an object is a `dict` and a list a `list`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol.session_updates import UpdateKind

Check = Callable[[Any], Any]  # the value, made fit (nested parts checked), or ABSENT
ABSENT: Any = object()


def text(value: Any) -> Any:
    return value if isinstance(value, str) else ABSENT


def number(value: Any) -> Any:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else ABSENT


def anything(value: Any) -> Any:
    return value if value is not None else ABSENT


def obj(fields: dict[str, Check] | None = None) -> Check:
    """An object, its named `fields` checked (the others kept as sent)."""

    def check(value: Any) -> Any:
        if type(value) is not dict:
            return ABSENT
        return fitted(value, fields) if fields else value

    return check


def objects(fields: dict[str, Check] | None = None) -> Check:
    """A list of objects: the entries that are not objects are left out."""
    each = obj(fields)

    def check(value: Any) -> Any:
        if type(value) is not list:
            return ABSENT
        return [kept for item in value if (kept := each(item)) is not ABSENT]

    return check


def fitted(value: dict[str, Any], fields: dict[str, Check]) -> dict[str, Any]:
    """`value` with its named `fields` made fit: `value` itself when all of them are."""
    kept: dict[str, Any] | None = None
    for name, field in value.items():
        check = fields.get(name)
        if check is None or (check is text and type(field) is str):
            continue
        if (fit := check(field)) is not field:
            if kept is None:
                kept = dict(value)
            if fit is ABSENT:
                del kept[name]
            else:
                kept[name] = fit
    return value if kept is None else kept


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

# Per `sessionUpdate` kind (protocol/session_updates.py, every one of them), the fields we read and their
# types; `_meta` is an object in every kind.
FIELDS: dict[str, dict[str, Check]] = {
    UpdateKind.USER_MESSAGE_CHUNK: CHUNK,
    UpdateKind.AGENT_MESSAGE_CHUNK: CHUNK,
    UpdateKind.AGENT_THOUGHT_CHUNK: CHUNK,
    UpdateKind.TOOL_CALL: TOOL_CALL,
    UpdateKind.TOOL_CALL_UPDATE: TOOL_CALL,
    UpdateKind.PLAN: {"entries": objects({"content": text, "priority": text, "status": text})},
    UpdateKind.AVAILABLE_COMMANDS_UPDATE: {"availableCommands": objects({"name": text, "description": text})},
    UpdateKind.CURRENT_MODE_UPDATE: {"currentModeId": text},
    UpdateKind.CURRENT_MODEL_UPDATE: {"currentModelId": text},
    UpdateKind.CONFIG_OPTION_UPDATE: {"configOptions": objects()},
    UpdateKind.SESSION_INFO_UPDATE: {"title": text, "updatedAt": text},
    UpdateKind.USAGE_UPDATE: {"used": number, "size": number, "cost": obj({"amount": number, "currency": text})},
}
COMMON: dict[str, Check] = {"_meta": obj()}
_BY_KIND: dict[str, dict[str, Check]] = {kind: {**COMMON, **fields} for kind, fields in FIELDS.items()}
_CHUNKS = frozenset(kind for kind, fields in FIELDS.items() if fields is CHUNK)


def read_update(raw: Any) -> dict[str, Any] | None:
    """One `session/update`'s `update`, fit to read; None when it is no update at all."""
    if type(raw) is not dict or type(kind := raw.get("sessionUpdate")) is not str:
        return None
    if (
        len(raw) == 2  # the streamed chunk of plain text, the hot path: fit as it is, known at a glance
        and kind in _CHUNKS
        and type(content := raw.get("content")) is dict
        and len(content) == 2
        and content.get("type") == "text"
        and type(content.get("text")) is str
    ):
        return raw
    return fitted(raw, _BY_KIND.get(kind, COMMON))


PROMPT_RESULT: dict[str, Check] = {
    "stopReason": text,
    "usage": obj({"inputTokens": number, "outputTokens": number, "totalTokens": number, "thoughtTokens": number, "cachedReadTokens": number, "cachedWriteTokens": number}),
    **COMMON,
}


def read_prompt_result(raw: Any) -> dict[str, Any]:
    """`session/prompt`'s result, fit to read: not an object reads as an empty one (no stop reason)."""
    return fitted(raw, PROMPT_RESULT) if type(raw) is dict else {}


SESSION_ANSWER: dict[str, Check] = {
    "sessionId": text,
    "models": obj({"availableModels": objects(), "currentModelId": text}),
    "modes": obj({"availableModes": objects(), "currentModeId": text}),
    "configOptions": objects(),
    **COMMON,
}


def read_session_answer(raw: Any) -> dict[str, Any]:
    """`session/new`'s (`load`, `resume`, `fork`) result, fit to read."""
    return fitted(raw, SESSION_ANSWER) if type(raw) is dict else {}
