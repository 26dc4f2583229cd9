"""A Copilot Chat emulator: a consumer that re-sends history the way Copilot really does.

Following `shared/reference/copilot-as-consumer.md`, at the wire level (the extension turns
`stateful_marker` data parts into `marker` parts and back):
- a System message re-rendered on every request;
- `cache_control` data parts on the last (at most 4) messages, moving every request;
- our assistant messages rebuilt: the marker first, thinking only for the current turn,
  ONE text part with all our text, then the tool calls;
- each tool result as its own user message;
- a cancelled turn rebuilt from the chat's markdown (no marker, no tool rounds);
- summarisation: the same model asked for a summary, then the history replaced by a
  `<conversation-summary>` user message, keeping the current round;
- editing an earlier message (a fork), and subagents with conversations of their own.
"""

from __future__ import annotations

import copy
from typing import Any

from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, ChatResult

CACHE = {"type": "data", "mimeType": "cache_control", "data": "ZXBoZW1lcmFs"}


class Round:
    """One round as Copilot stores it: the request's new messages and our reply."""

    def __init__(self, inputs: list[dict[str, Any]]) -> None:
        self.inputs = inputs
        self.marker: str | None = None
        self.text = ""
        self.thinking = ""
        self.tool_calls: list[dict[str, Any]] = []
        self.cancelled = False

    def assistant(self, current: bool) -> dict[str, Any] | None:
        content: list[dict[str, Any]] = []
        if self.marker and not self.cancelled:
            content.append({"type": "marker", "value": self.marker})
        if current and self.thinking:
            content.append({"type": "thinking", "value": self.thinking})
        if self.text:
            content.append({"type": "text", "value": self.text})
        if not self.cancelled:
            content.extend(self.tool_calls)
        return {"role": "assistant", "content": content} if content else None


class Copilot:
    def __init__(self, backend: BackendClient, agent: dict[str, Any], tools: list[dict[str, Any]] | None = None, name: str = "main") -> None:
        self.backend = backend
        self.agent = agent
        self.tools = tools if tools is not None else [AGENT_ACTION_TOOL_DEF]
        self.name = name
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

    async def ask(self, text: str) -> ChatResult:
        round = Round([{"role": "user", "content": [{"type": "text", "value": text}]}])
        self.rounds.append(round)
        return await self._send(round)

    async def answer_tools(self, outputs: dict[str, str]) -> ChatResult:
        """VS Code ran the last round's tool calls: each result is its own user message."""
        last = self.rounds[-1]
        inputs = [
            {"role": "user", "content": [{"type": "tool_result", "toolCallId": call["toolCallId"], "content": [{"type": "text", "value": outputs[call["toolName"]]}]}]}
            for call in last.tool_calls
        ]
        round = Round(inputs)
        self.rounds.append(round)
        return await self._send(round)

    def reject_tools(self) -> None:
        """The user rejected the confirmation: the whole round is cancelled."""
        last = self.rounds[-1]
        last.cancelled = True
        last.text = last.text + "\n\n*Cancelled*" if last.text else ""

    async def ask_cancelled(self, text: str) -> Round:
        """Send, then stop the reply once it has started: Copilot keeps it as markdown."""
        round = Round([{"role": "user", "content": [{"type": "text", "value": text}]}])
        self.rounds.append(round)
        pending = self.backend.start_chat(self.messages(), agent=self.agent, tools=self.tools)
        await pending.first_part.wait()
        await self.backend.cancel(pending.request_id)
        await pending.done.wait()
        round.text = pending.text() + "\n\n*(cancelled)*"
        round.cancelled = True
        return round

    async def summarise(self) -> ChatResult:
        """Ask the same model for a summary, then replace the history before the current round."""
        messages = [
            {"role": "system", "content": [{"type": "text", "value": "Your task is to create a comprehensive, detailed summary of the entire conversation."}]},
            *self.messages()[1:],
            {"role": "user", "content": [{"type": "text", "value": "Summarize the conversation so far."}]},
        ]
        result = await self.backend.chat(messages, agent=self.agent, tools=self.tools)
        self.summary = result.text()
        self.summary_from = len(self.rounds) - 1
        return result

    def edit(self, round_index: int, text: str) -> None:
        """Edit an earlier request and resend from there: later rounds are dropped."""
        self.rounds = self.rounds[:round_index]
