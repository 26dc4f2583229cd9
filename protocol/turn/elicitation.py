"""An agent's question (ACP form elicitation) as Copilot's question UI, and the answers back.

Pure (docs/DESIGN.md, "The agent's questions"). An agent's `elicitation/create` in form mode
carries a flat JSON Schema (`requestedSchema`): each property a field. Copilot offers its models
`vscode_askQuestions`, a carousel of questions with options, multi-select and free text; its
result is the JSON `{"answers": {header: {"selected": [...], "freeText": str | null, "skipped":
bool}}}`. One question per field: a string with `enum`/`oneOf` is a choice, an array of them a
multi-select, a boolean a Yes/No choice, a string, number or integer free text. The answers go
back as the elicitation's result: `accept` with what was answered (a skipped field left out),
`decline` when every field was skipped, `cancel` when the tool gave no answers at all (the user
stopped the chat, or the tool failed).
"""

from __future__ import annotations

import json
import math
from typing import Any

from protocol.acp.agent_text import shown, shown_whole
from protocol.vscode.lm import TextPart, ToolResultPart

HEADER_CHARS = 50  # the tool's own limits (its input schema's maxLength)
QUESTION_CHARS = 200
MAX_OPTIONS = 50
# Fields asked of one question: the carousel shows one at a time, and nobody answers more. The
# rest are left unanswered, as skipped ones are (`accept` without them).
MAX_FIELDS = 100
YES, NO = "Yes", "No"

CANCEL: dict[str, Any] = {"action": "cancel"}
DECLINE: dict[str, Any] = {"action": "decline"}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _choices(schema: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(label, value, description) of an enum field: `oneOf`/`anyOf` of `const`s, or `enum`
    (with `enumNames` as labels where given)."""
    titled = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(titled, list):
        return [(shown(o.get("title")) or shown(str(o["const"])), o["const"], shown(o.get("description"))) for o in titled if isinstance(o, dict) and "const" in o]
    values = schema.get("enum")
    if isinstance(values, list):
        named = schema.get("enumNames")
        names: list[Any] = named if isinstance(named, list) else []
        return [(shown(names[i]) if i < len(names) and isinstance(names[i], str) else shown(str(v)), v, "") for i, v in enumerate(values)]
    return []


class Field:
    """One property of the requested schema and the question that asks it."""

    def __init__(self, key: str, schema: dict[str, Any], header: str, message: str) -> None:
        self.key, self.schema, self.header = key, schema, header
        kind = schema.get("type")
        listed = schema.get("items")
        items: dict[str, Any] = listed if isinstance(listed, dict) else {}
        self.multi = kind == "array"
        self.choices = _choices(items if self.multi else schema)
        if kind == "boolean":
            self.choices = [(YES, True, ""), (NO, False, "")]
        self.number = kind in ("number", "integer")
        question = shown(schema.get("description")) or message or header
        self.question: dict[str, Any] = {"header": header, "question": _cut(question, QUESTION_CHARS)}
        if self.choices:
            labels = _unique([label or "(empty)" for label, _, _ in self.choices[:MAX_OPTIONS]])
            self.choices = [(label, value, description) for label, (_, value, description) in zip(labels, self.choices, strict=False)]
            self.question["options"] = [{"label": label, **({"description": d} if d else {})} for label, _, d in self.choices]
            self.question["allowFreeformInput"] = False
            if self.multi:
                self.question["multiSelect"] = True
            default = schema.get("default")
            for option, (_, value, _) in zip(self.question["options"], self.choices, strict=False):
                if default is not None and (value == default or (isinstance(default, list) and value in default)):
                    option["recommended"] = True

    def value(self, answer: dict[str, Any]) -> tuple[bool, Any]:
        """(answered, value) from the tool's answer to this question."""
        if not isinstance(answer, dict) or answer.get("skipped"):
            return False, None
        selected = [s for s in answer.get("selected") or [] if isinstance(s, str)]
        free = answer.get("freeText") if isinstance(answer.get("freeText"), str) else None
        if self.choices:
            by_label = {label: value for label, value, _ in self.choices}
            picked = [by_label[s] for s in selected if s in by_label]
            if self.multi:
                return (True, picked) if picked else (False, None)
            return (True, picked[0]) if picked else (False, None)
        text = free if free is not None else (selected[0] if selected else None)
        if text is None or not text.strip():
            return False, None
        if self.number:
            try:
                number = float(text.strip())
            except ValueError:
                return False, None
            if not math.isfinite(number):
                return False, None
            return True, int(number) if self.schema.get("type") == "integer" and number.is_integer() else number
        return True, text


def _unique(names: list[str]) -> list[str]:
    """The names, each repeat made unique with " (n)" (cut to fit the header's limit). Linear: each
    name's count goes on from where it stopped, so 15,000 fields of one title cost 15,000 steps."""
    seen: set[str] = set()
    counts: dict[str, int] = {}  # name -> the next n to try for it
    out = []
    for name in names:
        candidate = name
        if candidate in seen:
            n = counts.get(name, 2)
            while candidate in seen:
                suffix = f" ({n})"
                candidate, n = _cut(name, HEADER_CHARS - len(suffix)) + suffix, n + 1
            counts[name] = n
        seen.add(candidate)
        out.append(candidate)
    return out


def fields(params: dict[str, Any]) -> list[Field]:
    """The questions of a form elicitation, in the schema's order; [] when it asks nothing we can show."""
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    message = shown_whole(params.get("message")) or ""
    usable = [(str(k), v) for k, v in properties.items() if isinstance(v, dict)][:MAX_FIELDS]
    headers = _unique([_cut(shown(v.get("title")) or shown(k) or "Answer", HEADER_CHARS) for k, v in usable])
    single = len(usable) == 1
    return [Field(key, value, header, message if single or not value.get("description") else "") for (key, value), header in zip(usable, headers, strict=False)]


def ask_input(params: dict[str, Any]) -> dict[str, Any] | None:
    """`vscode_askQuestions`' input for the elicitation, or None when it has no field to ask."""
    asked = fields(params)
    if not asked:
        return None
    questions = [f.question for f in asked]
    message = shown_whole(params.get("message"))
    if message and len(asked) > 1 and questions[0]["question"] != _cut(message, QUESTION_CHARS):
        questions[0] = {**questions[0], "message": message}
    return {"questions": questions}


def response(params: dict[str, Any], result: ToolResultPart) -> dict[str, Any]:
    """The elicitation's result from the tool's (see the module's docstring)."""
    first = next((p for p in result.content if isinstance(p, TextPart)), None)
    try:
        answers = json.loads(first.value)["answers"] if first is not None else None
    except (ValueError, TypeError, KeyError):
        answers = None
    if not isinstance(answers, dict):
        return CANCEL
    content: dict[str, Any] = {}
    for field in fields(params):
        answered, value = field.value(answers.get(field.header, {}))
        if answered:
            content[field.key] = value
    return {"action": "accept", "content": content} if content else DECLINE


def approved(params: dict[str, Any]) -> dict[str, Any]:
    """The answer that approves a tool-call approval asked as a question, once: `accept` with each field's
    default (Codex's `persist`: "once"), the narrowest grant it offers."""
    content = {f.key: f.schema["default"] for f in fields(params) if "default" in f.schema}
    return {"action": "accept", "content": content}


def unasked_note(params: dict[str, Any]) -> str:
    """What the chat shows of a question it cannot ask (no `vscode_askQuestions` in the request:
    Ask and Plan modes, other consumers); the agent hears "declined" and carries on."""
    message = shown_whole(params.get("message")) or "a question"
    return f"\n\n> The agent asked: {message}\n>\n> *(An agent's questions can be answered in Agent mode; here the agent was told the question was declined.)*\n\n"
