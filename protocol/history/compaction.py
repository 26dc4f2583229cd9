"""A consumer's request to summarise the conversation, answered from the agent's own session, and
the summary it later sends in place of the turns, which names that conversation again
(docs/how-it-works.md, "Compaction"). Pure.

Copilot Chat 0.67 summarises (its `/compact`, and on its own near the model's `maxInputTokens`) by
asking the same model with a request of its own (`ConversationHistorySummarizer` in its bundle): a
system message that opens "Your task is to create a comprehensive, detailed summary of the entire
conversation", `/compact`'s words after "## Additional instructions from the user:", the history
(as in its agent prompt, or compressed into one message), and a last user message that opens
"Summarize the conversation history so far" (or, inline in its agent prompt, "The conversation
has grown too large for the context window and must be compacted now."). It sends no marker
(`ignoreStatefulMarker`), keeps the text inside the answer's `<summary>` tags (else the whole
answer), and from then on sends `<conversation-summary>` + that text (+ a hint naming its
transcript file) in place of the turns it summarised.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from protocol.acp import schema as acp
from protocol.history.summaries import is_summarisation, is_summary, leading_system
from protocol.vscode.lm import Message

SYSTEM_OPENING = "Your task is to create a comprehensive, detailed summary of the entire conversation"
ASKS = (
    "Summarize the conversation history so far",
    "The conversation has grown too large for the context window and must be compacted now.",
)
INSTRUCTIONS = "## Additional instructions from the user:"
TRANSCRIPT_HINT = "\nIf you need specific details from before compaction"
COMPACT = "compact"  # the command name agents give their own compaction (Claude Code, Codex)
MAX_INSTRUCTIONS = 2000


@attrs.frozen
class Summarisation:
    """A consumer asking for a summary of the conversation so far."""

    ask: str  # the consumer's words asking for it (its last user message)
    instructions: str = ""  # what the user added (`/compact focus on the tests`)
    copilots: bool = False  # Copilot's summariser, recognised by what it sends


def summarisation(messages: Sequence[Message]) -> Summarisation | None:
    """The summarisation a request asks for, if it is one: Copilot's by its words, else any
    consumer's whose last user message or system prompt asks to summarise the conversation."""
    last = next((m for m in reversed(messages) if m.role == "user"), None)
    if last is None:
        return None
    ask = last.text().strip()
    systems = [m.text() for m in leading_system(messages)]
    copilots = ask.startswith(ASKS) or any(s.lstrip().startswith(SYSTEM_OPENING) for s in systems)
    if not copilots and not is_summarisation(messages):
        return None
    instructions = ""
    for system in systems:
        if (at := system.find(INSTRUCTIONS)) >= 0:
            instructions = " ".join(system[at + len(INSTRUCTIONS) :].split())[:MAX_INSTRUCTIONS]
    return Summarisation(ask, instructions, copilots)


def compaction_prompt(asked: Summarisation, commands: frozenset[str]) -> list[dict[str, Any]]:
    """What the agent is prompted with, in its own session: its own compaction command where it
    announced one and the request is Copilot's compaction (the summary is what it reports
    compacting), else the consumer's request, which it answers from everything its session holds."""
    if asked.copilots and COMPACT in commands:
        return [acp.text_block(f"/{COMPACT} {asked.instructions}".rstrip())]
    return [acp.text_block(asked.ask)]


def compacts(blocks: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a prompt is the agent's compaction command (ours, or typed by the user)."""
    first = blocks[0].get("text") if blocks else None
    return isinstance(first, str) and first.split(maxsplit=1)[:1] == [f"/{COMPACT}"]


def summary_kept(answer: str) -> str:
    """What Copilot keeps of a summary answer: the text inside its `<summary>` tags, else all of it."""
    start = answer.find("<summary>")
    if start < 0:
        return answer.strip()
    start += len("<summary>")
    end = answer.find("</summary>", start)
    return (answer[start:end] if end >= 0 else answer[start:]).strip()


def summary_key(summary: str) -> str:
    """A summary's key, whitespace aside."""
    return hashlib.sha256(" ".join(summary.split()).encode()).hexdigest()


def answer_key(answer: str) -> str | None:
    """The key of the summary a consumer keeps of our answer (None for an empty one)."""
    kept = summary_kept(answer)
    return summary_key(kept) if kept else None


def sent_summary_key(message: Message) -> str | None:
    """The key of the summary a `<conversation-summary>` message carries (Copilot's transcript hint,
    added after our text, left out); None for any other message."""
    if not is_summary(message):
        return None
    text = message.text().lstrip().removeprefix("<conversation-summary>")
    end = text.rfind("</conversation-summary>")
    if end >= 0:
        text = text[:end]
    if (hint := text.find(TRANSCRIPT_HINT)) >= 0:
        text = text[:hint]
    return summary_key(text) if text.strip() else None


