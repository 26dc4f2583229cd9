"""A consumer's tools as MCP tools: schemas normalised to what the newest MCP protocol requires.

Pure (no trio, no SDK): the ToolBridge lists what `listable` returns and logs its problems.
See "Tool bridge" in docs/DESIGN.md.

A VS Code consumer's tool schemas are whatever its tools declared: Copilot 0.67 sends three
with `{}`, and anything may come from another extension. MCP (2025-11-25 and 2026-07-28) wants
an `inputSchema` whose root is `type: "object"`, with `properties` a map of schemas and
`required` a list of names. A schema the SDK refuses makes the whole `tools/list` fail
("Handler returned an invalid result"), which costs the agent every tool; so each tool is
mended where that keeps its meaning, and left out, with a reason, where it cannot be.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from protocol.bridge.tool_names import ToolNames
from protocol.bridge.tool_policy import READ_ONLY
from protocol.vscode.lm import Tool

OBJECT = {"type": "object"}


def input_schema(schema: Any) -> dict[str, Any] | str:
    """The schema MCP can carry, or why it cannot carry this one.

    A schema that is not an object (missing, `null`, a string) says nothing about the input:
    any object. `{}` and a schema without `type` accept any JSON value, and tool inputs are
    objects, so `type: "object"` narrows nothing a caller could send. A root of another type
    (`"string"`) or an ill-formed `properties` / `required` would change meaning if mended.
    """
    if not isinstance(schema, dict):
        return dict(OBJECT)
    kind = schema.get("type", "object")
    if isinstance(kind, list) and "object" in kind:
        kind = "object"  # ["object", "null"]: a tool's input is always an object
    if kind != "object":
        return f"its input schema's type is {kind!r}, not 'object'"
    properties = schema.get("properties")
    if properties is not None and not (isinstance(properties, dict) and all(isinstance(v, (dict, bool)) for v in properties.values())):
        return "its input schema's 'properties' is not a map of schemas"
    required = schema.get("required")
    if required is not None and not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
        return "its input schema's 'required' is not a list of names"
    if "$schema" in schema and not isinstance(schema["$schema"], str):
        return "its input schema's '$schema' is not a string"
    return {**schema, "type": "object"}


def listable(tools: Iterable[Tool], names: ToolNames | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The tools as MCP `Tool` objects (wire names), and a line for each tool left out.

    Each is listed by its name in `names` (protocol.bridge.tool_names) when given. A name already
    listed is left out too: a client keys tools by name, and the first one is the one VS Code
    would run.
    """
    listed: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for tool in tools:
        if not tool.name:
            problems.append("a tool without a name was left out")
            continue
        if tool.name in seen:
            problems.append(f"tool {tool.name!r} was left out: its name is listed already")
            continue
        schema = input_schema(tool.input_schema)
        if isinstance(schema, str):
            problems.append(f"tool {tool.name!r} was left out: {schema}")
            continue
        seen.add(tool.name)
        entry: dict[str, Any] = {"name": names.agent(tool.name) if names else tool.name, "inputSchema": schema}
        if tool.description:
            entry["description"] = tool.description
        if tool.name in READ_ONLY:
            entry["annotations"] = {"readOnlyHint": True}  # docs/DESIGN.md, "Parallel tool calls"
        listed.append(entry)
    return listed, problems
