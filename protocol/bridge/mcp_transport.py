"""Which `mcpServers` entry an agent is given for `vscode_tools`: stdio or HTTP (docs/DESIGN.md, "Tool bridge").

ACP has every agent take stdio MCP servers, and stdio is what we prefer: the relay reaches the
bridge through this user's private socket, and no secret is on any command line. Some agents take
none but HTTP ones from a client all the same (they declare nothing that says so), which is data
about that agent: `httpMcpOnly` in the agent facts (protocol/acp/agent_facts.py, by the
`agentInfo.name` of its `initialize`, from `extension/catalogue/overrides.json`). Such an agent gets the HTTP entry when it declares
`agentCapabilities.mcpCapabilities.http`; without it, stdio stays the only one we can offer. Pure.
"""

from __future__ import annotations

from typing import Any, Literal

from protocol.acp.capabilities import AgentCapabilities

Transport = Literal["stdio", "http"]
STDIO: Transport = "stdio"
HTTP: Transport = "http"


def transport(capabilities: AgentCapabilities, *, http_only: bool) -> Transport:
    """The entry to give: HTTP only to an agent known to refuse stdio that declares HTTP
    (`mcpCapabilities.http: true`)."""
    return HTTP if http_only and capabilities.mcp.http else STDIO


def http_entry(name: str, url: str, secret: str) -> dict[str, Any]:
    """ACP's `McpServerHttp`: the secret as a bearer token in `headers` (redacted in transcripts
    as every `headers` entry is, `actors/store/transcript.py`)."""
    return {"type": "http", "name": name, "url": url, "headers": [{"name": "Authorization", "value": f"Bearer {secret}"}]}
