"""The VS Code LM wire types (docs/DESIGN.md, "Wire protocol"): what the extension and the backend exchange.

Parts are tagged by `"type"`; the agent definition is externally tagged with snake_case
variant names (`{"eliza": {...}}`, `{"mcp_server": {...}}`). Everything is frozen so
messages can be hashed and compared when matching history.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from protocol.shared.structuring import WireError, converter, describe, expect_object, structure, unstructure
from protocol.vscode.data_parts import data_problem

AGENT_ACTION_TOOL = "symposium-agent-action"
# Copilot's todo widget: an agent's ACP plan is mirrored into it when a request offers it
# (docs/DESIGN.md, "The agent's plan").
TODO_TOOL = "manage_todo_list"
# Copilot's question UI: an agent's form elicitation is asked through it (docs/DESIGN.md, "The agent's questions").
ASK_TOOL = "vscode_askQuestions"
# What the extension's `symposium-agent-action` tool returns when the user allowed the action.
# Only a tool result whose first text part is exactly this approves: anything else (Skip,
# a disabled tool, invalid input, an error) is a "no".
AGENT_ACTION_APPROVED = "symposium-agent-action:approved"

METHOD_INFO = "lm/provideLanguageModelChatInformation"
METHOD_CHAT = "lm/provideLanguageModelChatResponse"
METHOD_CANCEL = "lm/cancel"
METHOD_PART = "lm/responsePart"
METHOD_COMPLETE = "lm/responseComplete"
METHOD_PREPARE = "lm/prepareModel"
METHOD_MODELS_CHANGED = "lm/modelsChanged"  # backend → extension: ask for the models again
METHOD_AGENT_OPTIONS = "lm/agentOptions"
METHOD_AGENT_COMMANDS = "lm/agentCommands"
METHOD_LIST_SESSIONS = "lm/listSessions"
METHOD_AUTHENTICATE = "lm/authenticate"  # the user chose one of an agent's sign-in methods (docs/DESIGN.md, "Sign-in")
METHOD_LOGOUT = "lm/logout"


# Parts ----------------------------------------------------------------------------------


@attrs.frozen
class TextPart:
    """Text: what the user wrote, what the agent answers."""

    value: str
    type: Literal["text"] = "text"


@attrs.frozen
class ThinkingPart:
    """The agent's reasoning (response only); never part of what matching compares."""

    value: str
    type: Literal["thinking"] = "thinking"


@attrs.frozen
class ToolCallPart:
    tool_call_id: str
    tool_name: str
    parameters: Any = None
    type: Literal["tool_call"] = "tool_call"


@attrs.frozen
class DataPart:
    """Bytes with a mime type: an image the user attached; consumer bookkeeping (`cache_control`)."""

    mime_type: str
    data: str  # base64
    type: Literal["data"] = "data"


@attrs.frozen
class HeldDataPart:
    """A data part an idle conversation keeps by its digest only, its bytes released
    (`protocol/history/held_data.py`). Never on the wire: it matches the `DataPart` it stands for, whose
    form is its digest too (`canonical.data_digest`)."""

    mime_type: str
    digest: str
    type: Literal["held_data"] = "held_data"


@attrs.frozen
class MarkerPart:
    """Our signed conversation marker (docs/DESIGN.md, "Identity and markers"): sent with a reply,
    it comes back in the history and names the conversation the reply belongs to."""

    value: str
    type: Literal["marker"] = "marker"


@attrs.frozen
class UsagePart:
    """What the agent reported a response cost (response only): the extension hands it to VS Code
    as a `usage` data part, which Copilot Chat reads for its context-window indicator."""

    prompt_tokens: int  # the agent's context: what its next model request starts from
    completion_tokens: int
    total_tokens: int
    cached_tokens: int = 0
    type: Literal["usage"] = "usage"


@attrs.frozen
class EditPart:
    """A file the agent changed on disk (response only), as the ACP `diff` content said: the
    extension keeps it so the user can review the conversation's edits in VS Code's diff view,
    and revert them. `old_text` None: the agent created the file. The texts are the whole file
    or a region of it (with context), as the agent sent them."""

    path: str
    new_text: str
    old_text: str | None = None
    conversation: str = ""  # the conversation it was made in: what a review or revert takes together
    type: Literal["edit"] = "edit"


ResultItem = TextPart | DataPart


@attrs.frozen
class ToolResultPart:
    tool_call_id: str
    content: tuple[ResultItem, ...] = ()
    type: Literal["tool_result"] = "tool_result"

    def text(self) -> str:
        return "".join(item.value for item in self.content if isinstance(item, TextPart))


Part = TextPart | ThinkingPart | ToolCallPart | ToolResultPart | DataPart | MarkerPart | UsagePart | EditPart

_PART_TYPES: dict[str, type] = {
    "text": TextPart,
    "thinking": ThinkingPart,
    "tool_call": ToolCallPart,
    "tool_result": ToolResultPart,
    "data": DataPart,
    "marker": MarkerPart,
}


def _structure_tagged(value: Any, allowed: dict[str, type]) -> Any:
    obj = expect_object(value, "")
    tag = obj.get("type")
    cl = allowed.get(tag) if isinstance(tag, str) else None
    if cl is None:
        known = ", ".join(repr(t) for t in allowed)
        raise WireError("type", f"unknown part type {tag!r} (expected one of {known})")
    part: Part = structure(obj, cl)
    if isinstance(part, DataPart) and (problem := data_problem(part.mime_type, part.data)):
        raise WireError("data", problem)
    return part


converter.register_structure_hook(Part, lambda v, _: _structure_tagged(v, _PART_TYPES))
converter.register_structure_hook(ResultItem, lambda v, _: _structure_tagged(v, {"text": TextPart, "data": DataPart}))


# Messages and requests ----------------------------------------------------------------------

Role = Literal["user", "assistant", "system"]
_ROLES = ("user", "assistant", "system")


def _structure_role(value: Any, _: Any) -> str:
    if value not in _ROLES:
        raise WireError("", f"expected one of 'user', 'assistant', 'system', got {value!r}")
    return str(value)


converter.register_structure_hook_func(lambda t: t == Role, _structure_role)


@attrs.frozen
class Message:
    role: Role
    content: tuple[Part, ...]
    name: str | None = None

    def text(self) -> str:
        return "".join(p.value for p in self.content if isinstance(p, TextPart))


@attrs.frozen
class Tool:
    name: str
    description: str = ""
    input_schema: Any = None


@attrs.frozen
class Options:
    tools: tuple[Tool, ...] = ()
    tool_mode: Literal["auto", "required"] = "auto"


def _structure_tool_mode(value: Any, _: Any) -> str:
    if value not in ("auto", "required"):
        raise WireError("", f"expected 'auto' or 'required', got {value!r}")
    return str(value)


converter.register_structure_hook_func(lambda t: t == Literal["auto", "required"], _structure_tool_mode)


# Agents ------------------------------------------------------------------------------------


@attrs.frozen
class ElizaAgent:
    deterministic: bool = False


@attrs.frozen
class EnvVar:
    name: str
    value: str


@attrs.frozen
class ProcessAgent:
    """An external ACP agent, described like an ACP stdio `McpServer` entry."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[EnvVar, ...] = ()


Agent = ElizaAgent | ProcessAgent
_AGENT_VARIANTS: dict[str, type] = {"eliza": ElizaAgent, "mcp_server": ProcessAgent}


def _structure_agent(value: Any, _: Any) -> Agent:
    obj = expect_object(value, "")
    keys = [k for k in obj if k in _AGENT_VARIANTS]
    if len(keys) != 1:
        raise WireError("", 'expected exactly one of "eliza" or "mcp_server"')
    key = keys[0]
    agent: Agent = structure(obj[key] if obj[key] is not None else {}, _AGENT_VARIANTS[key], key)
    if isinstance(agent, ProcessAgent):
        _check_startable(agent)
    return agent


NUL = "must not contain a NUL character"


def _check_startable(agent: ProcessAgent) -> None:
    """Refuse, on arrival, what the operating system would refuse when the agent starts.

    Process creation raises ValueError, not OSError, for these; found here they are an
    error naming the field (never echoing an env value) instead of a failure much later.
    """
    if not agent.command:
        raise WireError("mcp_server.command", "must not be empty")
    if "\0" in agent.command:
        raise WireError("mcp_server.command", NUL)
    for index, arg in enumerate(agent.args):
        if "\0" in arg:
            raise WireError(f"mcp_server.args[{index}]", NUL)
    for index, var in enumerate(agent.env):
        if not var.name:
            raise WireError(f"mcp_server.env[{index}].name", "must not be empty")
        if "=" in var.name:
            raise WireError(f"mcp_server.env[{index}].name", "must not contain '='")
        if "\0" in var.name:
            raise WireError(f"mcp_server.env[{index}].name", NUL)
        if "\0" in var.value:
            raise WireError(f"mcp_server.env[{index}].value", NUL)



def _unstructure_agent(agent: Agent) -> dict[str, Any]:
    key = "eliza" if isinstance(agent, ElizaAgent) else "mcp_server"
    return {key: converter.unstructure(agent, type(agent))}


converter.register_structure_hook(Agent, _structure_agent)
converter.register_unstructure_hook(ElizaAgent, lambda a: {"deterministic": a.deterministic})
converter.register_unstructure_hook(
    ProcessAgent,
    lambda a: {"name": a.name, "command": a.command, "args": list(a.args), "env": [{"name": e.name, "value": e.value} for e in a.env]},
)


@attrs.frozen
class AgentOptions:
    """The agent's options a request wants (`{"model": "sonnet", "mode": "plan"}`), by option id or category."""

    items: tuple[tuple[str, str | bool], ...] = ()


def _structure_agent_options(value: Any, _: Any) -> AgentOptions:
    obj = expect_object(value, "")
    items = []
    for key, item in obj.items():
        if not key:
            raise WireError("", "an option needs a name")
        if not isinstance(item, (str, bool)):
            raise WireError(key, f"expected a string or a boolean, got {describe(item)}")
        items.append((key, item))
    return AgentOptions(tuple(sorted(items)))


converter.register_structure_hook(AgentOptions, _structure_agent_options)
converter.register_unstructure_hook(AgentOptions, lambda o: dict(o.items))


@attrs.frozen
class BridgedTools:
    """Which of the consumer's tools agents get (the `symposium.bridgedTools` setting; the
    decision is `protocol/bridge/tool_policy.py`'s): `"default"`, `"all"`, or a list of tool names."""

    choice: Literal["default", "all", "list"] = "default"
    names: tuple[str, ...] = ()


def _structure_bridged_tools(value: Any, _: Any) -> BridgedTools:
    if value in ("default", "all"):
        return BridgedTools(value)
    if isinstance(value, list) and all(isinstance(name, str) for name in value):
        return BridgedTools("list", tuple(value))
    raise WireError("", f"expected 'default', 'all' or a list of tool names, got {describe(value)}")


converter.register_structure_hook(BridgedTools, _structure_bridged_tools)
converter.register_unstructure_hook(BridgedTools, lambda b: list(b.names) if b.choice == "list" else b.choice)


@attrs.frozen
class ChatParams:
    model_id: str
    # The messages as JSON values: History reads them (`protocol/history/reading.py`), reusing what it
    # read of the conversation's previous request, so only new messages cost a parse.
    messages: tuple[Any, ...]
    agent: Agent = ElizaAgent()
    options: Options = Options()
    cwd: str | None = None
    agent_options: AgentOptions = AgentOptions()
    bridged_tools: BridgedTools = BridgedTools()
    # What the user chose in the model's own controls (VS Code's `modelConfiguration`): read,
    # leniently, against the options the agent offers (`protocol/acp/model_configuration.py`).
    model_configuration: Any = None
    folders: tuple[str, ...] = ()  # every folder of the workspace (`cwd` is the first): the agent's session gets them all


@attrs.frozen
class AgentEntry:
    id: str
    name: str
    agent: Agent
    options: AgentOptions = AgentOptions()  # the entry's `options`: the defaults its controls show


@attrs.frozen
class InfoParams:
    silent: bool = False
    agents: tuple[AgentEntry, ...] = ()


@attrs.frozen
class PrepareParams:
    """A model the user is about to use: start its agent and have a session ready."""

    model_id: str
    agent: Agent = ElizaAgent()
    cwd: str | None = None


@attrs.frozen
class AgentParams:
    """An agent, for what is asked about it rather than of a conversation."""

    agent: Agent
    cwd: str | None = None


@attrs.frozen
class AuthenticateParams:
    """A sign-in method of the agent's the user chose (its id, from an error's `data.methods`)."""

    agent: Agent
    method_id: str
    cwd: str | None = None


@attrs.frozen
class ListSessionsParams:
    agent: Agent
    cwd: str | None = None
    cursor: str | None = None


@attrs.frozen
class CancelParams:
    request_id: Any


@attrs.frozen
class Capabilities:
    tool_calling: bool = True
    image_input: bool = False
    # No edit tools hint: VS Code 1.139 reads a provider's `capabilities.editTools` only through the
    # proposed `chatProvider` API, and never `editToolsHint`; Copilot picks the edit tools it offers
    # a model by the model's name (docs/usage.md, "Copilot Chat: tools and edits").


@attrs.frozen
class ModelInfo:
    id: str
    name: str
    family: str
    version: str
    max_input_tokens: int
    max_output_tokens: int
    capabilities: Capabilities
    detail: str | None = None
    tooltip: str | None = None
    bytes_per_token: float | None = None  # the agent's, learned from its usage: token counts divide by it
    configuration_schema: Any = None  # the agent's options as the model's controls (`protocol/acp/model_configuration.py`)


SIGN_IN_NOTE = "sign-in needed"


def agent_detail(version: str | None, sign_in: bool | None) -> str:
    """What the model picker shows beside an agent's own entry: an ACP agent, its version as it last
    started, and that it wants a sign-in when it last did (docs/usage.md, "The agent's own choices")."""
    detail = f"ACP agent {version}" if version else "ACP agent"
    return f"{detail} · {SIGN_IN_NOTE}" if sign_in else detail


def agent_tooltip(name: str, version: str | None, sign_in: bool | None) -> str:
    """The hover of an agent's own entry."""
    said = f"{name} {version}" if version else name
    text = f"{said}, an ACP agent run by Symposium."
    return text + (" It wants a sign-in: Symposium: Sign In to an Agent." if sign_in else "")


def parse(value: Any, cl: type[Any]) -> Any:
    """Structure request params; a missing params object counts as `{}`."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise WireError("", f"params must be an object, got {describe(value)}")
    params = structure(value, cl)
    if isinstance(params, ChatParams) and params.cwd is not None and "\0" in params.cwd:
        raise WireError("cwd", NUL)
    if isinstance(params, ChatParams) and any("\0" in f for f in params.folders):
        raise WireError("folders", NUL)
    return params


def parse_info(value: Any) -> tuple[InfoParams, list[WireError]]:
    """Model-list params, leaving out the agent entries that are invalid (each a WireError).

    One mistyped agent in the user's settings must not hide every other model.
    """
    obj = {} if value is None else value
    if not isinstance(obj, dict):
        raise WireError("", f"params must be an object, got {describe(obj)}")
    raw_agents = obj.get("agents", [])
    if not isinstance(raw_agents, list):
        raise WireError("agents", f"expected an array, got {describe(raw_agents)}")
    entries: list[AgentEntry] = []
    problems: list[WireError] = []
    for index, raw in enumerate(raw_agents):
        try:
            entries.append(structure(raw, AgentEntry, f"agents[{index}]"))
        except WireError as exc:
            problems.append(exc)
    info = structure({k: v for k, v in obj.items() if k != "agents"}, InfoParams)
    return attrs.evolve(info, agents=tuple(entries)), problems


def part_to_wire(part: Part) -> dict[str, Any]:
    wire: dict[str, Any] = converter.unstructure(part, type(part))
    return wire


def agent_to_wire(agent: Agent) -> dict[str, Any]:
    return _unstructure_agent(agent)


def to_wire(value: Any) -> Any:
    return unstructure(value)
