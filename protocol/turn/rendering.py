"""What VS Code shows of the agent's updates: text, thinking, a status line per tool call with its
output and diffs, the plan as a checklist, the usage part (docs/DESIGN.md, "What VS Code shows").

Pure; the Session actor renders each batch of updates the turn machine shows. The prompt is
`protocol/history/prompt.py`'s, the permission cards `protocol/turn/permissions.py`'s.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from protocol.acp.agent_text import shown
from protocol.acp.update_kinds import UpdateKind, kind_of
from protocol.acp.usage import TurnUsage
from protocol.bridge.tool_names import calls_bridge
from protocol.history.compaction import compacts
from protocol.turn.subagents import parent_call, subagent_name
from protocol.vscode.lm import EditPart, Part, TextPart, ThinkingPart, UsagePart

OUTPUT_LINES = 12  # tool output shown inline; the agent keeps the rest
# An edit's diff shown inline: enough to review a real change, bounded for a rewritten or
# generated file (the chat keeps every part of every response, and Copilot sends it back).
DIFF_LINES = 200
DIFF_CHARS = 16_000
EXACT_DIFF_LINES = 1_000  # changed lines beyond which a diff is one hunk (`diff_hunks`)
MAX_DIFF_INPUT = 1_000_000  # characters of before and after beyond which no diff is made at all


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
    parent: str | None = None  # the call whose subagent made this one (protocol/turn/subagents.py)
    children: int = 0  # the calls its subagent made


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
    # The running prompt compacts the session to answer a summarisation: the agent's summary of
    # its compaction is the answer's text (protocol/history/compaction.py). Otherwise it is not shown.
    summarising: bool = False
    summary_streamed: bool = False  # its summary came in chunks: the terminal update's copy is not shown again

    def prompted(self, blocks: Sequence[Mapping[str, Any]]) -> None:
        """A prompt went out: where it is the agent's compaction command, the summary it reports
        is the answer (protocol/history/compaction.py)."""
        self.summarising = compacts(blocks)
        self.summary_streamed = False

    def take_edits(self) -> list[EditPart]:
        """The edits of the calls that finished (successfully) since the last call."""
        edits, self.edits = self.edits, []
        return edits

    def start(self, update: dict[str, Any]) -> str:
        call_id = str(update.get("toolCallId", ""))
        state = _ToolCallState(shown(update.get("title")) or "tool call", str(update.get("status") or "pending"))
        if (name := subagent_name(update)) is not None and not shown(update.get("title")):
            state.title = f"subagent {name}"
        self.calls[call_id] = state
        header = ""
        if (parent := parent_call(update)) is not None and parent != call_id:
            # A subagent's call: under its parent's heading, the first of them opening it.
            state.parent = parent
            owner = self.calls.get(parent)
            if owner is not None:
                owner.children += 1
                header = f"\n\n**{owner.title}** · subagent\n" if owner.children == 1 else ""
        return header + self._finish(state, update)

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
        if state.parent is not None:
            return f"\n> {ICONS[state.status]} {state.title}\n"  # its output is its subagent's to read
        ended = f" · subagent, {state.children} call{'s' if state.children != 1 else ''}" if state.children else ""
        line = f"\n\n{ICONS[state.status]} {state.title}{ended}\n"
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


def render_update(update: dict[str, Any], tracker: ToolCallTracker) -> list[Part]:
    """One ACP `session/update` as response parts; unknown updates give nothing."""
    match kind_of(update):
        case UpdateKind.AGENT_MESSAGE_CHUNK:
            text = block_text(update.get("content"))
            # A subagent's words are its report to the agent, never the agent's answer.
            return ([ThinkingPart(text)] if parent_call(update) else [TextPart(text)]) if text else []
        case UpdateKind.AGENT_THOUGHT_CHUNK:
            text = block_text(update.get("content"))
            return [ThinkingPart(text)] if text else []
        case UpdateKind.TOOL_CALL | UpdateKind.TOOL_CALL_UPDATE:
            text = tracker.start(update) if update["sessionUpdate"] == UpdateKind.TOOL_CALL else tracker.progress(update)
            return [*([TextPart(text)] if text else []), *tracker.take_edits()]
        case UpdateKind.PLAN:
            return [TextPart(render_plan(update.get("entries") or []))]
        case UpdateKind.COMPACTION_SUMMARY_CHUNK if tracker.summarising:
            text = block_text(update.get("content"))
            tracker.summary_streamed = tracker.summary_streamed or bool(text)
            return [TextPart(text)] if text else []
        case UpdateKind.COMPACTION_UPDATE if tracker.summarising:
            summary = "".join(block_text(b) for b in update.get("summary") or ())
            if update.get("status") == "failed":
                return [TextPart(f"Compaction failed: {update.get('error') or 'the agent gave no reason'}\n\n")]
            return [TextPart(summary)] if summary and not tracker.summary_streamed else []
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
        tag = kind_of(update)
        if tag == UpdateKind.AGENT_MESSAGE_CHUNK or tag == UpdateKind.AGENT_THOUGHT_CHUNK:
            # A subagent's words (its chunks carry `_meta`) are its report to the agent, never the answer.
            own = tag == UpdateKind.AGENT_MESSAGE_CHUNK and ("_meta" not in update or parent_call(update) is None)
            cls: type[TextPart | ThinkingPart] = TextPart if own else ThinkingPart
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
            kind = ThinkingPart if isinstance(merged[-1], ThinkingPart) else TextPart
            text = "".join(run)
            if limit is None or len(text) <= limit:
                merged[-1] = kind(text)
            else:
                merged[-1:] = [kind(text[start : start + limit]) for start in range(0, len(text), limit)]
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
