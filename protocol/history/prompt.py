"""The ACP prompt a turn becomes: what the user asked and attached, unwrapped from Copilot's form,
after the earlier history for a session that did not live through it (docs/DESIGN.md, "History and
matching"; what a Copilot-shaped message holds: `protocol/vscode/copilot_prompt.py`).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterable, Sequence
from typing import Any

from protocol.acp import schema as acp
from protocol.history.agent_commands import typed_command
from protocol.history.canonical import is_global_context_message
from protocol.history.channels import Turn
from protocol.history.user_turns import last_assistant
from protocol.vscode.copilot_prompt import CopilotText, CopilotTurn, attachments
from protocol.vscode.lm import DataPart, Message, TextPart, ToolCallPart, ToolResultPart


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


def build_prompt(
    turn: Turn, *, accepts_images: bool, accepts_resources: bool = False, system: str | None = None, commands: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """The ACP prompt for a turn: its user text and images, after `system` instructions if given.

    System messages are not forwarded by default: the agent has its own instructions, and two
    sets of instructions fight. Copilot's wrapped turns are unwrapped (`copilot_prompt`), and its
    environment message is not forwarded. Tool results are not prompt content: they go back to
    the tool that waits for them, and one that nothing waits for any more (its turn was
    cancelled) has no meaning to the agent. A command of the agent's (`commands`) typed by the user
    goes as typed, alone (`agent_commands.typed_command`).
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
                    command = typed_command(copilot.request, commands)
                    blocks.extend([acp.text_block(command)] if command else copilot_blocks(copilot, accepts_resources))
                case TextPart(value=value) if value:
                    blocks.append(acp.text_block(typed_command(value, commands) or value))
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
