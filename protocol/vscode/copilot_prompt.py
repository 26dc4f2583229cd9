"""Copilot Chat's prompt wrappers, taken apart. Pure functions, no I/O.

Copilot Chat (agent, ask and plan modes) wraps every user turn for its own models:

    <attachments>…</attachments>              files and selections the user attached
    <context>…</context>                      today's date, files edited, terminals, todos
    <editorContext>…</editorContext>          the active file and selection
    <reminderInstructions>…</reminderInstructions>   how to use Copilot's own edit tools
    <userRequest>…</userRequest>              what the user typed (`<user_query>` for some families)

and sends, as the first user message of a chat, a global context message
(`<environment_info>`, `<workspace_info>`, user memory). An ACP agent has its own tools,
knows its OS, folder and date, and must not follow Copilot's reminders; it gets what the
user typed, the editor context and the attachments. The wrappers also change between
renderings of the same turn (a turn rebuilt after an abandoned confirmation has a new
editor context and no reminders), so a turn's identity is its request and attachments.

Only messages with a request element are unwrapped: other consumers' text goes through
as it is.
"""

from __future__ import annotations

import re

import attrs

from protocol.vscode.lm import TextPart

REQUEST_TAGS = ("userRequest", "user_query")
# Copilot's instructions for its own models, and context the agent already has.
DROPPED_TAGS = frozenset({"context", "reminderInstructions", "toolReferences", "modeInstructions"})
GLOBAL_CONTEXT_TAGS = ("<environment_info>", "<workspace_info>")

_OPEN = re.compile(r"\s*<([A-Za-z_][\w-]*)((?:\s[^<>]*)?)>")
_ATTACHMENT = re.compile(r"<attachment\b([^<>]*)>\n?(.*?)\n?</attachment>", re.S)
_ATTRIBUTE = re.compile(r'([\w-]+)="([^"]*)"')


@attrs.frozen
class CopilotTurn:
    """One Copilot user turn, unwrapped."""

    request: str  # what the user typed
    attachments: str  # the body of <attachments>, or ""
    editor: str  # the body of <editorContext>, or ""
    other: tuple[tuple[str, str], ...] = ()  # other elements we do not know, kept as (tag, body)

    @property
    def identity(self) -> tuple[str, ...]:
        """What makes two renderings of this turn the same turn."""
        return ("copilot", self.request, self.attachments)


@attrs.frozen
class CopilotText(TextPart):
    """A user's text part that is a Copilot turn, unwrapped once, as the request is read
    (`canonical.normalise`): matching and rendering take `turn` and never parse the text again.
    `value` stays the text as Copilot sent it."""

    turn: CopilotTurn = attrs.field(kw_only=True, eq=False)  # derived from `value`


def unwrap(text: str) -> CopilotTurn | None:
    """The turn inside a Copilot-shaped user message; None if the text is not one.

    The text must be a run of top-level elements (loose text between them is kept) ending with
    the request element. The request
    is everything up to its last closing tag (what the user typed may contain anything);
    earlier elements end at their first closing tag.
    """
    stripped = text.rstrip()
    if not stripped.endswith(tuple(f"</{tag}>" for tag in REQUEST_TAGS)):
        return None
    sections: dict[str, str] = {}
    other: list[tuple[str, str]] = []
    position = 0
    while position < len(stripped):
        opening = _OPEN.match(stripped, position)
        if opening is None:
            # Loose text between elements (a hint Copilot adds): kept, up to the next element. Searched
            # from the next character: text starting "\n<" that opens no element (a closing tag, a "<3")
            # would otherwise be found again where it is, forever.
            following = stripped.find("\n<", position + 1)
            if following < 0:
                return None
            other.append(("", stripped[position:following].strip()))
            position = following
            continue
        tag = opening[1]
        if tag in REQUEST_TAGS:
            closing = f"</{tag}>"
            if not stripped.endswith(closing):
                return None
            request = stripped[opening.end() : len(stripped) - len(closing)]
            return CopilotTurn(
                _trim(request), sections.get("attachments", ""), sections.get("editorContext", ""), tuple(other)
            )
        end = stripped.find(f"</{tag}>", opening.end())
        if end < 0:
            return None
        body = _trim(stripped[opening.end() : end])
        if tag in ("attachments", "editorContext"):
            sections[tag] = body
        elif tag not in DROPPED_TAGS:
            other.append((tag, body))
        position = end + len(tag) + 3
    return None


def _trim(body: str) -> str:
    """Copilot's elements put their body on lines of its own."""
    return body.strip("\n")


@attrs.frozen
class Attachment:
    body: str
    path: str | None  # the file it came from, when Copilot says


def attachments(body: str) -> list[Attachment]:
    """The `<attachment>` elements of an `<attachments>` body (a body without any is one attachment)."""
    found = [
        Attachment(_trim(match[2]), dict(_ATTRIBUTE.findall(match[1])).get("filePath")) for match in _ATTACHMENT.finditer(body)
    ]
    return found or [Attachment(body, None)]
