"""What an agent sends in a prompt, read once at the edge: `session/update`s and the prompt's result
(docs/DESIGN.md, "What an agent declares").

Each update is checked against the fields ACP's schema gives its kind, the table `FIELDS`: a field of
another type (null included) is dropped, so that every reader after this one finds each field it
knows either absent or of its type; fields the table does not name are kept as sent. An update that
is not an object, or names no kind, is no update. Nothing here raises on what an agent sends. Pure.

Every streamed chunk passes here, so the common case costs little: a plain text chunk is known fit at
a glance and merged with the plain chunks beside it, what is already fit is returned as it is, not
copied, and a text field is checked without a call (docs/benchmarks.md, "streaming").
What is read is JSON, so an object is a `dict` and a list a `list`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from protocol.acp.update_kinds import UpdateKind

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

# Per `sessionUpdate` kind (protocol/acp/update_kinds.py, every one of them), the fields we read and their
# types; `_meta` is an object in every kind.
FIELDS: dict[str, dict[str, Check]] = {
    UpdateKind.USER_MESSAGE_CHUNK: CHUNK,
    UpdateKind.AGENT_MESSAGE_CHUNK: CHUNK,
    UpdateKind.AGENT_THOUGHT_CHUNK: CHUNK,
    UpdateKind.TOOL_CALL: TOOL_CALL,
    UpdateKind.TOOL_CALL_UPDATE: TOOL_CALL,
    UpdateKind.PLAN: {"entries": objects({"content": text, "priority": text, "status": text})},
    UpdateKind.AVAILABLE_COMMANDS_UPDATE: {"availableCommands": objects({"name": text, "description": text, "input": obj({"hint": text})})},
    UpdateKind.CURRENT_MODE_UPDATE: {"currentModeId": text},
    UpdateKind.CURRENT_MODEL_UPDATE: {"currentModelId": text},
    UpdateKind.CONFIG_OPTION_UPDATE: {"configOptions": objects()},
    UpdateKind.SESSION_INFO_UPDATE: {"title": text, "updatedAt": text},
    UpdateKind.USAGE_UPDATE: {"used": number, "size": number, "cost": obj({"amount": number, "currency": text})},
    UpdateKind.COMPACTION_UPDATE: {"compactionId": text, "status": text, "summary": objects({"type": text, "text": text}), "error": text},
    UpdateKind.COMPACTION_SUMMARY_CHUNK: {"compactionId": text, "content": CONTENT_BLOCK},
}
COMMON: dict[str, Check] = {"_meta": obj()}
_BY_KIND: dict[str, dict[str, Check]] = {kind: {**COMMON, **fields} for kind, fields in FIELDS.items()}
_CHUNKS = frozenset(kind for kind, fields in FIELDS.items() if fields is CHUNK)


def read_update(raw: Any) -> dict[str, Any] | None:
    """One `session/update`'s `update`, fit to read; None when it is no update at all."""
    if type(raw) is not dict or type(kind := raw.get("sessionUpdate")) is not str:
        return None
    return fitted(raw, _BY_KIND.get(kind, COMMON))


class Run(NamedTuple):
    """What one session was sent, in a batch: its updates read, in order; `sent`, how many the agent
    sent for them (a merged run of chunks counts each of its own)."""

    session: str
    updates: list[dict[str, Any]]
    sent: int


def read_updates(batch: list[Any]) -> list[Run]:
    """`session/update` params read together (`read_update` each), in runs per session, and each run
    of plain text chunks of one kind merged into one update. Whatever follows (the turn, the usage
    meter, rendering) then handles one update where the agent streamed hundreds: the text, its bytes
    and the parts it renders as are the same (docs/benchmarks.md, "streaming").

    A plain text chunk has its kind, content and perhaps a `messageId` only, and the content its type
    and text only: it is fit as it came and known at a glance. Chunks merge only with chunks of the
    same kind and message id, so the merged one names the message each of them named, and a chunk
    with `_meta` (or any other field) is never merged: nothing it carries is lost.
    """
    runs: list[Run] = []
    session: str | None = None
    updates: list[dict[str, Any]] = []
    sent = 0
    texts: list[str] = []  # the plain chunks being merged, all of kind and message id `merging`; `first` the first
    merging: tuple[str, Any] | None = None
    first: dict[str, Any] = {}
    kind: Any  # a chunk's kind and text, as the fast check below reads them
    text: Any

    def end_merge() -> None:
        if texts:
            updates.append(first if len(texts) == 1 else {**first, "content": {"type": "text", "text": "".join(texts)}})
            texts.clear()

    for params in batch:
        if type(params) is not dict:
            continue
        raw: Any = params.get("update")
        if (
            type(raw) is dict
            and ((size := len(raw)) == 2 or (size == 3 and type(raw.get("messageId")) is str))
            and (kind := raw.get("sessionUpdate")) in _CHUNKS
            and type(content := raw.get("content")) is dict
            and len(content) == 2
            and content.get("type") == "text"
            and type(text := content.get("text")) is str
        ):
            update = None
        elif (update := read_update(raw)) is None:
            continue
        if type(to := params.get("sessionId")) is not str:
            to = str(to)
        if to != session:
            end_merge()
            if session is not None:
                runs.append(Run(session, updates, sent))
            session, updates, sent = to, [], 0
        sent += 1
        if update is None:
            if (key := (kind, raw.get("messageId"))) != merging:
                end_merge()
                merging = key
            if not texts:
                first = raw
            texts.append(text)
        else:
            end_merge()
            updates.append(update)
    end_merge()
    if session is not None:
        runs.append(Run(session, updates, sent))
    return runs


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
