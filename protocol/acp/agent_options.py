"""An agent's own choices (its models, modes, effort), as ACP reports them, and whether it takes images.

What its turns cost is `protocol/acp/usage.py`'s.

Plain values and functions; the Session actor applies them to its ACP session.

Choices come in the answer to `session/new` (and to `session/load` / `session/resume`):
- `configOptions`: each has an `id`, a `name`, a `category` (`model`, `mode`, `thought_level`,
  or the agent's own), a `type` (`select`, whose values may come in groups, or `boolean`) and its
  `currentValue`; `session/set_config_option` changes one and answers with the whole new list,
  and the agent may announce changes itself (`config_option_update`).
- agents before config options: `modes` (`session/set_mode`, `current_mode_update`) and `models`
  (`session/set_model`). Where both describe the same thing, the config option wins.

A wanted value is named by the option's id (`effort`, `reasoning_effort`) or by its category
(`model`, `mode`, `thought_level`, or `effort` for the latter), so one setting works across agents.

What the agent names its choices is shown to the user (the model picker, Manage Agents), so it is
read through `protocol/acp/agent_text.py`: names and descriptions cleaned and capped, ids that would need
cleaning left out, at most `MAX_ENTRIES` options and values per option (an agent offering 20,000
models gets 100 model entries, not a 21 MB model list).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from protocol.acp import schema as acp
from protocol.acp.agent_text import MAX_ENTRIES, is_shown_as_is, shown
from protocol.acp.update_kinds import UpdateKind

OptionValue = str | bool

MODEL: Final = "model"
MODE: Final = "mode"
THOUGHT_LEVEL: Final = "thought_level"
CATEGORY_ALIASES = {"effort": THOUGHT_LEVEL, "thinking": THOUGHT_LEVEL, "thought_level": THOUGHT_LEVEL, MODEL: MODEL, MODE: MODE}
# A value with this name is the agent's own default: its plain model entry already is that.
DEFAULT_VALUE = "default"
# Modes under which the agent acts without asking (Claude Code's, Codex's, Gemini CLI's names).
_BYPASS_WORDS = ("bypass", "yolo", "full-access", "full_access", "fullaccess", "danger", "dontask", "dont-ask", "skip-permissions")


@attrs.frozen
class Value:
    value: str
    name: str
    description: str = ""


@attrs.frozen
class Choice:
    """One choice the agent offers for a session, as read from its answer."""

    id: str
    name: str
    category: str | None
    kind: Literal["select", "boolean"]
    current: OptionValue | None
    values: tuple[Value, ...] = ()
    description: str = ""
    via: Literal["config", "mode", "model"] = "config"  # which method sets it

    def offers(self, value: OptionValue) -> bool:
        if self.kind == "boolean":
            return isinstance(value, bool)
        return isinstance(value, str) and any(v.value == value for v in self.values)

    def label(self, value: OptionValue | None) -> str:
        """What the user calls a value: its name where the agent gave one."""
        for v in self.values:
            if v.value == value:
                return v.name or v.value
        return shown(str(value))


# Reading -----------------------------------------------------------------------------------


def _value(value: Any, name: Any, description: Any) -> Value | None:
    """One offered value; None when its id is not fit to offer (`agent_text.is_shown_as_is`)."""
    if not is_shown_as_is(value):
        return None
    return Value(value, shown(name) or value, shown(description))


def _values(options: Any, found: list[Value] | None = None) -> tuple[Value, ...]:
    """Select values, flattening groups (`{group, name, options: [...]}`), at most `MAX_ENTRIES`."""
    found = [] if found is None else found
    for item in options if isinstance(options, list) else ():
        if len(found) >= MAX_ENTRIES:
            break
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("options"), list):
            _values(item["options"], found)
        elif (value := _value(item.get("value"), item.get("name"), item.get("description"))) is not None:
            found.append(value)
    return tuple(found)


def _identifier(value: Any) -> str | None:
    return value if is_shown_as_is(value) else None


def _config_choice(raw: Any) -> Choice | None:
    if not isinstance(raw, dict) or _identifier(raw.get("id")) is None:
        return None
    category = _identifier(raw.get("category"))
    name = shown(raw.get("name")) or raw["id"]
    current = raw.get("currentValue")
    if raw.get("type") == "boolean":
        return Choice(raw["id"], name, category, "boolean", current if isinstance(current, bool) else None, (), shown(raw.get("description")))
    if raw.get("type", "select") != "select":
        return None  # a kind this client does not know: not offered
    values = _values(raw.get("options"))
    return Choice(raw["id"], name, category, "select", _identifier(current), values, shown(raw.get("description")))


def _config_choices(raw: Any) -> tuple[Choice, ...]:
    """An agent's `configOptions`, at most `MAX_ENTRIES` of them."""
    found = (c for c in (_config_choice(item) for item in (raw if isinstance(raw, list) else ())) if c is not None)
    return tuple(c for c, _ in zip(found, range(MAX_ENTRIES), strict=False))


def _bounded(config: tuple[Choice, ...], legacy: tuple[Choice, ...]) -> tuple[Choice, ...]:
    """At most `MAX_ENTRIES` choices in all, the older `modes` and `models` kept (the models matter most)."""
    return config[: max(0, MAX_ENTRIES - len(legacy))] + legacy


def _legacy(raw: Any, kind: Literal["mode", "model"], name: str, id_key: str, listed: str, current_key: str) -> Choice | None:
    """An agent's `modes` or `models` object (the protocol before config options) as a Choice."""
    if not isinstance(raw, dict):
        return None
    offered = raw.get(listed)
    values = _values([{"value": m.get(id_key), "name": m.get("name"), "description": m.get("description")} for m in offered if isinstance(m, dict)] if isinstance(offered, list) else [])
    return Choice(kind, name, kind, "select", _identifier(raw.get(current_key)), values, via=kind) if values else None


def read_choices(answer: Any) -> tuple[Choice, ...]:
    """The choices a `session/new` (load, resume) answer offers; none for an agent without them."""
    if not isinstance(answer, dict):
        return ()
    return _with_legacy(_config_choices(answer.get("configOptions")), answer.get("modes"), answer.get("models"))


def _with_legacy(config: tuple[Choice, ...], modes: Any, models: Any) -> tuple[Choice, ...]:
    covered = {c.category for c in config}
    legacy = (
        _legacy(modes, MODE, "Mode", "id", "availableModes", "currentModeId"),
        _legacy(models, MODEL, "Model", "modelId", "availableModels", "currentModelId"),
    )
    return _bounded(config, tuple(c for c in legacy if c is not None and c.category not in covered))


def updated(choices: tuple[Choice, ...], update: dict[str, Any]) -> tuple[Choice, ...] | None:
    """The choices after a `session/update` that changes them (one of `session_updates.CHOICE_KINDS`); None when it does not."""
    match update.get("sessionUpdate"):
        case UpdateKind.CONFIG_OPTION_UPDATE:
            config = _config_choices(update.get("configOptions"))
            covered = {k.category for k in config}
            return _bounded(config, tuple(c for c in choices if c.via != "config" and c.category not in covered))
        case UpdateKind.CURRENT_MODE_UPDATE:
            return _with_current(choices, MODE, update.get("currentModeId"))
        case UpdateKind.CURRENT_MODEL_UPDATE:
            return _with_current(choices, MODEL, update.get("currentModelId"))
    return None


def _with_current(choices: tuple[Choice, ...], category: str, value: Any) -> tuple[Choice, ...] | None:
    if not isinstance(value, str):
        return None
    return tuple(attrs.evolve(c, current=value) if c.category == category and c.kind == "select" and c.offers(value) else c for c in choices)


def after_set(choices: tuple[Choice, ...], choice: Choice, value: OptionValue, answer: Any) -> tuple[Choice, ...]:
    """The choices once `choice` was set to `value`: the agent's new list where it sent one."""
    if choice.via == "config" and isinstance(answer, dict) and isinstance(answer.get("configOptions"), list):
        return updated(choices, {"sessionUpdate": UpdateKind.CONFIG_OPTION_UPDATE, "configOptions": answer["configOptions"]}) or choices
    return tuple(attrs.evolve(c, current=value) if c is choice else c for c in choices)


# Choosing ------------------------------------------------------------------------------------


def find(choices: Sequence[Choice], key: str) -> Choice | None:
    """The choice a setting names: by the option's id, else by its category."""
    for choice in choices:
        if choice.id == key:
            return choice
    category = CATEGORY_ALIASES.get(key, key)
    return next((c for c in choices if c.category == category), None)


def model_choice(choices: Sequence[Choice]) -> Choice | None:
    return next((c for c in choices if c.category == MODEL and c.kind == "select"), None)


def model_values(choices: Sequence[Choice]) -> tuple[Value, ...]:
    """The models to offer as entries of their own (the agent's `default` is its plain entry)."""
    choice = model_choice(choices)
    return tuple(v for v in choice.values if v.value != DEFAULT_VALUE) if choice else ()


@attrs.frozen
class Change:
    choice: Choice
    value: OptionValue


def is_model_key(key: str) -> bool:
    return CATEGORY_ALIASES.get(key, key) == MODEL


def next_change(choices: Sequence[Choice], wanted: Mapping[str, OptionValue], done: Iterable[str] = ()) -> tuple[str, Change | str] | None:
    """The next wanted option to set, by its key: the model first (other options may depend on
    it). With a problem (a string) instead of a change for an option or value the agent does not
    offer; None when nothing is left to do. `done`: the keys already handled."""
    handled = set(done)
    for key in sorted(wanted, key=lambda k: (not is_model_key(k), k)):
        if key in handled:
            continue
        value = wanted[key]
        choice = find(choices, key)
        if choice is None:
            return key, f"offers no option {key!r}" + (f" (it offers: {', '.join(c.id for c in choices)})" if choices else "")
        if not choice.offers(value):
            offered = ", ".join(v.value for v in choice.values) if choice.kind == "select" else "true, false"
            return key, f"offers no {value!r} for {choice.name!r} (it offers: {offered})"
        if choice.current != value:
            return key, Change(choice, value)
    return None


def pending_options(
    wanted: Mapping[str, OptionValue], applied: Mapping[str, OptionValue], before: Mapping[str, OptionValue | None]
) -> dict[str, OptionValue]:
    """What a turn has to see to: each wanted option whose wanted value is not the one last applied,
    and each option set earlier and wanted no more, back to its value from before (`before`).

    What the agent changes by itself (leaving plan mode once the user approved the plan, say)
    stands until what is wanted changes: a session is not forced back every turn.
    """
    pending = {key: value for key, value in wanted.items() if applied.get(key) != value}
    for key in applied:
        if key not in wanted and (previous := before.get(key)) is not None:
            pending[key] = previous
    return pending


def set_request(session_id: str, change: Change) -> tuple[str, dict[str, Any]]:
    """The ACP request that makes the change: the method the agent has for that choice."""
    choice, value = change.choice, change.value
    if choice.via == "mode":
        return "session/set_mode", acp.set_mode_params(session_id, str(value))
    if choice.via == "model":
        return "session/set_model", acp.set_model_params(session_id, str(value))
    return "session/set_config_option", acp.set_config_option_params(session_id, choice.id, value)


def bypasses_permissions(value: Value | str) -> bool:
    """Whether a mode lets the agent act without asking (never a default, always labelled)."""
    words = (value.value + " " + value.name) if isinstance(value, Value) else value
    folded = words.lower().replace(" ", "-")
    return any(word in folded for word in _BYPASS_WORDS)


# The cache's form ----------------------------------------------------------------------------


def choices_to_json(choices: Iterable[Choice]) -> list[dict[str, Any]]:
    return [
        {
            "id": c.id,
            "name": c.name,
            "category": c.category,
            "kind": c.kind,
            "current": c.current,
            "description": c.description,
            "via": c.via,
            "values": [{"value": v.value, "name": v.name, "description": v.description} for v in c.values],
        }
        for c in choices
    ]


def choices_from_json(raw: Any) -> tuple[Choice, ...]:
    """The cached choices, read as the agent's own answers are (a cache written before the bounds
    existed may hold anything an agent once said)."""
    found: list[Choice] = []
    for item in raw if isinstance(raw, list) else ():
        if len(found) >= MAX_ENTRIES:
            break
        if not isinstance(item, dict) or _identifier(item.get("id")) is None:
            continue
        kind: Literal["select", "boolean"] = "boolean" if item.get("kind") == "boolean" else "select"
        via: Literal["config", "mode", "model"] = item["via"] if item.get("via") in ("mode", "model") else "config"
        current = item.get("current")
        current = current if isinstance(current, bool) else _identifier(current)
        name = shown(item.get("name")) or item["id"]
        found.append(Choice(item["id"], name, _identifier(item.get("category")), kind, current, _values(item.get("values")), shown(item.get("description")), via))
    return tuple(found)


# Images, learned ------------------------------------------------------------------------------


def takes_images(declared: bool | None) -> bool:
    """Whether a model entry tells VS Code it takes images (`imageInput`), from what the agent's
    sessions declared (`promptCapabilities.image`), None before any of them has (docs/DESIGN.md,
    "Images"). Unknown counts as yes: VS Code strikes an image through for a model that says no
    and never sends it, so the user's first image would be lost for good, while one sent to an
    agent that turns out not to take images reaches it as a note saying an image was left out
    (`prompt.build_prompt`), and from then on the picker says no.
    """
    return declared is not False
