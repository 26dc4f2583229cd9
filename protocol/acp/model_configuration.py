"""The agent's options as its models' own controls in VS Code (docs/usage.md, "The agent's own choices").

VS Code's stable provider API takes a `configurationSchema` with each model's information (a JSON
schema's `properties`) and gives the user's choice back with each request (`modelConfiguration`),
the schema's defaults filled in for what the user never chose. Enum properties get a UI: the first
of the group `navigation` a button in the chat input, beside the model's name; the others a
submenu of the model's row in *Chat: Manage Language Models*. The value is per model and global.

So each select option the agent offers (its `configOptions`, its legacy `modes`) is one enum
property, keyed by the option's id, with the agent's labels and descriptions. The model is not
one: the agent's models are entries of their own. The option users switch most, the agent's mode
(plan or act, ask before edits or not: a choice per task), or its thought level where it has no
mode, goes in the chat input; the rest in Manage Language Models.

The default a property shows is what the user's settings (`options` in the agent's entry) set,
else the agent's own current value: never a value that bypasses permissions, and those are marked
in their label. A request's value equal to the property's default is "not chosen": the settings'
value (or the agent's own) stands, so a bypassing mode a user put in their settings holds while
the picker shows the agent's default.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from protocol.acp.agent_options import MODE, MODEL, THOUGHT_LEVEL, Choice, OptionValue, bypasses_permissions, find

# VS Code's group for the property shown in the chat input beside the model's name.
CHAT_INPUT_GROUP = "navigation"
BYPASS_NOTE = "bypasses permissions: the agent acts without asking you"
# A schema's size as JSON, at most: each of an agent's model entries carries it (100 of them for an
# agent offering that many models), and an agent may offer 100 options of 100 values each.
MAX_SCHEMA_CHARS = 8_000


def offered(choices: Sequence[Choice]) -> tuple[Choice, ...]:
    """The options that become properties: selects with values, the model left out."""
    return tuple(c for c in choices if c.kind == "select" and c.values and c.category != MODEL)


def in_chat_input(choices: Sequence[Choice]) -> Choice | None:
    """The option shown in the chat input: the agent's mode, else its thought level."""
    for category in (MODE, THOUGHT_LEVEL):
        if (choice := next((c for c in choices if c.category == category), None)) is not None:
            return choice
    return None


def _bypasses(choice: Choice, value: str) -> bool:
    return choice.category == MODE and bypasses_permissions(next((v for v in choice.values if v.value == value), None) or value)


def _default(choice: Choice, settings: Mapping[str, OptionValue], all_choices: Sequence[Choice]) -> str | None:
    """The value a property shows until the user chooses: the settings' where offered, else the agent's current."""
    for key, value in settings.items():
        if find(all_choices, key) is choice and isinstance(value, str) and choice.offers(value) and not _bypasses(choice, value):
            return value
    current = choice.current
    if isinstance(current, str) and choice.offers(current) and not _bypasses(choice, current):
        return current
    return next((v.value for v in choice.values if not _bypasses(choice, v.value)), None)


def configuration_schema(choices: Sequence[Choice], settings: Mapping[str, OptionValue] | None = None) -> dict[str, Any] | None:
    """The model's `configurationSchema`; None for an agent that offers no such option (or none known yet).

    The chat input's option first, then the others while the schema stays within `MAX_SCHEMA_CHARS`."""
    options = offered(choices)
    if not options:
        return None
    settings = settings or {}
    first = in_chat_input(options)
    properties: dict[str, Any] = {}
    size = 0
    for choice in sorted(options, key=lambda c: c is not first):
        values = choice.values
        default = _default(choice, settings, choices)
        labels = [f"{v.name} (bypasses permissions)" if _bypasses(choice, v.value) else v.name for v in values]
        descriptions = [BYPASS_NOTE + (f". {v.description}" if v.description else "") if _bypasses(choice, v.value) else v.description for v in values]
        prop: dict[str, Any] = {
            "type": "string",
            "title": choice.name,
            "enum": [v.value for v in values],
            "enumItemLabels": labels,
            "enumDescriptions": descriptions,
        }
        if choice.description:
            prop["description"] = choice.description
        if default is not None:
            prop["default"] = default
        if choice is first:
            prop["group"] = CHAT_INPUT_GROUP
        cost = len(json.dumps({choice.id: prop}))
        if size + cost > MAX_SCHEMA_CHARS:
            continue
        size += cost
        properties[choice.id] = prop
    if not properties:
        return None
    return {"type": "object", "properties": properties}


def wanted_options(
    settings: Mapping[str, OptionValue], chosen: Mapping[str, Any], choices: Sequence[Choice]
) -> dict[str, OptionValue]:
    """What a request wants of the agent's options: the settings' (and the model entry's), with
    what the user chose in VS Code's controls over them (`chosen`, the request's
    `modelConfiguration`). A chosen value that is the property's default, one the agent does not
    offer, or a key that is no property is not a choice. Keys naming the same option (`effort`
    and `reasoning_effort`) become the option's id, so one choice never fights another."""
    schema = configuration_schema(choices, settings)
    properties: Mapping[str, Any] = schema["properties"] if schema else {}
    wanted: dict[str, OptionValue] = {}
    for key, value in settings.items():
        choice = find(choices, key)
        wanted[choice.id if choice is not None else key] = value
    for key, value in chosen.items():
        prop = properties.get(key)
        if prop is None or not isinstance(value, str) or value not in prop["enum"] or value == prop.get("default"):
            continue
        wanted[key] = value
    return wanted
