"""VS Code's tools reach every agent: any consumer's tool list is served over MCP.

The pure normalisation (`protocol/bridge/tool_schema.py`) is checked against the SDK's own wire models of
both current protocol revisions; the bridge is checked with Copilot 0.67's real Agent- and
Ask-mode tool lists (`tests/support/fixtures/`, as Copilot sent them to our provider) through the SDK's
`Client` at the newest protocol version it speaks, over the real relay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.bridge.listener import BridgeListener
from actors.bridge.tool_bridge import ToolBridge
from protocol.bridge.tool_schema import input_schema, listable
from protocol.turn.events import ToolRequested
from protocol.vscode.lm import TextPart, Tool, ToolResultPart
from symposium.launch import RELAY

GUARD = 60
FIXTURES = (Path(__file__).parents[1] / "support" / "fixtures")


def copilot_tools(mode: str) -> list[dict[str, Any]]:
    """Copilot Chat 0.67's tools in `mode` ("agent", "ask"), as the extension sends them to the backend."""
    return json.loads((FIXTURES / f"copilot-0.67-{mode}-tools.json").read_text())


def as_tools(raw: list[dict[str, Any]]) -> tuple[Tool, ...]:
    return tuple(Tool(t["name"], t["description"], t["inputSchema"]) for t in raw)


def surface_models() -> list[Any]:
    """The SDK's `Tool` wire models of the handshake era's newest and of the newest revision."""
    from mcp_types import _v2025_11_25, _v2026_07_28

    return [_v2025_11_25.Tool, _v2026_07_28.Tool]


# The pure part ----------------------------------------------------------------------------------


def test_an_empty_schema_becomes_an_object_schema_and_a_complete_one_is_kept() -> None:
    assert input_schema({}) == {"type": "object"}
    assert input_schema(None) == {"type": "object"}
    assert input_schema("not a schema") == {"type": "object"}
    typed = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": False}
    assert input_schema(typed) == typed
    untyped = {"properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert input_schema(untyped) == {**untyped, "type": "object"}
    assert input_schema({"type": ["object", "null"], "properties": {}}) == {"type": "object", "properties": {}}


def test_a_tool_that_cannot_be_listed_is_left_out_with_a_reason_and_the_rest_are_listed() -> None:
    tools = (
        Tool("scalar", "", {"type": "string"}),
        Tool("bad_required", "", {"type": "object", "required": "path"}),
        Tool("bad_properties", "", {"type": "object", "properties": ["path"]}),
        Tool("fine", "A fine tool", {}),
        Tool("fine", "The same name again", {}),
        Tool("", "", {}),
    )
    listed, problems = listable(tools)
    assert listed == [{"name": "fine", "inputSchema": {"type": "object"}, "description": "A fine tool"}]
    assert problems == [
        "tool 'scalar' was left out: its input schema's type is 'string', not 'object'",
        "tool 'bad_required' was left out: its input schema's 'required' is not a list of names",
        "tool 'bad_properties' was left out: its input schema's 'properties' is not a map of schemas",
        "tool 'fine' was left out: its name is listed already",
        "a tool without a name was left out",
    ]


def test_tools_that_only_read_are_declared_read_only_and_no_other_is() -> None:
    """MCP's `readOnlyHint` is what lets Claude Code run calls side by side (docs/DESIGN.md,
    "Parallel tool calls"); a tool that may change something never claims it."""
    listed, _ = listable((Tool("get_errors", "", {}), Tool("replace_string_in_file", "", {}), Tool("run_vscode_command", "", {})))
    assert [entry.get("annotations") for entry in listed] == [{"readOnlyHint": True}, None, None]


def test_copilots_real_lists_are_listed_whole_and_valid_under_both_protocols() -> None:
    for mode in ("agent", "ask"):
        raw = copilot_tools(mode)
        listed, problems = listable(as_tools(raw))
        assert problems == [] and [t["name"] for t in listed] == [t["name"] for t in raw]
        for model in surface_models():
            for tool in listed:
                model.model_validate(tool, by_name=False)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["type", "properties", "required", "$schema", "x"]), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(schemas=st.lists(json_values, max_size=5))
def test_whatever_the_schemas_what_is_listed_is_valid_and_only_the_unlistable_are_left_out(schemas: list[Any]) -> None:
    tools = tuple(Tool(f"t{i}", "", schema) for i, schema in enumerate(schemas))
    listed, problems = listable(tools)
    assert len(listed) + len(problems) == len(tools)
    for model in surface_models():
        for tool in listed:
            model.model_validate(tool, by_name=False)


# The bridge, with the SDK's client at the newest protocol -----------------------------------------


def newest_client(bridge: ToolBridge) -> Any:
    from mcp import Client, StdioServerParameters
    from mcp.types.version import LATEST_PROTOCOL_VERSION

    entry = bridge.entry()
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env={"PATH": "/usr/bin:/bin"})
    return Client(params, mode=LATEST_PROTOCOL_VERSION, read_timeout_seconds=GUARD)


@pytest.mark.parametrize("mode", ["agent", "ask"])
async def test_copilots_real_tools_are_listed_and_called_at_the_newest_protocol(nursery: trio.Nursery, mode: str) -> None:
    """Before the fix, `{}` schemas made every `tools/list` fail: "Handler returned an invalid result"."""
    from mcp.types.version import LATEST_PROTOCOL_VERSION

    raw = copilot_tools(mode)
    events_send, events = trio.open_memory_channel[Any](10)
    bridge = ToolBridge(events_send, BridgeListener(nursery, RELAY))
    await nursery.start(bridge.run, as_tools(raw))
    bridge.accept_calls(True)  # as while a prompt runs

    async def vscode() -> None:
        call: ToolRequested = await events.receive()
        assert (call.name, call.arguments) == ("terminal_selection", {})
        call.handle.answer(ToolResultPart("sym-1", (TextPart("$ make test"),)))

    with trio.fail_after(GUARD):
        async with newest_client(bridge) as client:
            assert client.protocol_version == LATEST_PROTOCOL_VERSION
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert list(listed) == [t["name"] for t in raw]
            assert listed["terminal_selection"].input_schema == {"type": "object"}  # `{}` as Copilot sent it
            assert listed["get_errors"].input_schema["properties"]["filePaths"]["type"] == "array"
            nursery.start_soon(vscode)
            result = await client.call_tool("terminal_selection", {})
    assert not result.is_error and [c.text for c in result.content] == ["$ make test"]
