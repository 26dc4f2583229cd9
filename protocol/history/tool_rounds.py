"""The tool rounds of a consumer's tool loop as a request carries them: results, the consumer's
words after them, the call ids that tie them to a conversation. Pure logic (docs/DESIGN.md,
"History and matching")."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

import attrs

from protocol.vscode.lm import Message, TextPart, ToolCallPart, ToolResultPart


def is_tool_round(message: Message) -> bool:
    """A user message that only carries tool results: a round of the agent's own tool loop."""
    return message.role == "user" and bool(message.content) and all(isinstance(p, ToolResultPart) for p in message.content)


def is_plain_text(message: Message) -> bool:
    """A user message of plain text only: no Copilot-wrapped turn, no image, no tool result."""
    return message.role == "user" and bool(message.content) and all(type(p) is TextPart for p in message.content)


def carries_results(message: Message) -> bool:
    """A user message of tool results, possibly followed in the same message by the consumer's
    own text (an Anthropic-style rendering puts a note after the results it follows)."""
    parts = message.content
    if message.role != "user" or not parts or not isinstance(parts[0], ToolResultPart):
        return False
    rest = [p for p in parts if not isinstance(p, ToolResultPart)]
    return all(type(p) is TextPart for p in rest) and all(isinstance(p, ToolResultPart) for p in parts[: len(parts) - len(rest)])


@attrs.frozen
class ResultsWithNote:
    """A request's tool round followed by its consumer's own words (docs/how-it-works.md,
    "A consumer's note after tool results")."""

    results: tuple[Message, ...]  # the tool-result messages, without the note's text
    notes: tuple[Message, ...]  # what followed them: the consumer's note to its model


def results_with_note(messages: Sequence[Message], awaited: Collection[str]) -> ResultsWithNote | None:
    """`messages` as the results of exactly the `awaited` calls followed by plain text, or None.

    A consumer that runs its own tool loop (prompt-tsx's `ToolCalls`, as in Microsoft's chat
    sample) ends the request after a tool round with a user message of its own ("Above is the
    result of calling one or more tools..."): it ran the tools the model asked for and calls
    the model again, so the agent's turn goes on. Only plain text counts: a new turn of the
    user's as Copilot sends it (a wrapped `<userRequest>`, attachments, images) is the user
    moving on, and is left to the turn machine's rule."""
    results: list[Message] = []
    notes: list[Message] = []
    answered: set[str] = set()
    index = 0
    while index < len(messages) and carries_results(messages[index]):
        message = messages[index]
        own = tuple(p for p in message.content if isinstance(p, ToolResultPart))
        answered.update(p.tool_call_id for p in own)
        results.append(attrs.evolve(message, content=own))
        index += 1
        if len(own) < len(message.content):
            notes.append(Message("user", message.content[len(own) :]))
            break
    rest = messages[index:]
    if not results or answered != set(awaited) or not all(is_plain_text(m) for m in rest):
        return None
    notes.extend(rest)
    return ResultsWithNote(tuple(results), tuple(notes)) if notes else None


def call_ids(message: Message) -> Iterator[str]:
    """The tool-call ids a message carries: its calls (an assistant's) or its results (a user's)."""
    for part in message.content:
        if isinstance(part, ToolResultPart) or (isinstance(part, ToolCallPart) and message.role == "assistant"):
            yield part.tool_call_id
