"""Microsoft's chat sample's `@tools` participant as a consumer: how it renders its requests.

As its prompt (`extension/src/test/fixtures/chat-sample/src/toolsPrompt.tsx`, prompt-tsx) and the
real Chat view show it (docs/how-it-works.md, "Consumers"):
- its instructions as a first user message, no system message;
- the request's references as a `<context>` message before the prompt, left out when that turn is
  rendered again;
- its own tool loop: our tool calls echoed with their input as the JSON text of the function's
  arguments and the round's text first, no marker; each result its own message; after the rounds,
  prompt-tsx's note ("Above is the result of calling one or more tools...");
- an earlier turn rendered as its prompt, then its tool rounds and the note if it had any (without
  the answer that ended it), else its answer;
- editing a message (VS Code's edit) drops that turn and every later one, and asks again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs

from symposium.client import BackendClient, ChatResult, tool_result, user

INSTRUCTIONS = (
    "Instructions: \n- The user will ask a question, or ask you to perform a task, and it may require lots of research to"
    " answer correctly. There is a selection of tools that let you perform actions or retrieve helpful context to answer"
    " the user's question. \n- Don't ask the user for confirmation to use tools, just use them."
)
NOTE = (
    "Above is the result of calling one or more tools. The user cannot see the results, so you should explain them to the"
    " user if referencing them in your answer."
)
MAX_ROUNDS = 10

JSON = Any


def echoed(result: ChatResult) -> dict[str, JSON]:
    """prompt-tsx's rendering of our reply with tool calls: its text, the calls with their input as
    JSON text, no marker."""
    text = result.text()
    calls = [dict(call, parameters=json.dumps(call["parameters"])) for call in result.tool_calls()]
    return {"role": "assistant", "content": [*([{"type": "text", "value": text}] if text else []), *calls]}


@attrs.define
class SampleTurn:
    prompt: str
    rounds: list[list[dict[str, JSON]]]  # each: our reply echoed, then its results
    answer: str


@attrs.define
class ChatSample:
    """One chat with `@tools`; `run_tool` is what VS Code's `invokeTool` answers a call with."""

    backend: BackendClient
    agent: JSON
    tools: list[JSON]
    run_tool: Callable[[dict[str, JSON]], str]
    turns: list[SampleTurn] = attrs.Factory(list)

    def history(self) -> list[dict[str, JSON]]:
        messages: list[dict[str, JSON]] = []
        for turn in self.turns:
            messages.append(user(turn.prompt))
            if turn.rounds:
                messages += [m for round in turn.rounds for m in round] + [user(NOTE)]
            else:
                messages.append({"role": "assistant", "content": [{"type": "text", "value": turn.answer}]})
        return messages

    async def ask(self, prompt: str, context: str | None = None) -> ChatResult:
        """A turn: the prompt (after its `<context>` message, if any), then the sample's tool loop
        until the model answers without tool calls."""
        rounds: list[list[dict[str, JSON]]] = []
        asked = [*([user(f"<context>\n{context}\n</context>")] if context else []), user(prompt)]
        for _ in range(MAX_ROUNDS):
            tail = [m for round in rounds for m in round] + ([user(NOTE)] if rounds else [])
            result = await self.backend.chat([user(INSTRUCTIONS), *self.history(), *asked, *tail], agent=self.agent, tools=self.tools)
            assert result.error is None, result.error.message
            calls = result.tool_calls()
            if not calls:
                self.turns.append(SampleTurn(prompt, rounds, result.text()))
                return result
            rounds.append([echoed(result), *(tool_result(call["toolCallId"], self.run_tool(call)) for call in calls)])
        raise AssertionError("the tool loop did not end")

    async def edit(self, index: int, prompt: str, context: str | None = None) -> ChatResult:
        """The user edits the message of turn `index`: it and every later turn are gone, and it is asked again."""
        del self.turns[index:]
        return await self.ask(prompt, context)
