"""What an agent declares at `initialize`, read once into typed values (docs/DESIGN.md, "What an agent declares").

An agent is a peer: its `initialize` answer is read here, and only here, into `Initialized`; every
other module decides from these values, never from the raw JSON. A field the schema gives one type
and the agent gives another (null, a string where an object belongs, a list where a boolean does)
is taken as absent and named in `Initialized.odd`, which the agent's actor logs once. Nothing here
raises on what an agent sends. Pure.

The vocabulary follows ACP's schema: a capability that is an object (`sessionCapabilities.fork`,
`auth.logout`) is declared by being an object, `{}` included; a boolean one by being `true`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class AgentInfo:
    """`agentInfo`: who the agent says it is. Each part None when absent or not a string."""

    name: str | None = None
    title: str | None = None
    version: str | None = None


@attrs.frozen
class PromptCapabilities:
    """`promptCapabilities`: what a prompt may carry beyond text and resource links."""

    image: bool = False
    audio: bool = False
    embedded_context: bool = False


@attrs.frozen
class McpCapabilities:
    """`mcpCapabilities`: the MCP transports the agent takes besides stdio."""

    http: bool = False
    sse: bool = False


@attrs.frozen
class SessionCapabilities:
    """`sessionCapabilities` (and `loadSession`): what the agent does with sessions besides open one."""

    load: bool = False  # `loadSession`: session/load, replaying the session
    resume: bool = False  # session/resume, without replay
    fork: bool = False  # session/fork
    list: bool = False  # session/list
    close: bool = False  # session/close frees the session
    additional_directories: bool = False  # session/new takes `additionalDirectories`: the workspace's other folders

    @property
    def can_continue(self) -> bool:
        """Whether an earlier session can be taken back, one way or the other."""
        return self.resume or self.load


@attrs.frozen
class AgentCapabilities:
    """`agentCapabilities`."""

    prompt: PromptCapabilities = PromptCapabilities()
    mcp: McpCapabilities = McpCapabilities()
    sessions: SessionCapabilities = SessionCapabilities()
    logout: bool = False  # `auth.logout`: the agent takes ACP `logout`


@attrs.frozen
class Initialized:
    """An agent's `initialize` answer, as far as it could be read."""

    protocol_version: int | None = None
    capabilities: AgentCapabilities = AgentCapabilities()
    info: AgentInfo | None = None  # None: the agent sent no `agentInfo` object
    # `authMethods`' entries that are objects, as sent: protocol/acp/auth.py reads each (bounded, cleaned).
    auth_methods: tuple[Mapping[str, Any], ...] = ()
    odd: tuple[str, ...] = ()  # the fields taken as absent because of their type, by their path


NOTHING_DECLARED = Initialized()


class _Reader:
    """Reads fields of one message, noting each that has the wrong type (null included)."""

    def __init__(self) -> None:
        self.odd: list[str] = []

    def _get(self, parent: Mapping[str, Any] | None, key: str, path: str, kinds: tuple[type, ...]) -> Any:
        if parent is None or key not in parent:
            return None
        value = parent[key]
        # bool is an int to Python; a flag of 1 is as odd as a count of true.
        if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
            return value
        self.odd.append(f"{path}{key}")
        return None

    def object(self, parent: Mapping[str, Any] | None, key: str, path: str = "") -> Mapping[str, Any] | None:
        found: Mapping[str, Any] | None = self._get(parent, key, path, (Mapping,))
        return found

    def flag(self, parent: Mapping[str, Any] | None, key: str, path: str = "") -> bool:
        return self._get(parent, key, path, (bool,)) is True

    def text(self, parent: Mapping[str, Any] | None, key: str, path: str = "") -> str | None:
        found: str | None = self._get(parent, key, path, (str,))
        return found

    def declared(self, parent: Mapping[str, Any] | None, key: str, path: str = "") -> bool:
        """A capability declared by being an object."""
        return self.object(parent, key, path) is not None


def read_initialize(result: Any) -> Initialized:
    """`initialize`'s result, read; anything that is not an object reads as nothing declared."""
    if not isinstance(result, Mapping):
        return Initialized(odd=("(the result)",)) if result is not None else NOTHING_DECLARED
    read = _Reader()
    version = read._get(result, "protocolVersion", "", (int,))
    caps = read.object(result, "agentCapabilities")
    prompt = read.object(caps, "promptCapabilities", "agentCapabilities.")
    mcp = read.object(caps, "mcpCapabilities", "agentCapabilities.")
    sessions = read.object(caps, "sessionCapabilities", "agentCapabilities.")
    auth = read.object(caps, "auth", "agentCapabilities.")
    at = "agentCapabilities.sessionCapabilities."
    capabilities = AgentCapabilities(
        prompt=PromptCapabilities(
            image=read.flag(prompt, "image", "agentCapabilities.promptCapabilities."),
            audio=read.flag(prompt, "audio", "agentCapabilities.promptCapabilities."),
            embedded_context=read.flag(prompt, "embeddedContext", "agentCapabilities.promptCapabilities."),
        ),
        mcp=McpCapabilities(
            http=read.flag(mcp, "http", "agentCapabilities.mcpCapabilities."),
            sse=read.flag(mcp, "sse", "agentCapabilities.mcpCapabilities."),
        ),
        sessions=SessionCapabilities(
            load=read.flag(caps, "loadSession", "agentCapabilities."),
            resume=read.declared(sessions, "resume", at),
            fork=read.declared(sessions, "fork", at),
            list=read.declared(sessions, "list", at),
            close=read.declared(sessions, "close", at),
            additional_directories=read.declared(sessions, "additionalDirectories", at),
        ),
        logout=read.declared(auth, "logout", "agentCapabilities.auth."),
    )
    info_raw = read.object(result, "agentInfo")
    info = None
    if info_raw is not None:
        info = AgentInfo(
            name=read.text(info_raw, "name", "agentInfo."),
            title=read.text(info_raw, "title", "agentInfo."),
            version=read.text(info_raw, "version", "agentInfo."),
        )
    methods = read._get(result, "authMethods", "", (list,)) or []
    entries = tuple(entry for entry in methods if isinstance(entry, Mapping))
    if len(entries) != len(methods):
        read.odd.append("authMethods[]")
    return Initialized(protocol_version=version, capabilities=capabilities, info=info, auth_methods=entries, odd=tuple(read.odd))
