"""What Symposium knows of an agent that the agent does not declare: data, read from one table.

Decisions are made from what an agent declares (capabilities, authMethods), never by branching on
its name. What must differ per agent all the same (how to switch its own file editing off, how it
forks a session at a message, whether it takes only HTTP MCP servers) is data in one table beside
the catalogue: the `agentInfo` section of `extension/catalogue/overrides.json`, keyed by the
`agentInfo.name` an agent gives at `initialize`, so it holds for an agent configured by hand as
much as for one installed from the catalogue (docs/DESIGN.md, "Agent facts").

Pure: `parse_agent_facts` validates the file's content (the reading is `actors/agent_facts.py`);
a malformed entry is left out with a message saying what is wrong, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from protocol.capabilities import Initialized

SECTION = "agentInfo"
MESSAGE_ID = "{messageId}"  # in `forksAtMessage._meta`: replaced by the id of the message the fork ends with
FIELDS = frozenset({"ownEdits", "forksAtMessage", "httpMcpOnly", "why"})


@attrs.frozen
class OwnEdits:
    """How an agent's own file editing is switched off at `session/new`: what `_meta` to add."""

    meta: Mapping[str, Any]


@attrs.frozen
class MessageFork:
    """How an agent forks a session at a message: `session/fork`'s `_meta`, from version `since`."""

    since: tuple[int, ...]  # the agent's version from which it is known to (the version tested)
    template: Mapping[str, Any]  # the `_meta`, with MESSAGE_ID where the message's id goes

    def meta(self, message_id: str) -> dict[str, Any]:
        return _fill(self.template, message_id)


@attrs.frozen
class AgentFacts:
    """What is known of one agent (by its `agentInfo.name`); the default: nothing."""

    own_edits: OwnEdits | None = None
    forks_at_message: MessageFork | None = None
    http_mcp_only: bool = False  # it takes only HTTP MCP servers from a client (protocol/mcp_transport.py)


NOTHING = AgentFacts()
AgentFactsTable = Mapping[str, AgentFacts]


def facts_for(table: AgentFactsTable, initialized: Initialized) -> AgentFacts:
    """The facts of the agent whose `initialize` answer this is: by its `agentInfo.name`."""
    name = initialized.info.name if initialized.info is not None else None
    return table.get(name, NOTHING) if name is not None else NOTHING


def version(value: Any) -> tuple[int, ...] | None:
    """`major.minor.patch` (anything after it ignored: a pre-release counts as its version)."""
    match = re.match(r"^(\d{1,9})\.(\d{1,9})\.(\d{1,9})", value) if isinstance(value, str) else None
    return tuple(int(part) for part in match.groups()) if match else None


def parse_agent_facts(document: Any) -> tuple[dict[str, AgentFacts], list[str]]:
    """The table in an overrides document (the parsed JSON of overrides.json), and what is wrong
    with it: an entry with a problem is left out whole, the others kept."""
    if not isinstance(document, Mapping):
        return {}, ["the file is not a JSON object"]
    section = document.get(SECTION, {})
    if not isinstance(section, Mapping):
        return {}, [f"{SECTION!r} is not an object"]
    table: dict[str, AgentFacts] = {}
    problems: list[str] = []
    for name, entry in section.items():
        try:
            table[name] = _entry(entry)
        except ValueError as exc:
            problems.append(f"{SECTION}[{name!r}]: {exc}; left out")
    return table, problems


def _entry(entry: Any) -> AgentFacts:
    if not isinstance(entry, Mapping):
        raise ValueError("not an object")
    unknown = sorted(set(entry) - FIELDS)
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r} (known: {', '.join(sorted(FIELDS))})")
    if "why" in entry and not isinstance(entry["why"], str):
        raise ValueError("'why' is not a string")
    own = entry.get("ownEdits")
    fork = entry.get("forksAtMessage")
    http = entry.get("httpMcpOnly", False)
    if not isinstance(http, bool):
        raise ValueError("'httpMcpOnly' is not true or false")
    return AgentFacts(
        own_edits=OwnEdits(_meta(own, "ownEdits")) if own is not None else None,
        forks_at_message=_fork(fork) if fork is not None else None,
        http_mcp_only=http,
    )


def _meta(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping) or not isinstance(meta := value.get("_meta"), Mapping):
        raise ValueError(f"{where!r} has no '_meta' object")
    return meta


def _fork(value: Any) -> MessageFork:
    meta = _meta(value, "forksAtMessage")
    since = version(value.get("since"))
    if since is None:
        raise ValueError("'forksAtMessage.since' is not a version (major.minor.patch)")
    if MESSAGE_ID not in _strings(meta):
        raise ValueError(f"'forksAtMessage._meta' has no {MESSAGE_ID!r} for the message's id")
    return MessageFork(since, meta)


def _strings(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _fill(value: Any, message_id: str) -> Any:
    if isinstance(value, Mapping):
        return {k: _fill(v, message_id) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, message_id) for v in value]
    return message_id if value == MESSAGE_ID else value
