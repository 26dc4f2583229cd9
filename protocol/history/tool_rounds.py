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


# The words a consumer puts after the tool results it sends, every time, addressed to a model that
# sees results only as text (docs/how-it-works.md, "Text after tool results"): one entry per
# consumer that has one, compared with its whitespace collapsed. Copilot Chat has none: each result
# is a message of its own, and what follows them is a new turn of the user's, wrapped in its
# `<userRequest>` (../shared/reference/copilot-as-consumer.md).
CONSUMER_NOTES = frozenset(
    {
        # prompt-tsx's `ToolCalls` element: Microsoft's chat sample, `@vscode/chat-extension-utils`.
        "Above is the result of calling one or more tools. The user cannot see the results, so you should explain them"
        " to the user if referencing them in your answer.",
    }
)


def is_consumer_note(message: Message) -> bool:
    """A message of plain text that is a consumer's own note after tool results (`CONSUMER_NOTES`)."""
    return is_plain_text(message) and " ".join(message.text().split()) in CONSUMER_NOTES


@attrs.frozen
class ResultsThenText:
    """A request's tool round and the plain text after it (docs/how-it-works.md, "Text after tool
    results"): the consumer's note, and what the user typed."""

    results: tuple[Message, ...]  # the tool-result messages, without any text after them
    notes: tuple[Message, ...]  # the consumer's own notes (`CONSUMER_NOTES`), in order
    words: tuple[Message, ...]  # every other text: the user's own words, in order


def results_then_text(messages: Sequence[Message], awaited: Collection[str]) -> ResultsThenText | None:
    """`messages` as the results of exactly the `awaited` calls followed by plain text, or None.

    A consumer that runs its own tool loop sends the results of the calls the model made, and may
    add text after them: its note to a model that sees results only as text (prompt-tsx's "Above is
    the result of calling one or more tools...", as in Microsoft's chat sample), or, when a turn
    ended at a tool round (the user stopped it, the consumer's loop reached its limit), what the
    user typed next. Which is which is told by the text itself, never by where it stands: only a
    known note (`CONSUMER_NOTES`) is the consumer's. Only plain text counts: a turn of the user's as
    Copilot sends one (a wrapped `<userRequest>`, attachments, images) is left to the turn
    machine's rule as it is."""
    results: list[Message] = []
    texts: list[Message] = []
    answered: set[str] = set()
    index = 0
    while index < len(messages) and carries_results(messages[index]):
        message = messages[index]
        own = tuple(p for p in message.content if isinstance(p, ToolResultPart))
        answered.update(p.tool_call_id for p in own)
        results.append(attrs.evolve(message, content=own))
        index += 1
        if len(own) < len(message.content):
            texts.append(Message("user", message.content[len(own) :]))
            break
    rest = messages[index:]
    if not results or answered != set(awaited) or not all(is_plain_text(m) for m in rest):
        return None
    texts.extend(rest)
    if not texts:
        return None
    notes = tuple(m for m in texts if is_consumer_note(m))
    return ResultsThenText(tuple(results), notes, tuple(m for m in texts if not is_consumer_note(m)))


def shown_with_results(results: Sequence[Message], notes: Sequence[Message]) -> tuple[Message, ...]:
    """The results with the consumer's notes after the last one's own content, as a text of their
    own: the agent reads them where the consumer put them, after the results, and a result's first
    text part stays the tool's own (a permission's approval is read from it)."""
    if not notes or not results:
        return tuple(results)
    *before, last = results
    *parts, final = last.content
    assert isinstance(final, ToolResultPart)
    note = TextPart("\n\n".join(m.text() for m in notes))
    return (*before, attrs.evolve(last, content=(*parts, ToolResultPart(final.tool_call_id, (*final.content, note)))))


def call_ids(message: Message) -> Iterator[str]:
    """The tool-call ids a message carries: its calls (an assistant's) or its results (a user's)."""
    for part in message.content:
        if isinstance(part, ToolResultPart) or (isinstance(part, ToolCallPart) and message.role == "assistant"):
            yield part.tool_call_id
