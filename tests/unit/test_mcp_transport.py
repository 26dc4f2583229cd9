"""Which entry `vscode_tools` is offered as (protocol/bridge/mcp_transport.py)."""

from typing import Any

from protocol.acp.capabilities import AgentCapabilities, read_initialize
from protocol.bridge.mcp_transport import HTTP, STDIO, http_entry
from protocol.bridge.mcp_transport import transport as transport_for


def transport(capabilities: dict[str, Any], *, http_only: bool) -> str:
    return transport_for(read_initialize({"agentCapabilities": capabilities}).capabilities, http_only=http_only)


def test_stdio_unless_the_agent_is_known_to_refuse_it() -> None:
    both = {"mcpCapabilities": {"http": True, "sse": True}}
    assert transport(both, http_only=False) == STDIO  # declaring HTTP is no reason to leave the private socket
    assert transport(both, http_only=True) == HTTP


def test_an_agent_that_declares_no_http_keeps_stdio() -> None:
    for capabilities in ({}, {"mcpCapabilities": {}}, {"mcpCapabilities": {"sse": True}}, {"mcpCapabilities": {"http": "yes"}},
                         {"mcpCapabilities": None}, {"mcpCapabilities": ["http"]}):
        assert transport(capabilities, http_only=True) == STDIO
    assert transport_for(AgentCapabilities(), http_only=True) == STDIO


def test_the_http_entry_carries_the_secret_as_a_bearer_header() -> None:
    entry = http_entry("vscode_tools", "http://127.0.0.1:5/mcp", "s3cret")
    assert entry == {"type": "http", "name": "vscode_tools", "url": "http://127.0.0.1:5/mcp",
                     "headers": [{"name": "Authorization", "value": "Bearer s3cret"}]}
