"""Pure translations between ACP and VS Code LM parts, used by the Session actor.

- agent updates → response parts (text, thinking, compact tool-call status, plan checklist)
- new user messages → the ACP prompt
- permission requests → `symposium-agent-action` parameters, and options chosen by kind
- the peek/consume decision: is the next turn exactly the tool results we wait for?
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from actors.matching import normalise
from actors.messages import Turn
from protocol import acp
from protocol.lm import DataPart, Message, Part, TextPart, ThinkingPart, ToolCallPart, ToolResultPart

OUTPUT_LINES = 12  # tool output shown inline; the agent keeps the rest


def block_text(block: Any) -> str:
    """A content block as text for the chat (images and resources as short references)."""
    if not isinstance(block, dict):
        return ""
    match block.get("type"):
        case "text":
            return str(block.get("text", ""))
        case "image":
            return f"[image: {block.get('mimeType', 'unknown type')}]"
        case "audio":
            return f"[audio: {block.get('mimeType', 'unknown type')}]"
        case "resource_link":
            uri = str(block.get("uri", ""))
            return f"[{block.get('title') or block.get('name') or uri}]({uri})"
        case "resource":
            resource = block.get("resource") or {}
            if isinstance(resource, dict) and isinstance(resource.get("text"), str):
                return fenced(resource["text"], header=str(resource.get("uri", "")))
            return f"[resource: {resource.get('uri', '') if isinstance(resource, dict) else ''}]"
    return ""


def fenced(text: str, *, header: str = "", max_lines: int | None = None) -> str:
    lines = text.rstrip("\n").split("\n")
    if max_lines is not None and len(lines) > max_lines:
        lines = [*lines[:max_lines], f"… ({len(lines) - max_lines} more lines)"]
    body = "\n".join(lines)
    fence = "````" if "```" in body else "```"
    title = f"{header}\n" if header else ""
    return f"{title}{fence}\n{body}\n{fence}\n"


ICONS = {"completed": "✅", "failed": "❌"}


@attrs.define
class _ToolCallState:
    title: str
    status: str
    finished: bool = False


@attrs.define
class ToolCallTracker:
    """Agent-internal tool calls as compact status lines: one when a call starts, one when it ends.

    These must never become `tool_call` parts: VS Code would try to run them.
    """

    calls: dict[str, _ToolCallState] = attrs.Factory(dict)

    def start(self, update: dict[str, Any]) -> str:
        call_id = str(update.get("toolCallId", ""))
        state = _ToolCallState(str(update.get("title") or "tool call"), str(update.get("status") or "pending"))
        self.calls[call_id] = state
        return f"\n\n🔧 {state.title}\n" + self._finish(state, update)

    def progress(self, update: dict[str, Any]) -> str:
        call_id = str(update.get("toolCallId", ""))
        state = self.calls.get(call_id)
        if state is None:
            return self.start(update)  # agents may skip the announcement
        if update.get("title"):
            state.title = str(update["title"])
        if update.get("status"):
            state.status = str(update["status"])
        return self._finish(state, update)

    def _finish(self, state: _ToolCallState, update: dict[str, Any]) -> str:
        if state.finished or state.status not in ICONS:
            return ""
        state.finished = True
        output = "".join(_tool_content_text(item) for item in update.get("content") or [])
        line = f"{ICONS[state.status]} {state.title}\n"
        return line + (fenced(output, max_lines=OUTPUT_LINES) if output.strip() else "")


def _tool_content_text(item: Any) -> str:
    if not isinstance(item, dict):
        return ""
    match item.get("type"):
        case "content":
            return block_text(item.get("content"))
        case "diff":
            return f"--- {item.get('path', '')}\n+++ {item.get('path', '')}\n{item.get('newText', '')}"
        case "terminal":
            return f"[terminal {item.get('terminalId', '')}]"
    return ""


PLAN_MARKS = {"completed": "[x]", "in_progress": "[ ] ⏳", "pending": "[ ]"}


def render_plan(entries: Iterable[Any]) -> str:
    lines = ["\n\n**Plan**"]
    for entry in entries:
        if isinstance(entry, dict):
            mark = PLAN_MARKS.get(str(entry.get("status")), "[ ]")
            lines.append(f"- {mark} {entry.get('content', '')}")
    return "\n".join(lines) + "\n\n"


def render_update(update: dict[str, Any], tracker: ToolCallTracker) -> list[Part]:
    """One ACP `session/update` as response parts; unknown updates give nothing."""
    match update.get("sessionUpdate"):
        case "agent_message_chunk":
            text = block_text(update.get("content"))
            return [TextPart(text)] if text else []
        case "agent_thought_chunk":
            text = block_text(update.get("content"))
            return [ThinkingPart(text)] if text else []
        case "tool_call":
            return [TextPart(tracker.start(update))]
        case "tool_call_update":
            text = tracker.progress(update)
            return [TextPart(text)] if text else []
        case "plan":
            return [TextPart(render_plan(update.get("entries") or []))]
    return []


def merge_parts(parts: Iterable[Part]) -> list[Part]:
    """Consecutive text (or thinking) parts as one: a flood of tiny chunks costs less downstream."""
    merged: list[Part] = []
    run: list[str] = []  # the values of the run of text (or thinking) parts being merged

    def close_run() -> None:
        if len(run) > 1:
            merged[-1] = type(merged[-1])("".join(run))  # type: ignore[call-arg]
        run.clear()

    for part in parts:
        if run and type(part) is type(merged[-1]):
            run.append(part.value)  # type: ignore[union-attr]
            continue
        close_run()
        merged.append(part)
        if isinstance(part, (TextPart, ThinkingPart)):
            run.append(part.value)
    close_run()
    return merged


STOP_NOTES = {
    "max_tokens": "\n\n*(The agent stopped: it reached its output token limit.)*",
    "max_turn_requests": "\n\n*(The agent stopped: it reached its limit of model requests for one turn.)*",
    "refusal": "\n\n*(The agent refused to continue.)*",
}

EMPTY_REPLY = "*(The agent ended its turn without a reply.)*"


# Prompts ------------------------------------------------------------------------------------


def split_context(messages: Sequence[Message]) -> tuple[tuple[Message, ...], tuple[Message, ...]]:
    """(earlier history, the trailing user input): the agent is prompted with the latter."""
    cut = 0
    for index, message in enumerate(messages):
        if message.role == "assistant":
            cut = index + 1
    return tuple(messages[:cut]), tuple(messages[cut:])


def transcript(messages: Iterable[Message]) -> str:
    """Earlier history, for an agent session that did not live through it."""
    lines = []
    for message in messages:
        if message.role == "system":
            continue
        chunks = []
        for part in normalise(message).content:
            match part:
                case TextPart(value=value):
                    chunks.append(value)
                case ToolCallPart(tool_name=name):
                    chunks.append(f"[called tool {name}]")
                case ToolResultPart():
                    chunks.append(f"[tool result: {part.text()}]")
                case DataPart(mime_type=mime):
                    chunks.append(f"[{mime} data]")
        label = "User" if message.role == "user" else "Assistant"
        lines.append(f"{label}: {' '.join(chunks)}")
    return "\n\n".join(lines)


def latest_system(turn: Turn) -> str | None:
    texts = [m.text() for m in (*turn.context, *turn.messages) if m.role == "system"]
    return texts[-1] if texts else None


def build_prompt(turn: Turn, *, accepts_images: bool, system: str | None = None) -> list[dict[str, Any]]:
    """The ACP prompt for a turn: its user text and images, after `system` instructions if given.

    System messages are not forwarded by default: the agent has its own instructions, and two
    sets of instructions fight. Tool results are not prompt content: they go back to the tool
    that waits for them, and one that nothing waits for any more (its turn was cancelled) has
    no meaning to the agent.
    """
    blocks: list[dict[str, Any]] = []
    if system:
        blocks.append(acp.text_block(f"Instructions from the VS Code chat:\n\n{system}\n\n---\n"))
    if turn.context:
        blocks.append(acp.text_block(f"Earlier in this conversation:\n\n{transcript(turn.context)}\n\n---\n"))
    for message in turn.messages:
        if message.role != "user":
            continue
        for part in normalise(message).content:
            match part:
                case TextPart(value=value) if value:
                    blocks.append(acp.text_block(value))
                case DataPart(mime_type=mime, data=data) if mime.startswith("image/"):
                    blocks.append(acp.image_block(mime, data) if accepts_images else acp.text_block(f"[image omitted: {mime}]"))
    return blocks


# Permissions --------------------------------------------------------------------------------


def choose_option(options: Any, allow: bool) -> str | None:
    """The option to select, by kind and never by id: agents name their ids freely."""
    wanted = ("allow_once", "allow_always") if allow else ("reject_once", "reject_always")
    if not isinstance(options, list):
        return None
    for kind in wanted:
        for option in options:
            if isinstance(option, dict) and option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return option["optionId"]
    return None


def agent_action_parameters(params: dict[str, Any]) -> dict[str, Any]:
    call = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
    return {"kind": call.get("kind") or "other", "title": call.get("title") or "", "raw_input": call.get("rawInput")}


BRIDGE_NAMES = (  # how agents name a tool of our `vscode_tools` MCP server
    re.compile(r"^mcp__vscode_tools__(?P<tool>.+)$"),  # Claude Code
    re.compile(r"^vscode_tools/(?P<tool>.+)$"),  # fast-agent
    re.compile(r"^mcp_vscode_tools_(?P<tool>.+)$"),  # Gemini CLI
    re.compile(r"^(?P<tool>\S+) \(vscode_tools MCP Server\)$"),  # Gemini CLI titles
    re.compile(r"^vscode_tools[.:](?P<tool>.+)$"),
    re.compile(r'^Allow the vscode_tools MCP server to run tool "(?P<tool>[^"]+)"\?$'),  # Codex's question
)


def bridged_tool(params: dict[str, Any], tools: set[str]) -> str | None:
    """The VS Code tool a permission request is about, if it is one of ours; else None.

    Agents put the tool's name in the title, the tool-call id or the raw input, each in its
    own naming scheme; only a name that is really one of the bridged tools counts. Codex asks
    with a fixed title ("Approve MCP tool call") and names the tool only in its question, which
    counts when the raw input is its MCP tool-call approval for our server.
    """
    call = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
    raw = call.get("rawInput") if isinstance(call.get("rawInput"), dict) else {}
    texts = [call.get("title"), call.get("toolCallId"), raw.get("tool_name"), raw.get("toolName"), raw.get("name")]
    request = raw.get("request") if isinstance(raw.get("request"), dict) else {}
    meta = request.get("_meta") if isinstance(request.get("_meta"), dict) else {}
    if raw.get("server_name") == "vscode_tools" and meta.get("codex_approval_kind") == "mcp_tool_call":
        texts.append(request.get("message"))
    for text in texts:
        if not isinstance(text, str):
            continue
        for pattern in BRIDGE_NAMES:
            match = pattern.match(text.strip().strip("`"))
            if match and match["tool"] in tools:
                return match["tool"]
    return None


def awaited_results(turn: Turn, awaited: Iterable[str]) -> dict[str, ToolResultPart] | None:
    """The peek/consume rule (seed 002): the turn's results by id, if it is exactly them.

    Anything else (a cancelled match, other content, a missing result) means the user moved
    on: the caller leaves the turn unconsumed and cancels the agent's turn.
    """
    wanted = set(awaited)
    if turn.canceled or turn.context:
        return None
    results: dict[str, ToolResultPart] = {}
    for message in turn.messages:
        for part in normalise(message).content:
            if isinstance(part, ToolResultPart) and part.tool_call_id in wanted and message.role == "user":
                results[part.tool_call_id] = part
            elif isinstance(part, TextPart) and not part.value.strip():
                continue
            else:
                return None
    return results if set(results) == wanted else None
