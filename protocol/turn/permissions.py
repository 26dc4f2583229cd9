"""The agent's permission requests: what we decide (the policy), and how we answer (its options,
chosen by kind) or ask (VS Code's `symposium-agent-action` card and its parameters); docs/DESIGN.md,
"Permissions".
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from typing import Any

from protocol.acp import schema as acp
from protocol.acp.agent_text import shown, shown_whole
from protocol.bridge.tool_names import bridged_tool
from protocol.history.canonical import IGNORED_MIME_TYPES
from protocol.turn.rendering import unified_diff
from protocol.vscode.lm import AGENT_ACTION_APPROVED, DataPart, TextPart, ToolResultPart

MAX_CARD_DIFFS = 20  # files (or edits) a permission card shows the diff of


class Permit(enum.Enum):
    APPROVE = "approve"  # one of our own bridged tools: VS Code confirms it when it runs it
    ASK = "ask"  # VS Code's card (a `symposium-agent-action` tool call) decides
    REJECT = "reject"  # nobody to ask: the agent hears "no" and carries on


def permission_policy(params: dict[str, Any], bridged: Collection[str], can_ask: bool) -> Permit:
    """What to do with the agent's `session/request_permission`.

    `bridged` are the names the agent knows this turn's bridged VS Code tools by (protocol.bridge.tool_names);
    `can_ask` whether the turn offers `symposium-agent-action`. Rejecting (rather than
    answering `cancelled`) matters: a bare `cancelled` would end the whole prompt with
    nothing to show.
    """
    if bridged_tool(params, set(bridged)) is not None:
        return Permit.APPROVE
    return Permit.ASK if can_ask else Permit.REJECT


def choose_option(options: Any, allow: bool) -> str | None:
    """The option to select, by kind and never by id: agents name their ids freely."""
    wanted = ("allow_once", "allow_always") if allow else ("reject_once", "reject_always")
    if not isinstance(options, list):
        return None
    for kind in wanted:
        for option in options:
            if isinstance(option, dict) and option.get("kind") == kind and isinstance(option_id := option.get("optionId"), str):
                return option_id
    return None


def permission_outcome(options: Any, allow: bool) -> dict[str, Any]:
    """The answer to a permission request: the agent's allow (or reject) option by kind.

    An agent that offers no option of that kind gets `cancelled`, the one answer ACP always
    accepts.
    """
    option = choose_option(options, allow)
    return acp.selected_outcome(option) if option else acp.CANCELLED_OUTCOME


def approves(result: ToolResultPart) -> bool:
    """Approval is explicit: the tool's own (first) part is a text that is exactly the approval token.

    Copilot answers Skip, a disabled tool and invalid input with texts of its own, hooks may
    append parts after the tool's, and anything we did not foresee must also be a "no": an
    image or other data before the text too. Only Copilot's bookkeeping (a `cache_control`
    data part) is passed over.
    """
    first = next((part for part in result.content if not (isinstance(part, DataPart) and part.mime_type in IGNORED_MIME_TYPES)), None)
    return isinstance(first, TextPart) and first.value == AGENT_ACTION_APPROVED


def agent_action_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """`symposium-agent-action`'s input: always valid for its schema, whatever the agent sent.

    VS Code validates a tool's input before it asks the user, and answers invalid input with an
    error the user never sees, so `kind` and `title` are strings and `raw_input` an object
    (anything else is wrapped) or absent.
    """
    call = _object(params.get("toolCall"))
    kind = shown(call.get("kind")) or "other"
    raw = call.get("rawInput")
    # The title is what the user reads before allowing: for some agents (Gemini CLI) the whole
    # command, with no `raw_input`. Cleaned, never cut (protocol/acp/agent_text.py).
    title = shown_whole(call.get("title")) or shown_whole(_default_title(kind, raw))
    parameters: dict[str, Any] = {"kind": kind, "title": title}
    if raw is not None:
        parameters["raw_input"] = raw if isinstance(raw, dict) else {"value": raw}
    if diff := edit_diff(call):
        parameters["diff"] = diff
    return parameters


def edit_diff(call: dict[str, Any]) -> str | None:
    """The change an edit permission is about, as a capped unified diff (no fence): from the
    ACP `diff` content when the agent sent it, else from Claude Code's Edit, MultiEdit or
    Write input; None when it is no edit we can show."""
    listed = call.get("content")
    content: list[Any] = listed if isinstance(listed, list) else []
    items = [item for item in content if isinstance(item, dict) and item.get("type") == "diff"][:MAX_CARD_DIFFS]
    if items:
        return "\n".join(unified_diff(str(i.get("path") or "file"), _text(i.get("oldText")), _text(i.get("newText")) or "") for i in items)
    raw = _object(call.get("rawInput"))
    path = raw.get("file_path")
    if not isinstance(path, str):
        return None
    if isinstance(raw.get("old_string"), str) and isinstance(raw.get("new_string"), str):
        edits = [raw]
    elif isinstance(raw.get("edits"), list):
        edits = [e for e in raw["edits"][:MAX_CARD_DIFFS] if isinstance(e, dict) and isinstance(e.get("old_string"), str) and isinstance(e.get("new_string"), str)]
    elif isinstance(raw.get("content"), str):
        return unified_diff(path, None, raw["content"])  # Write: what the file will hold
    else:
        return None
    return "\n".join(unified_diff(path, e["old_string"], e["new_string"]) for e in edits) or None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _object(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one: an agent's odd field reads as absent."""
    return value if isinstance(value, dict) else {}


def _default_title(kind: str, raw: Any) -> str:
    command = raw.get("command") if isinstance(raw, dict) else None
    if isinstance(command, list):
        command = " ".join(str(word) for word in command)
    if isinstance(command, str) and command.strip():
        return f"Run {command.strip()}"
    return f"Take an action ({kind})"
