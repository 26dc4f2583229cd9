"""A Copilot Chat emulator: a consumer that re-sends history the way Copilot really does.

As read from Copilot Chat's source, at the wire level (the extension turns `stateful_marker`
data parts into `marker` parts and back):
- a System message re-rendered on every request;
- `cache_control` data parts on the last (at most 4) messages, moving every request;
- our assistant messages rebuilt: the marker first, thinking only for the current turn,
  ONE text part with all our text, then the tool calls;
- each tool result as its own user message;
- a cancelled turn rebuilt from the chat's markdown (no marker, no tool rounds);
- summarisation: the same model asked for a summary, then the history replaced by a
  `<conversation-summary>` user message, keeping the current round;
- editing an earlier message (a fork), and subagents with conversations of their own;
- agent mode's prompt: a first user message with the environment and workspace, each user
  turn wrapped (`<context>` with the date, `<editorContext>` when a file is open,
  `<reminderInstructions>` about Copilot's own tools, `<userRequest>`);
- a contributed tool is offered only when it can be referenced in a prompt (read from the
  extension's package.json), and its input is validated against its schema before the user
  is asked;
- the confirmation card: Allow runs the tool (whose result is what the extension's `invoke()`
  returns), Skip / a disabled tool / invalid input give Copilot's own texts, and a card the
  user abandons (a new message, or Stop) is answered "The user cancelled the tool call." in
  the request that carries the new message (as seen in code-server's real chat view);
- a turn rebuilt from the chat's markdown: its user message re-rendered, no marker, no tool
  call (as Copilot's source does for turns it kept no rounds of).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from protocol.vscode.lm import AGENT_ACTION_APPROVED, AGENT_ACTION_TOOL
from symposium.client import BackendClient, ChatResult

CACHE = {"type": "data", "mimeType": "cache_control", "data": "ZXBoZW1lcmFs"}
PACKAGE_JSON = Path(__file__).parents[2] / "extension" / "package.json"

# Copilot's texts for a tool call that did not run (VS Code 1.139, Copilot Chat 0.67).
SKIPPED = "The user chose to skip the tool call, they want to proceed without running it"
CANCELLED = "The user cancelled the tool call."
DISABLED = f"ERROR while calling tool: Tool {AGENT_ACTION_TOOL} is currently disabled by the user, and cannot be called."
INVALID = "ERROR: Your input to the tool was invalid ({problem})"
CHECK_INPUT = "Please check your input and try again."

GLOBAL_CONTEXT = (
    "<environment_info>\nThe user's current OS is: Linux\nThe user's default shell is: \"bash\".\n</environment_info>\n"
    "<workspace_info>\nI am working in a workspace with the following folders:\n- /workspace \n"
    "I am working in a workspace that has the following structure:\n```\nREADME.md\n```\n</workspace_info>\n"
    "<userMemory>\nNo user preferences or notes saved yet.\n</userMemory>\n<sessionMemory>\n</sessionMemory>\n<repoMemory>\n</repoMemory>\n"
)
REMINDER = (
    "When using the replace_string_in_file tool, include 3-5 lines of unchanged code before and after the string you want to"
    " replace, to make it unambiguous which part of the file should be edited.\nDo NOT create a new markdown file to document each"
    " change or summarize your work unless specifically requested by the user."
)


def contributed_tools() -> list[dict[str, Any]]:
    """The extension's tools as agent mode offers them: only those that can be referenced in a
    prompt (`canBeReferencedInPrompt` and a `toolReferenceName`); others never reach a model."""
    contributions = json.loads(PACKAGE_JSON.read_text())["contributes"].get("languageModelTools", [])
    return [
        {"name": tool["name"], "description": tool["modelDescription"], "inputSchema": tool.get("inputSchema", {"type": "object"})}
        for tool in contributions
        if tool.get("canBeReferencedInPrompt") and tool.get("toolReferenceName")
    ]


def schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """The part of JSON Schema contributed tools use (types of an object's properties), as ajv says it."""
    types = {"object": dict, "string": str, "array": list, "boolean": bool, "number": (int, float), "integer": int}
    expected = schema.get("type")
    if isinstance(expected, str) and expected in types and not isinstance(value, types[expected]):
        return f"must be {expected}"
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                return f"must have required property '{name}'"
        for name, sub in (schema.get("properties") or {}).items():
            if name in value and (problem := schema_problem(value[name], sub)) is not None:
                return problem
    return None


def wrap(request: str, editor: str | None, *, date: str = "November 23, 2026") -> str:
    """A user turn as agent mode renders it the first time."""
    parts = [f"<context>\nThe current date is {date}.\n</context>"]
    if editor:
        parts.append(f"<editorContext>\nThe user's current file is {editor}. \n</editorContext>")
    parts.append(f"<reminderInstructions>\n{REMINDER}\n\n</reminderInstructions>")
    parts.append(f"<userRequest>\n{request}\n</userRequest>")
    return "\n".join(parts) + "\n"


def rebuilt(request: str) -> str:
    """A user turn as Copilot renders it from history when it kept no rendering of its own."""
    return f"<userRequest>\n{request}\n</userRequest>"


SUMMARY_ASK = (
    "Summarize the conversation history so far, paying special attention to the most recent agent commands and tool results that"
    " triggered this summarization. Structure your summary using the enhanced format provided in the system message."
)


class Round:
    """One round as Copilot stores it: the request's new messages and our reply."""

    def __init__(self, inputs: list[dict[str, Any]]) -> None:
        self.inputs = inputs
        self.marker: str | None = None
        self.text = ""
        self.thinking = ""
        self.tool_calls: list[dict[str, Any]] = []
        self.cancelled = False
        self.request: str | None = None  # what the user typed, for a round that starts a turn

    def assistant(self, current: bool) -> dict[str, Any] | None:
        content: list[dict[str, Any]] = []
        if self.marker and not self.cancelled:
            content.append({"type": "marker", "value": self.marker})
        if current and self.thinking:
            content.append({"type": "thinking", "value": self.thinking})
        if self.text or (self.tool_calls and not self.cancelled):
            content.append({"type": "text", "value": self.text})  # Copilot keeps an empty one before tool calls
        if not self.cancelled:
            content.extend(self.tool_calls)
        return {"role": "assistant", "content": content} if content else None


class Copilot:
    """Copilot Chat in agent mode; `wrapped=False` is a plain consumer of the same shape."""

    def __init__(
        self, backend: BackendClient, agent: dict[str, Any], tools: list[dict[str, Any]] | None = None, name: str = "main", *, wrapped: bool = True
    ) -> None:
        self.backend = backend
        self.agent = agent
        self.tools = tools if tools is not None else contributed_tools()
        self.name = name
        self.wrapped = wrapped
        self.editor: str | None = None  # the file open in the editor, if any
        self.rounds: list[Round] = []
        self.summary: str | None = None  # replaces the rounds before `summary_from`
        self.summary_from = 0
        self.requests = 0

    # What goes on the wire ------------------------------------------------------------------------

    def system(self) -> dict[str, Any]:
        self.requests += 1
        text = f"You are an AI programming assistant ({self.name}). Request {self.requests}. {len(self.tools)} tools. Today is a good day."
        return {"role": "system", "content": [{"type": "text", "value": text}]}

    def messages(self) -> list[dict[str, Any]]:
        messages = [self.system()]
        if self.wrapped:
            messages.append({"role": "user", "content": [{"type": "text", "value": GLOBAL_CONTEXT}]})
        if self.summary is not None:
            messages.append({"role": "user", "content": [{"type": "text", "value": f"<conversation-summary>\n{self.summary}\n</conversation-summary>"}]})
        rounds = self.rounds[self.summary_from :]
        for index, round in enumerate(rounds):
            messages.extend(copy.deepcopy(round.inputs))
            reply = round.assistant(current=index == len(rounds) - 1)
            if reply is not None and (round.marker or round.text or round.cancelled):
                messages.append(reply)
        # Cache breakpoints on the last few messages, moving with every request.
        for message in messages[-4:]:
            if message["role"] == "user":
                message["content"].append(dict(CACHE))
        return messages

    async def _send(self, round: Round) -> ChatResult:
        result = await self.backend.chat(self.messages(), agent=self.agent, tools=self.tools)
        for part in result.parts:
            match part["type"]:
                case "marker":
                    round.marker = part["value"]
                case "text":
                    round.text += part["value"]
                case "thinking":
                    round.thinking += part["value"]
                case "tool_call":
                    round.tool_calls.append(part)
        return result

    # What the user does ---------------------------------------------------------------------------

    def user_turn(self, text: str) -> dict[str, Any]:
        value = wrap(text, self.editor) if self.wrapped else text
        return {"role": "user", "content": [{"type": "text", "value": value}]}

    async def ask(self, text: str) -> ChatResult:
        round = Round([self.user_turn(text)])
        round.request = text
        self.rounds.append(round)
        return await self._send(round)

    async def answer_tools(self, outputs: dict[str, str]) -> ChatResult:
        """VS Code ran the last round's tool calls: each result is its own user message.

        `symposium-agent-action` is our extension's tool: running it returns the approval token.
        Input that fails a tool's schema never runs: the result is Copilot's error text.
        """
        last = self.rounds[-1]
        results = {}
        for call in last.tool_calls:
            schema = next((t["inputSchema"] for t in self.tools if t["name"] == call["toolName"]), {"type": "object"})
            if (problem := schema_problem(call.get("parameters"), schema)) is not None:
                results[call["toolCallId"]] = [INVALID.format(problem=problem), CHECK_INPUT]
            elif call["toolName"] == AGENT_ACTION_TOOL:
                results[call["toolCallId"]] = [AGENT_ACTION_APPROVED]
            else:
                results[call["toolCallId"]] = [outputs[call["toolName"]]]
        return await self._send_results(results)

    async def allow(self) -> ChatResult:
        """Allow Once on the confirmation card of the last round's permission."""
        return await self.answer_tools({})

    async def skip(self) -> ChatResult:
        """Skip: the tool does not run, and Copilot says so in its result."""
        return await self._send_results({call["toolCallId"]: [SKIPPED] for call in self.rounds[-1].tool_calls})

    async def disabled(self) -> ChatResult:
        """The user unticked the tool in the tools picker while its call was on its way."""
        return await self._send_results({call["toolCallId"]: [DISABLED, CHECK_INPUT] for call in self.rounds[-1].tool_calls})

    async def _send_results(self, results: dict[str, list[str]]) -> ChatResult:
        inputs = [
            {"role": "user", "content": [{"type": "tool_result", "toolCallId": call_id, "content": [{"type": "text", "value": t} for t in texts]}]}
            for call_id, texts in results.items()
        ]
        round = Round(inputs)
        self.rounds.append(round)
        return await self._send(round)

    async def abandon_confirmation(self, text: str) -> ChatResult:
        """The user sends a new message while the card is shown (or presses Stop, then sends).

        As the real chat view does (VS Code 1.139, Copilot Chat 0.67): the tool call stays in
        the history, answered "The user cancelled the tool call.", and the new turn follows in
        the same request.
        """
        cancelled = [
            {"role": "user", "content": [{"type": "tool_result", "toolCallId": call["toolCallId"], "content": [{"type": "text", "value": CANCELLED}]}]}
            for call in self.rounds[-1].tool_calls
        ]
        round = Round([*cancelled, self.user_turn(text)])
        round.request = text
        self.rounds.append(round)
        return await self._send(round)

    def rebuild_from_markdown(self) -> None:
        """Copilot renders the current turn from the chat's markdown (as it does for a turn it
        kept no rounds of): no marker, no tool call, the text the chat showed, and the user
        message re-rendered (with the editor context of that moment)."""
        for round in reversed(self.rounds):
            round.cancelled = True
            if round.request is not None:
                if self.wrapped:
                    round.inputs = [{"role": "user", "content": [{"type": "text", "value": rebuilt(round.request)}]}]
                break
        # The turn's rounds become one: Copilot renders one assistant message for the turn.
        start = max(i for i, r in enumerate(self.rounds) if r.request is not None)
        turn = self.rounds[start]
        turn.text = "".join(r.text for r in self.rounds[start:])
        del self.rounds[start + 1 :]

    async def ask_cancelled(self, text: str) -> Round:
        """Send, then stop the reply once it has started: Copilot keeps it as markdown."""
        round = Round([self.user_turn(text)])
        round.request = text
        self.rounds.append(round)
        pending = self.backend.start_chat(self.messages(), agent=self.agent, tools=self.tools)
        await pending.first_part.wait()
        await self.backend.cancel(pending.request_id)
        await pending.done.wait()
        round.text = pending.text() + "\n\n*(cancelled)*"
        round.cancelled = True
        return round

    async def summarise(self, instructions: str = "", *, compact: bool = False) -> ChatResult:
        """Copilot Chat 0.67's summariser (`ConversationHistorySummarizer`): its own system prompt (with
        `/compact`'s words), the history as in its agent prompt but without our markers
        (`ignoreStatefulMarker`), and its ask; then the text inside the answer's `<summary>` tags (else
        all of it), with a hint naming its transcript, replaces the rounds summarised: every round for
        `/compact` (`compact`), else all but the current one (its context overflowed mid-turn)."""
        system = "Your task is to create a comprehensive, detailed summary of the entire conversation that captures all essential information."
        if instructions:
            system += f"\n\n## Additional instructions from the user:\n{instructions}"
        history = [m for m in self.messages()[1:]]
        for message in history:
            message["content"] = [p for p in message["content"] if p.get("type") != "marker"]
        messages = [
            {"role": "system", "content": [{"type": "text", "value": system}]},
            *history,
            {"role": "user", "content": [{"type": "text", "value": SUMMARY_ASK}]},
        ]
        result = await self.backend.chat(messages, agent=self.agent, tools=self.tools)
        text = result.text()
        if "<summary>" in text:
            text = text.split("<summary>", 1)[1].split("</summary>", 1)[0]
        self.summary = text.strip() + '\nIf you need specific details from before compaction, use the read_file tool to look up the full uncompacted conversation transcript at: "/tmp/transcript.jsonl"'
        self.summary_from = len(self.rounds) if compact else len(self.rounds) - 1
        return result

    def drop_tool_round(self, index: int) -> None:
        """Copilot re-rendering a turn that went on past its request limit with Continue (seen with
        Copilot Chat 0.67): the round whose tool call was pending at the limit is gone from the
        history, its call and its result, while the rounds before and after it stay."""
        kept, gone = self.rounds[index], self.rounds[index + 1]
        kept.marker, kept.text, kept.thinking, kept.tool_calls = gone.marker, gone.text, gone.thinking, gone.tool_calls
        del self.rounds[index + 1]

    def edit(self, round_index: int, text: str) -> None:
        """Edit an earlier request and resend from there: later rounds are dropped."""
        self.rounds = self.rounds[:round_index]
