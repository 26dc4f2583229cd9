"""The subset of the Agent Client Protocol (version 1) that the backend speaks.

Outgoing messages are built here so that their shape lives in one place (the tests
validate them against the `acp.schema` models). Incoming agent messages are read
defensively where they are used: real agents differ, and one odd field must not cost a turn.
"""

from __future__ import annotations

from typing import Any

PROTOCOL_VERSION = 1

CLIENT_INFO = {"name": "symposium", "title": "Symposium (VS Code LM bridge)"}

CANCELLED_OUTCOME: dict[str, Any] = {"outcome": "cancelled"}


def initialize_params(version: str) -> dict[str, Any]:
    """`version`: ours (`actors/version.py` reads it from the package's metadata)."""
    # `fs.writeTextFile`: an agent that writes through the client has its edits land in VS Code's
    # review where the request offers Copilot's edit tools, and written on disk by us where it does
    # not: declared once, for every request, since one agent process serves them all. Not
    # `readTextFile`: we could only read the disk, as the agent does, and Gemini CLI 0.56 cannot tell
    # a client's "not found" from another error, so with it declared it cannot create a file
    # (docs/DESIGN.md, "Edits through the client"). No terminal: we do not implement it. A terminal sign-in we do run (in a
    # VS Code terminal, docs/DESIGN.md "Sign-in"): declared both ways, `auth.terminal` and the
    # `_meta["terminal-auth"]` agents read before it existed.
    return {
        "protocolVersion": PROTOCOL_VERSION,
        # Form elicitation: the agent's questions go to Copilot's question UI (docs/DESIGN.md, "The agent's questions").
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": True},
            "terminal": False,
            "elicitation": {"form": {}},
            "auth": {"terminal": True},
            "_meta": {"terminal-auth": True},
        },
        "clientInfo": {**CLIENT_INFO, "version": version},
    }


def authenticate_params(method_id: str) -> dict[str, Any]:
    return {"methodId": method_id}


# Claude Code predicts the user's next prompt after every turn, with a model call of its own
# that the user pays for and VS Code has nowhere to show: off. Other agents ignore what is
# not theirs in `_meta`.
SESSION_META = {"claudeCode": {"options": {"promptSuggestions": False}}}


def new_session_params(cwd: str, mcp_servers: list[dict[str, Any]], meta: dict[str, Any] = SESSION_META) -> dict[str, Any]:
    return {"cwd": cwd, "mcpServers": mcp_servers, "_meta": meta}


def load_session_params(session_id: str, cwd: str, mcp_servers: list[dict[str, Any]], meta: dict[str, Any] = SESSION_META) -> dict[str, Any]:
    return {"sessionId": session_id, "cwd": cwd, "mcpServers": mcp_servers, "_meta": meta}


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def resource_block(uri: str, text: str) -> dict[str, Any]:
    """An embedded resource (for agents whose `promptCapabilities.embeddedContext` is true)."""
    return {"type": "resource", "resource": {"uri": uri, "text": text}}


def image_block(mime_type: str, data: str) -> dict[str, Any]:
    return {"type": "image", "mimeType": mime_type, "data": data}


def selected_outcome(option_id: str) -> dict[str, Any]:
    return {"outcome": "selected", "optionId": option_id}


def resume_session_params(session_id: str, cwd: str, mcp_servers: list[dict[str, Any]], meta: dict[str, Any] = SESSION_META) -> dict[str, Any]:
    return {"sessionId": session_id, "cwd": cwd, "mcpServers": mcp_servers, "_meta": meta}


def fork_session_params(session_id: str, cwd: str, mcp_servers: list[dict[str, Any]], meta: dict[str, Any] = SESSION_META) -> dict[str, Any]:
    """`session/fork` (unstable in ACP v1): a new session holding `session_id`'s history; what names
    the message it ends with, if anything, is in `meta` (docs/DESIGN.md, "Forks")."""
    return {"sessionId": session_id, "cwd": cwd, "mcpServers": mcp_servers, "_meta": meta}


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
