"""Copilot's summarisation: a request asking for a summary, and a history that opens with one.
Pure logic (docs/DESIGN.md, "History and matching")."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from protocol.history.canonical import is_global_context_message
from protocol.vscode.lm import Message

_SUMMARY_ASK = re.compile(r"\bsummar(?:y|i[sz]e|i[sz]ing)\b.{0,80}\bconversation\b|\bconversation\b.{0,80}\bsummar(?:y|i[sz]e)\b", re.I | re.S)


def is_summarisation(messages: Sequence[Message]) -> bool:
    """A consumer asking the model to summarise the conversation (Copilot does when its context
    overflows): the last user message asks for it, or a system prompt is a summariser's."""
    last_user = next((m for m in reversed(messages) if m.role == "user"), None)
    if last_user is not None and _SUMMARY_ASK.search(last_user.text()[:2000]):
        return True
    return any(_SUMMARY_ASK.search(m.text()[:2000]) for m in leading_system(messages))


def leading_system(messages: Sequence[Message]) -> Iterator[Message]:
    """The system messages a request opens with (consumers put their instructions first)."""
    for message in messages:
        if message.role != "system":
            return
        yield message


def is_summarised(messages: Sequence[Message]) -> bool:
    """Whether the history opens with Copilot's summary of what it dropped."""
    first = next((m for m in messages if m.role != "system" and not is_global_context_message(m)), None)
    return first is not None and is_summary(first)


def is_summary(message: Message) -> bool:
    """Copilot's stand-in for the history it summarised away (its context budget overflowed)."""
    return message.role == "user" and message.text().lstrip().startswith("<conversation-summary>")
