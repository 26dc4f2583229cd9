"""The agent's slash commands, as it announces them (ACP `available_commands_update`), read through
typed values: an entry without a usable name is left out, an odd description or hint reads as
absent, never a failure (docs/DESIGN.md, "What an agent declares"). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from protocol.acp.update_kinds import UpdateKind, kind_of

MAX_COMMANDS = 256  # an agent announcing more is cut here: the list is shown to a user
MAX_TEXT = 500  # characters of a description or hint kept


@attrs.frozen
class AgentCommand:
    """One command the agent runs when a prompt starts with `/name`."""

    name: str  # without the slash
    description: str = ""
    hint: str = ""  # what the command takes after its name, if the agent says

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "description": self.description, "hint": self.hint}


def _text(value: Any) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def read_command(raw: Any) -> AgentCommand | None:
    if not isinstance(raw, Mapping):
        return None
    name = raw.get("name")
    if not isinstance(name, str):
        return None
    name = name.strip().removeprefix("/")
    if not name or len(name) > 100 or any(c.isspace() or c == "/" for c in name):
        return None
    hint = raw.get("input")
    return AgentCommand(name, _text(raw.get("description")), _text(hint.get("hint")) if isinstance(hint, Mapping) else "")


def read_commands(update: Mapping[str, Any]) -> tuple[AgentCommand, ...] | None:
    """The commands an `available_commands_update` announces (the whole list, each time); None for
    an update of another kind. Duplicate names keep the first."""
    if kind_of(update) != UpdateKind.AVAILABLE_COMMANDS_UPDATE:
        return None
    raw = update.get("availableCommands")
    commands: dict[str, AgentCommand] = {}
    for entry in raw if isinstance(raw, list) else ():
        command = read_command(entry)
        if command is not None and command.name not in commands and len(commands) < MAX_COMMANDS:
            commands[command.name] = command
    return tuple(commands.values())


def commands_from_json(raw: Any) -> tuple[AgentCommand, ...]:
    """Commands as `AgentCommand.to_json` wrote them (the catalog's copy), odd entries left out."""
    if not isinstance(raw, list):
        return ()
    read = (read_command({"name": r.get("name"), "description": r.get("description"), "input": {"hint": r.get("hint")}}) for r in raw if isinstance(r, Mapping))
    return tuple(c for c in read if c is not None)[:MAX_COMMANDS]
