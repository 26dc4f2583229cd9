"""What Symposium knows of an agent that the agent does not declare: data, read from one table.

Decisions are made from what an agent declares (capabilities, authMethods), never by branching on
its name. What must differ per agent all the same (what its sessions are opened with, how to switch
its own file editing off, how it forks a session at a message, whether it takes only HTTP MCP servers,
which variables an agent-handled sign-in reads its key from, what it needs in its environment at start)
is data in one table beside the catalogue: the `agentInfo` section of `extension/catalogue/overrides.json`,
keyed by the `agentInfo.name` an agent gives at `initialize`, so it holds for an agent configured by hand
as much as for one installed from the catalogue (docs/DESIGN.md, "Agent facts"). What is needed before
`initialize` (`startEnv`) is matched by what the agent runs instead (`runs`: its npm package, or its
command's name): `start_env`.

Pure: `parse_agent_facts` validates the file's content (the reading is `symposium/agent_facts.py`);
a malformed entry is left out with a message saying what is wrong, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from protocol.acp.capabilities import Initialized

SECTION = "agentInfo"
MESSAGE_ID = "{messageId}"  # in `forksAtMessage._meta`: replaced by the id of the message the fork ends with
FIELDS = frozenset({"sessionMeta", "ownEdits", "forksAtMessage", "httpMcpOnly", "keys", "keyMethod", "startEnv", "signInEnv", "runs", "why"})
RUNS = frozenset({"npm", "commands"})
NAME_SHAPES = {"npm": re.compile(r"(@[A-Za-z0-9._-]+/)?[A-Za-z0-9._-]+"), "commands": re.compile(r"[A-Za-z0-9._-]+")}
MAX_NAMES = 16  # variables per method, packages or commands per entry: a few each in practice


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
        filled: dict[str, Any] = _fill(self.template, message_id)
        return filled


@attrs.frozen
class KeyMethod:
    """A sign-in by API key an agent reads from its environment without declaring it as a method."""

    id: str
    name: str
    description: str
    vars: tuple[str, ...]


@attrs.frozen
class Runs:
    """What an agent runs, to know it by before it says its name: its npm packages (run by `npx`, or
    installed under a `node_modules` folder, as Add Agent does) and its commands' names (on PATH)."""

    npm: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()

    def matches(self, command: str, args: Sequence[str]) -> bool:
        words = [command.replace("\\", "/"), *(a.replace("\\", "/") for a in args)]
        if _program(command) in self.commands:
            return True
        for package in self.npm:
            for word in words:
                if word == package or word.startswith(f"{package}@") or f"/node_modules/{package}/" in word:
                    return True
        return False


def _program(command: str) -> str:
    """A command's name, without its folder and, on Windows, its extension (`gemini.cmd` is `gemini`)."""
    name = command.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, extension = name.rpartition(".")
    return stem if dot and extension.lower() in ("cmd", "exe", "bat", "ps1") else name


@attrs.frozen
class AgentFacts:
    """What is known of one agent (by its `agentInfo.name`); the default: nothing."""

    own_edits: OwnEdits | None = None
    forks_at_message: MessageFork | None = None
    http_mcp_only: bool = False  # it takes only HTTP MCP servers from a client (protocol/bridge/mcp_transport.py)
    session_meta: Mapping[str, Any] = attrs.field(factory=dict)  # `_meta` every session of it is opened with
    # Its agent-handled sign-in methods that read an API key from the environment: method id → the
    # variables it reads, the first one set wins (protocol/acp/auth.py gives these methods a key box).
    keys: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    # A sign-in by API key it does not declare, though it reads one from its environment at start:
    # offered beside its own methods (protocol/acp/auth.py), with the key given at start, no `authenticate`.
    key_method: KeyMethod | None = None
    start_env: Mapping[str, str] = attrs.field(factory=dict)  # what it needs in its environment at start
    runs: Runs | None = None  # how it is recognised before it has said its name: what it runs
    # Variables it documents that its sign-in methods may set, beyond those named like a credential
    # (`*_API_KEY`, `*_TOKEN`, `*_BASE_URL`: protocol/acp/auth.py, `may_set`).
    sign_in_env: tuple[str, ...] = ()

    @property
    def documented_env(self) -> frozenset[str]:
        """Every variable these facts name: what a sign-in method of this agent may set (`auth.may_set`)."""
        names = {*self.sign_in_env, *self.start_env, *(name for names in self.keys.values() for name in names)}
        return frozenset(names | set(self.key_method.vars if self.key_method else ()))


NOTHING = AgentFacts()
AgentFactsTable = Mapping[str, AgentFacts]


def facts_for(table: AgentFactsTable, initialized: Initialized) -> AgentFacts:
    """The facts of the agent whose `initialize` answer this is: by its `agentInfo.name`."""
    name = initialized.info.name if initialized.info is not None else None
    return table.get(name, NOTHING) if name is not None else NOTHING


def start_env(table: AgentFactsTable, command: str, args: Sequence[str]) -> dict[str, str]:
    """What an agent needs in its environment at start (`startEnv`), for an agent recognised by what
    it runs, however it was configured (Add Agent or by hand); its own configured `env` goes over it."""
    env: dict[str, str] = {}
    for facts in table.values():
        if facts.start_env and facts.runs is not None and facts.runs.matches(command, args):
            env.update(facts.start_env)
    return env


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
    session = entry.get("sessionMeta")
    own = entry.get("ownEdits")
    fork = entry.get("forksAtMessage")
    http = entry.get("httpMcpOnly", False)
    if not isinstance(http, bool):
        raise ValueError("'httpMcpOnly' is not true or false")
    start = _start_env(entry.get("startEnv", {}))
    runs = _runs(entry["runs"]) if "runs" in entry else None
    if start and runs is None:
        raise ValueError("'startEnv' without 'runs': nothing to know the agent by before it starts")
    return AgentFacts(
        session_meta=_meta(session, "sessionMeta") if session is not None else {},
        own_edits=OwnEdits(_meta(own, "ownEdits")) if own is not None else None,
        forks_at_message=_fork(fork) if fork is not None else None,
        http_mcp_only=http,
        keys=_keys(entry.get("keys", {})),
        key_method=_key_method(entry["keyMethod"]) if "keyMethod" in entry else None,
        start_env=start,
        runs=runs,
        sign_in_env=_names(entry.get("signInEnv", []), "signInEnv"),
    )


def _env_name(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", value) is not None


def _keys(value: Any) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, Mapping):
        raise ValueError("'keys' is not an object")
    keys: dict[str, tuple[str, ...]] = {}
    for method, names in value.items():
        if not isinstance(names, list) or not names or len(names) > MAX_NAMES or not all(_env_name(n) for n in names):
            raise ValueError(f"'keys[{method!r}]' is not a list of variable names")
        keys[method] = tuple(names)
    return keys


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_NAMES or not all(_env_name(n) for n in value):
        raise ValueError(f"'{where}' is not a list of variable names")
    return tuple(value)


def _key_method(value: Any) -> KeyMethod:
    if not isinstance(value, Mapping) or not all(isinstance(value.get(f), str) and value.get(f) for f in ("id", "name")):
        raise ValueError("'keyMethod' needs an 'id' and a 'name'")
    names = value.get("vars")
    if not isinstance(names, list) or not names or len(names) > MAX_NAMES or not all(_env_name(n) for n in names):
        raise ValueError("'keyMethod.vars' is not a list of variable names")
    description = value.get("description", "")
    if not isinstance(description, str) or set(value) - {"id", "name", "description", "vars"}:
        raise ValueError("'keyMethod' has a field other than id, name, description and vars")
    return KeyMethod(value["id"], value["name"], description, tuple(names))


def _start_env(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or len(value) > MAX_NAMES:
        raise ValueError("'startEnv' is not an object of a few variables")
    for name, setting in value.items():
        if not _env_name(name) or not isinstance(setting, str) or "\0" in setting:
            raise ValueError(f"'startEnv[{name!r}]' is not a variable name with a string value")
    return dict(value)


def _runs(value: Any) -> Runs:
    if not isinstance(value, Mapping) or not value or set(value) - RUNS:
        raise ValueError(f"'runs' is not an object of {' and/or '.join(sorted(RUNS))}")
    lists = {}
    for field in RUNS:
        names = value.get(field, [])
        if not isinstance(names, list) or len(names) > MAX_NAMES or not all(isinstance(n, str) and NAME_SHAPES[field].fullmatch(n) for n in names):
            raise ValueError(f"'runs.{field}' is not a list of names")
        lists[field] = tuple(names)
    return Runs(npm=lists["npm"], commands=lists["commands"])


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
