"""The subset of the Agent Client Protocol (version 1) that the backend speaks.

Outgoing messages are built here so that their shape lives in one place (the tests
validate them against the `acp.schema` models). Incoming agent messages are read
defensively where they are used: real agents differ, and one odd field must not cost a turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from protocol.acp.client_methods import client_capabilities

PROTOCOL_VERSION = 1

CLIENT_INFO = {"name": "symposium", "title": "Symposium (VS Code LM bridge)"}

CANCELLED_OUTCOME: dict[str, Any] = {"outcome": "cancelled"}


def initialize_params(version: str) -> dict[str, Any]:
    """`version`: ours (`actors/shared/version.py` reads it from the package's metadata). What we declare
    follows from the methods we serve (protocol/acp/client_methods.py)."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": client_capabilities(),
        "clientInfo": {**CLIENT_INFO, "version": version},
    }


def authenticate_params(method_id: str) -> dict[str, Any]:
    return {"methodId": method_id}


# A session's `_meta` is what the agent facts have its agent opened with (protocol/acp/agent_facts.py's
# `session_meta`, and `ownEdits` when its editing is handed off); none: no `_meta` at all.


def new_session_params(
    cwd: str, mcp_servers: list[dict[str, Any]], meta: Mapping[str, Any] | None = None, additional_directories: Sequence[str] = ()
) -> dict[str, Any]:
    params: dict[str, Any] = {"cwd": cwd, "mcpServers": mcp_servers}
    if additional_directories:
        params["additionalDirectories"] = list(additional_directories)
    return _with_meta(params, meta)


def load_session_params(session_id: str, cwd: str, mcp_servers: list[dict[str, Any]], meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return _with_meta({"sessionId": session_id, "cwd": cwd, "mcpServers": mcp_servers}, meta)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def resource_block(uri: str, text: str) -> dict[str, Any]:
    """An embedded resource (for agents whose `promptCapabilities.embeddedContext` is true)."""
    return {"type": "resource", "resource": {"uri": uri, "text": text}}


def image_block(mime_type: str, data: str) -> dict[str, Any]:
    return {"type": "image", "mimeType": mime_type, "data": data}


def selected_outcome(option_id: str) -> dict[str, Any]:
    return {"outcome": "selected", "optionId": option_id}


def resume_session_params(session_id: str, cwd: str, mcp_servers: list[dict[str, Any]], meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return _with_meta({"sessionId": session_id, "cwd": cwd, "mcpServers": mcp_servers}, meta)


def fork_session_params(session_id: str, cwd: str, mcp_servers: list[dict[str, Any]], meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`session/fork` (unstable in ACP v1): a new session holding `session_id`'s history; what names
    the message it ends with, if anything, is in `meta` (docs/DESIGN.md, "Forks")."""
    return _with_meta({"sessionId": session_id, "cwd": cwd, "mcpServers": mcp_servers}, meta)


def _with_meta(params: dict[str, Any], meta: Mapping[str, Any] | None) -> dict[str, Any]:
    return {**params, "_meta": dict(meta)} if meta else params


def list_sessions_params(cwd: str | None, cursor: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if cwd is not None:
        params["cwd"] = cwd
    if cursor is not None:
        params["cursor"] = cursor
    return params


def set_config_option_params(session_id: str, config_id: str, value: str | bool) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"sessionId": session_id, "configId": config_id, "type": "boolean", "value": value}
    return {"sessionId": session_id, "configId": config_id, "value": value}


def set_mode_params(session_id: str, mode_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "modeId": mode_id}


def set_model_params(session_id: str, model_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "modelId": model_id}
