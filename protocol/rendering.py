"""Pure translations between ACP and VS Code LM parts, used by the Session actor.

- agent updates → response parts (text, thinking, compact tool-call status, plan checklist)
- new user messages → the ACP prompt
- permission requests → `symposium-agent-action` parameters, and options chosen by kind
- the peek/consume decision: is the next turn exactly the tool results we wait for?
"""

from __future__ import annotations

import difflib
import os
import pathlib
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import attrs

from protocol.agent_options import TurnUsage
from protocol.agent_text import shown, shown_whole
from protocol.copilot_prompt import CopilotText, CopilotTurn, attachments
from protocol.matching import IGNORED_MIME_TYPES, is_global_context_message, last_assistant
from protocol.messages import Turn
from protocol import acp
from protocol.lm import AGENT_ACTION_APPROVED, DataPart, EditPart, Message, Part, TextPart, ThinkingPart, ToolCallPart, ToolResultPart, UsagePart

OUTPUT_LINES = 12  # tool output shown inline; the agent keeps the rest
# An edit's diff shown inline: enough to review a real change, bounded for a rewritten or
# generated file (the chat keeps every part of every response, and Copilot sends it back).
DIFF_LINES = 200
DIFF_CHARS = 16_000
EXACT_DIFF_LINES = 1_000  # changed lines beyond which a diff is one hunk (`diff_hunks`)
MAX_DIFF_INPUT = 1_000_000  # characters of before and after beyond which no diff is made at all
MAX_CARD_DIFFS = 20  # files (or edits) a permission card shows the diff of


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


# Glyphs from the fonts every VS Code has (colour emoji fonts are often missing on Linux).
ICONS = {"completed": "✓", "failed": "✗"}


@attrs.define
class _ToolCallState:
    title: str
    status: str
    content: list[Any] = attrs.Factory(list)
    finished: bool = False
    silent: bool = False  # a call of our own bridged VS Code tools: VS Code shows it itself


@attrs.define
class ToolCallTracker:
    """Agent-internal tool calls as compact status lines: one line a call, when it ends, with
    its final title (agents often announce a call with a placeholder title) and its output.

    A call's content is the latest the agent sent (ACP: an update's `content` replaces it):
    agents send an edit's diff while the call runs and end it without content. Calls of our
    own bridged VS Code tools get no line: VS Code shows them as its own tool calls already.

    These must never become `tool_call` parts: VS Code would try to run them.
    """

    conversation: str = ""  # named in the edits, so the extension takes a conversation's together
    calls: dict[str, _ToolCallState] = attrs.Factory(dict)
    edits: list[EditPart] = attrs.Factory(list)  # of the calls finished since `take_edits`

    def take_edits(self) -> list[EditPart]:
        """The edits of the calls that finished (successfully) since the last call."""
        edits, self.edits = self.edits, []
        return edits

    def start(self, update: dict[str, Any]) -> str:
        call_id = str(update.get("toolCallId", ""))
        state = _ToolCallState(shown(update.get("title")) or "tool call", str(update.get("status") or "pending"))
        self.calls[call_id] = state
        return self._finish(state, update)

    def progress(self, update: dict[str, Any]) -> str:
        call_id = str(update.get("toolCallId", ""))
        state = self.calls.get(call_id)
        if state is None:
            return self.start(update)  # agents may skip the announcement
        if title := shown(update.get("title")):
            state.title = title
        if update.get("status"):
            state.status = str(update["status"])
        return self._finish(state, update)

    def _finish(self, state: _ToolCallState, update: dict[str, Any]) -> str:
        if state.finished:
            return ""
        if isinstance(update.get("content"), list):
            state.content = update["content"]
        state.silent = state.silent or calls_bridge(update)
        if state.status not in ICONS:
            return ""
        state.finished = True
        content, state.content = state.content, []  # a finished call's output is not kept for the conversation's life
        if state.silent:
            return ""
        line = f"\n\n{ICONS[state.status]} {state.title}\n"
        changes = [item for item in content if isinstance(item, dict) and item.get("type") == "diff" and isinstance(item.get("path"), str)]
        diffs = [render_diff(item) for item in changes]
        if state.status == "completed":
            self.edits += [EditPart(item["path"], _text(item.get("newText")) or "", _text(item.get("oldText")), self.conversation) for item in changes]
        output = "".join(_tool_content_text(item) for item in content)
        return line + "".join(diffs) + (fenced(output, max_lines=OUTPUT_LINES) if output.strip() else "")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _tool_content_text(item: Any) -> str:
    """Tool output other than diffs (those are `render_diff`'s), as text."""
    if not isinstance(item, dict):
        return ""
    match item.get("type"):
        case "content":
            return block_text(item.get("content"))
        case "terminal":
            return f"[terminal {item.get('terminalId', '')}]"
    return ""


def unified_diff(path: str, old: str | None, new: str, *, max_lines: int = DIFF_LINES, max_chars: int = DIFF_CHARS) -> str:
    """A unified diff of one file's change (`old` None: the agent created it), cut to
    `max_lines` lines and `max_chars` characters, saying so where it was cut."""
    if len(old or "") + len(new) > MAX_DIFF_INPUT:
        return f"(a change to {path} too big to show here: {len(old or '') // 1024:,} KiB before, {len(new) // 1024:,} KiB after)"
    before = [] if old is None else old.splitlines()
    after = new.splitlines()
    hunks = diff_hunks(before, after)
    if not hunks:
        return f"(no change to {path})"
    lines = [f"--- {'/dev/null' if old is None else path}", f"+++ {path}", *hunks]
    kept: list[str] = []
    size = 0
    for line in lines:
        if len(kept) == max_lines or size + len(line) > max_chars:
            break
        kept.append(line)
        size += len(line) + 1
    cut = len(lines) - len(kept)
    if cut:
        added = sum(1 for line in lines[2:] if line.startswith("+"))
        removed = sum(1 for line in lines[2:] if line.startswith("-"))
        kept.append(f"… ({cut} more lines of this diff not shown; the whole change is +{added} −{removed} lines)")
    return "\n".join(kept)


def diff_hunks(before: list[str], after: list[str], context: int = 3) -> list[str]:
    """The hunks of a unified diff of two lists of lines, in time about linear in their length.

    difflib alone takes seconds on a big file changed in many places, and this runs in the
    Session's loop. So the common head and tail are cut off first, and when what is left
    between them is longer than `EXACT_DIFF_LINES`, it is one hunk (all of it out, all of it
    in) instead of difflib's minimal one: still a true diff, cut for the chat anyway, and
    VS Code's own diff view (Review Agent Edits) shows the fine one.
    """
    shortest = min(len(before), len(after))
    head = 0
    while head < shortest and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < shortest - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    if head == len(before) == len(after):
        return []
    low = max(0, head - context)
    old_end, new_end = len(before) - tail, len(after) - tail
    a = before[low : min(len(before), old_end + context)]
    b = after[low : min(len(after), new_end + context)]
    groups: Iterable[list[tuple[str, int, int, int, int]]]
    if (old_end - head) + (new_end - head) > EXACT_DIFF_LINES:
        ops = [("equal", 0, head - low, 0, head - low), ("replace", head - low, old_end - low, head - low, new_end - low),
               ("equal", old_end - low, len(a), new_end - low, len(b))]
        groups = [[op for op in ops if op[1] < op[2] or op[3] < op[4]]]
    else:
        groups = difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context)
    out: list[str] = []
    for group in groups:
        out.append(f"@@ -{_hunk_range(low + group[0][1], group[-1][2] - group[0][1])} +{_hunk_range(low + group[0][3], group[-1][4] - group[0][3])} @@")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [" " + line for line in a[a1:a2]]
                continue
            out += ["-" + line for line in a[a1:a2]]
            out += ["+" + line for line in b[b1:b2]]
    return out


def _hunk_range(start: int, length: int) -> str:
    """A hunk's range as unified diffs write it (difflib's format: 1-based, `start,length`)."""
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def render_diff(item: dict[str, Any]) -> str:
    """An ACP `diff` tool-call content item as a fenced, capped unified diff."""
    path = str(item.get("path") or "file")
    old = item.get("oldText")
    new = item.get("newText")
    body = unified_diff(path, old if isinstance(old, str) else None, new if isinstance(new, str) else "")
    fence = "````" if "```" in body else "```"
    return f"{fence}diff\n{body}\n{fence}\n"


PLAN_MARKS = {"completed": "[x]", "in_progress": "[ ] ⏳", "pending": "[ ]"}


def render_plan(entries: Iterable[Any]) -> str:
    lines = ["\n\n**Plan**"]
    for entry in entries:
        if isinstance(entry, dict):
            mark = PLAN_MARKS.get(str(entry.get("status")), "[ ]")
            lines.append(f"- {mark} {entry.get('content', '')}")
    return "\n".join(lines) + "\n\n"


# ACP plan entry statuses as Copilot's todo widget names them.
TODO_STATUSES = {"pending": "not-started", "in_progress": "in-progress", "completed": "completed"}


def todo_list(plan: dict[str, Any]) -> dict[str, Any]:
    """An ACP `plan` update as the input of Copilot's `manage_todo_list` (the whole list, every
    time, as ACP's plan is): numbered from 1, the entry's text cleaned, its status mapped."""
    entries = [e for e in plan.get("entries") or [] if isinstance(e, dict)]
    return {
        "todoList": [
            {"id": number, "title": shown(entry.get("content")) or "(untitled)", "status": TODO_STATUSES.get(str(entry.get("status")), "not-started")}
            for number, entry in enumerate(entries, 1)
        ]
    }


def todo_note(todo: dict[str, Any]) -> str:
    """What a response that carried a prompt on after the todo widget's round says when the
    agent showed nothing more: its answer came before the plan's last change."""
    items = todo.get("todoList") or []
    done = sum(1 for item in items if item.get("status") == "completed")
    return f"*(Plan: {done} of {len(items)} done.)*"


def render_update(update: dict[str, Any], tracker: ToolCallTracker) -> list[Part]:
    """One ACP `session/update` as response parts; unknown updates give nothing."""
    match update.get("sessionUpdate"):
        case "agent_message_chunk":
            text = block_text(update.get("content"))
            return [TextPart(text)] if text else []
        case "agent_thought_chunk":
            text = block_text(update.get("content"))
            return [ThinkingPart(text)] if text else []
        case "tool_call" | "tool_call_update":
            text = tracker.start(update) if update["sessionUpdate"] == "tool_call" else tracker.progress(update)
            return [*([TextPart(text)] if text else []), *tracker.take_edits()]
        case "plan":
            return [TextPart(render_plan(update.get("entries") or []))]
    return []


def render_updates(updates: Iterable[dict[str, Any]], tracker: ToolCallTracker) -> list[Part]:
    """Updates as parts: `merge_parts` of `render_update` on each, without a part per chunk.

    A streamed chunk of text is the hot path (thousands a second from a fast agent): it
    becomes a string in a run, and each run one part.
    """
    parts: list[Part] = []
    kind: type[TextPart | ThinkingPart] | None = None  # the kind of the run being gathered
    run: list[str] = []
    for update in updates:
        tag = update.get("sessionUpdate")
        if tag == "agent_message_chunk" or tag == "agent_thought_chunk":
            cls: type[TextPart | ThinkingPart] = TextPart if tag == "agent_message_chunk" else ThinkingPart
            content = update.get("content")
            if type(content) is dict and content.get("type") == "text":
                text = content.get("text", "")
                if type(text) is not str:
                    text = str(text)
            else:
                text = block_text(content)
            if not text:
                continue
        else:
            for part in render_update(update, tracker):  # a status line, then a call's edits
                if isinstance(part, (TextPart, ThinkingPart)):
                    if type(part) is not kind:
                        if run:
                            parts.append(kind("".join(run)))  # type: ignore[misc]
                        kind, run = type(part), []
                    run.append(part.value)
                else:
                    if run:
                        parts.append(kind("".join(run)))  # type: ignore[misc]
                    kind, run = None, []
                    parts.append(part)
            continue
        if cls is not kind:
            if run:
                parts.append(kind("".join(run)))  # type: ignore[misc]
            kind, run = cls, []
        run.append(text)
    if run:
        parts.append(kind("".join(run)))  # type: ignore[misc]
    return parts


def merge_parts(parts: Iterable[Part], limit: int | None = None) -> list[Part]:
    """Consecutive text (or thinking) parts as one: a flood of tiny chunks costs less downstream.

    With a `limit`, no text (or thinking) part is longer than that many characters: a backlog,
    or one huge chunk, goes out as several parts the consumer reads comfortably."""
    merged: list[Part] = []
    run: list[str] = []  # the values of the run of text (or thinking) parts being merged

    def close_run() -> None:
        if len(run) > 1 or (limit is not None and run and len(run[0]) > limit):
            kind, text = type(merged[-1]), "".join(run)
            if limit is None or len(text) <= limit:
                merged[-1] = kind(text)  # type: ignore[call-arg]
            else:
                merged[-1:] = [kind(text[start : start + limit]) for start in range(0, len(text), limit)]  # type: ignore[call-arg]
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


def usage_part(usage: TurnUsage) -> UsagePart | None:
    """A response's usage part, from what the agent reported; None when it reported nothing.

    The prompt tokens are the agent's context as it last reported it (ACP `usage_update`'s
    `used`), which is what a context-window indicator shows; an agent that reports only its
    prompt's token counts gives its input tokens (those read from cache included) instead.
    The prompt response's counts are summed over the prompt's model calls, so they say what
    it cost, not how full the context is.
    """
    cached = usage.cached_tokens or 0
    if usage.used is not None:
        prompt = usage.used
    elif usage.input_tokens is not None:
        prompt = usage.input_tokens + cached
    elif usage.output_tokens is None:
        return None
    else:
        prompt = 0
    completion = usage.output_tokens or 0
    return UsagePart(prompt, completion, prompt + completion, min(cached, prompt))


STOP_NOTES = {
    "max_tokens": "\n\n*(The agent stopped: it reached its output token limit.)*",
    "max_turn_requests": "\n\n*(The agent stopped: it reached its limit of model requests for one turn.)*",
    "refusal": "\n\n*(The agent refused to continue.)*",
}

EMPTY_REPLY = "*(The agent ended its turn without a reply.)*"
REFUSED_NOTE = "*(The action was not allowed, and the agent stopped.)*"


# Prompts ------------------------------------------------------------------------------------


def split_context(messages: Sequence[Message]) -> tuple[tuple[Message, ...], tuple[Message, ...]]:
    """(earlier history, the trailing user input): the agent is prompted with the latter."""
    cut = last_assistant(messages)
    return tuple(messages[:cut]), tuple(messages[cut:])


def transcript(messages: Iterable[Message]) -> str:
    """Earlier history, for an agent session that did not live through it."""
    lines = []
    for message in messages:
        if message.role == "system":
            continue
        if is_global_context_message(message):
            continue
        chunks = []
        for part in message.content:
            match part:
                case CopilotText(turn=copilot):
                    chunks.append(copilot.request)
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


def build_prompt(turn: Turn, *, accepts_images: bool, accepts_resources: bool = False, system: str | None = None) -> list[dict[str, Any]]:
    """The ACP prompt for a turn: its user text and images, after `system` instructions if given.

    System messages are not forwarded by default: the agent has its own instructions, and two
    sets of instructions fight. Copilot's wrapped turns are unwrapped (`copilot_prompt`), and its
    environment message is not forwarded. Tool results are not prompt content: they go back to
    the tool that waits for them, and one that nothing waits for any more (its turn was
    cancelled) has no meaning to the agent.
    """
    blocks: list[dict[str, Any]] = []
    if system:
        blocks.append(acp.text_block(f"Instructions from the VS Code chat:\n\n{system}\n\n---\n"))
    if turn.context:
        blocks.append(acp.text_block(f"Earlier in this conversation:\n\n{transcript(turn.context)}\n\n---\n"))
    for message in turn.messages:
        if message.role != "user" or is_global_context_message(message):
            continue
        for part in message.content:
            match part:
                case CopilotText(turn=copilot):
                    blocks.extend(copilot_blocks(copilot, accepts_resources))
                case TextPart(value=value) if value:
                    blocks.append(acp.text_block(value))
                case DataPart(mime_type=mime, data=data) if mime.startswith("image/"):
                    blocks.append(acp.image_block(mime, data) if accepts_images else acp.text_block(f"[image omitted: {mime}]"))
    return blocks


def copilot_blocks(turn: CopilotTurn, accepts_resources: bool) -> list[dict[str, Any]]:
    """A Copilot turn as the agent sees it: attachments, editor context, then the request last
    (the agent answers what comes last; Eliza only reads the last block)."""
    blocks: list[dict[str, Any]] = []
    if turn.attachments:
        loose = []
        for attachment in attachments(turn.attachments):
            if accepts_resources and attachment.path and os.path.isabs(attachment.path):
                blocks.append(acp.resource_block(pathlib.PurePath(attachment.path).as_uri(), attachment.body))
            else:
                loose.append(attachment.body)
        if loose:
            blocks.append(acp.text_block("<attachments>\n" + "\n".join(loose) + "\n</attachments>"))
    for tag, body in turn.other:
        blocks.append(acp.text_block(f"<{tag}>\n{body}\n</{tag}>" if tag else body))
    if turn.editor:
        blocks.append(acp.text_block(f"<editorContext>\n{turn.editor}\n</editorContext>"))
    blocks.append(acp.text_block(turn.request))
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
    call = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
    kind = shown(call.get("kind")) or "other"
    raw = call.get("rawInput")
    # The title is what the user reads before allowing: for some agents (Gemini CLI) the whole
    # command, with no `raw_input`. Cleaned, never cut (protocol/agent_text.py).
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
    content = call.get("content") if isinstance(call.get("content"), list) else []
    items = [item for item in content if isinstance(item, dict) and item.get("type") == "diff"][:MAX_CARD_DIFFS]
    if items:
        return "\n".join(unified_diff(str(i.get("path") or "file"), i.get("oldText") if isinstance(i.get("oldText"), str) else None,
                                      i.get("newText") if isinstance(i.get("newText"), str) else "") for i in items)
    raw = call.get("rawInput") if isinstance(call.get("rawInput"), dict) else {}
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


def _default_title(kind: str, raw: Any) -> str:
    command = raw.get("command") if isinstance(raw, dict) else None
    if isinstance(command, list):
        command = " ".join(str(word) for word in command)
    if isinstance(command, str) and command.strip():
        return f"Run {command.strip()}"
    return f"Take an action ({kind})"


BRIDGE_NAMES = (  # how agents name a tool of our `vscode_tools` MCP server
    re.compile(r"^mcp__vscode_tools__(?P<tool>.+)$"),  # Claude Code
    re.compile(r"^vscode_tools/(?P<tool>.+)$"),  # fast-agent
    re.compile(r"^mcp_vscode_tools_(?P<tool>.+)$"),  # Gemini CLI
    re.compile(r"^(?P<tool>\S+) \(vscode_tools MCP Server\)$"),  # Gemini CLI titles
    re.compile(r"^vscode_tools[.:](?P<tool>.+)$"),
    re.compile(r'^Allow the vscode_tools MCP server to run tool "(?P<tool>[^"]+)"\?$'),  # Codex's question
    re.compile(r"^Tool: vscode_tools/(?P<tool>.+)$"),  # Codex's tool-call titles
)


def _bridge_names(text: Any) -> Iterator[str]:
    """The tool names `text` gives a tool of our server, by each of BRIDGE_NAMES that matches."""
    if isinstance(text, str):
        for pattern in BRIDGE_NAMES:
            if match := pattern.match(text.strip().strip("`")):
                yield match["tool"]


def calls_bridge(update: dict[str, Any]) -> bool:
    """Whether an agent's tool call (a `tool_call` or `tool_call_update`) is a call of our
    `vscode_tools` server, in any agent's naming: Claude Code's name or title, Codex's
    `rawInput.server`, the title patterns of `BRIDGE_NAMES`. The server's name is ours alone."""
    raw = update.get("rawInput") if isinstance(update.get("rawInput"), dict) else {}
    if raw.get("server") == "vscode_tools" or raw.get("server_name") == "vscode_tools":
        return True
    meta = update.get("_meta") if isinstance(update.get("_meta"), dict) else {}
    claude = meta.get("claudeCode") if isinstance(meta.get("claudeCode"), dict) else {}
    texts = (update.get("title"), update.get("name"), claude.get("toolName"))
    return any(True for text in texts for _ in _bridge_names(text))


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
    return next((name for text in texts for name in _bridge_names(text) if name in tools), None)


def results_before_moving_on(turn: Turn, awaited: Iterable[str]) -> dict[str, ToolResultPart]:
    """The results of awaited calls that VS Code ran before the user moved on: Copilot, given a
    new message while a tool call of the agent's waits at its request limit, runs the call and
    sends its result ahead of the new message. Only tool-result messages at the turn's start count."""
    wanted = set(awaited)
    results: dict[str, ToolResultPart] = {}
    for message in turn.messages:
        if message.role != "user" or not message.content or not all(isinstance(p, ToolResultPart) for p in message.content):
            break
        for part in message.content:
            if part.tool_call_id in wanted and part.tool_call_id not in results:
                results[part.tool_call_id] = part
    return results


def awaited_results(turn: Turn, awaited: Iterable[str]) -> dict[str, ToolResultPart] | None:
    """The peek/consume rule (docs/DESIGN.md, "Permissions"): the turn's results by id, if it is exactly them.

    Anything else (a cancelled match, other content, a missing result) means the user moved
    on: the caller leaves the turn unconsumed and cancels the agent's turn.
    """
    wanted = set(awaited)
    if turn.canceled or turn.context:
        return None
    results: dict[str, ToolResultPart] = {}
    for message in turn.messages:
        for part in message.content:
            if isinstance(part, ToolResultPart) and part.tool_call_id in wanted and message.role == "user":
                if part.tool_call_id in results:
                    return None  # two answers to one call: nothing says which stands
                results[part.tool_call_id] = part
            elif isinstance(part, TextPart) and not part.value.strip():
                continue
            else:
                return None
    return results if set(results) == wanted else None
