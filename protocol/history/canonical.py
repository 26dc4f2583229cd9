"""Messages compared by meaning: their canonical form and its digests. Pure logic, no I/O
(docs/DESIGN.md, "History and matching").

Consumers never re-send history byte-identical, so messages are compared in a canonical
form: system messages (and Copilot's environment message) ignored, cache-control/marker
data and thinking stripped, text merged, assistant messages reduced to (all their text,
their tool calls in order), Copilot's wrapped user turns reduced to what the user asked
and attached (`copilot_prompt`). A history's digest chains its messages' digests, from a
root of the agent definition.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from protocol.shared.structuring import canonical_json
from protocol.vscode.copilot_prompt import GLOBAL_CONTEXT_TAGS, CopilotText, unwrap
from protocol.vscode.lm import (
    Agent,
    DataPart,
    HeldDataPart,
    MarkerPart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    agent_to_wire,
)

# Data parts that carry consumer bookkeeping, never content.
IGNORED_MIME_TYPES = frozenset({"cache_control", "stateful_marker"})

Digest = int


def _content_parts(parts: Iterable[Any], *, merge: bool = True) -> list[Any]:
    """Drop bookkeeping parts and (with `merge`) merge consecutive text.

    A tool result's own parts stay apart: only its first text part is the tool's own answer
    (hooks append theirs), and the approval of a permission is read from exactly that part.
    """
    out: list[Any] = []
    for part in parts:
        if isinstance(part, (ThinkingPart, MarkerPart)):
            continue
        if isinstance(part, DataPart) and part.mime_type in IGNORED_MIME_TYPES:
            continue
        if merge and isinstance(part, TextPart) and out and isinstance(out[-1], TextPart):
            out[-1] = TextPart(out[-1].value + part.value)
            continue
        if isinstance(part, ToolResultPart):
            part = ToolResultPart(part.tool_call_id, tuple(_content_parts(part.content, merge=False)))
        out.append(part)
    return out


def normalise(message: Message) -> Message:
    """The message as everything downstream takes it (docs/DESIGN.md, "History matching"):
    bookkeeping parts stripped, consecutive text merged, and a user's Copilot-wrapped text
    unwrapped into a `CopilotText`. Reading a request calls it once per new message."""
    content = message.content
    if len(content) == 1 and type(content[0]) is TextPart:  # the common case: nothing to strip
        if message.role != "user":
            return message
        unwrapped = _unwrapped(content[0])
        return message if unwrapped is content[0] else attrs.evolve(message, content=(unwrapped,))
    parts = _content_parts(content)
    if message.role == "user":
        parts = _unwrapped_turn(parts)
    return attrs.evolve(message, content=tuple(parts))


def _unwrapped_turn(parts: list[Any]) -> list[Any]:
    """A user's parts with a Copilot turn unwrapped. Copilot Chat 0.67 puts an attached image
    inside the turn's `<attachments>` element, so its text comes in pieces around the image
    (`<attachments>`, the image, `</attachments>` ... `<userRequest>`): the pieces read together
    are the turn, and the images go before it (what the user attached, then what they asked,
    which the agent answers: it comes last)."""
    texts = [part for part in parts if type(part) is TextPart]
    if len(texts) > 1 and all(type(part) is TextPart or isinstance(part, DataPart) for part in parts):
        whole = "".join(part.value for part in texts)
        if (turn := unwrap(whole)) is not None:
            return [part for part in parts if type(part) is not TextPart] + [CopilotText(whole, turn=turn)]
    return [_unwrapped(part) for part in parts]


def _unwrapped(part: Any) -> Any:
    """A Copilot turn's text part as a `CopilotText`; any other part as it is."""
    if type(part) is not TextPart:
        return part
    turn = unwrap(part.value)
    return part if turn is None else CopilotText(part.value, turn=turn)


def _part_form(part: Any) -> tuple[Any, ...]:
    if isinstance(part, CopilotText):
        # Copilot re-renders the wrappers of a turn (a new editor context, no reminders when it
        # rebuilds a turn): its identity is what the user asked and attached.
        return part.turn.identity
    if isinstance(part, TextPart):
        return ("text", part.value)
    if isinstance(part, DataPart):
        return ("data", part.mime_type, data_digest(part.data))
    if isinstance(part, HeldDataPart):
        return ("data", part.mime_type, part.digest)
    if isinstance(part, ToolResultPart):
        return ("tool_result", part.tool_call_id, tuple(_part_form(p) for p in _content_parts(part.content)))
    if isinstance(part, ToolCallPart):
        return ("tool_call", part.tool_call_id, part.tool_name, canonical_json(tool_input(part.parameters)))
    return (part.type,)


def data_digest(data: str) -> str:
    """What a data part's form holds of its bytes: a digest, so that a conversation may keep the
    part by its digest alone (`HeldDataPart`) and still match it."""
    return hashlib.blake2b(data.encode(), digest_size=16).hexdigest()


def tool_input(parameters: Any) -> Any:
    """A tool call's input by meaning. Copilot round-trips our inputs through JSON.stringify and
    JSON.parse (an empty one comes back `{}`); prompt-tsx passes the function arguments on as the
    JSON text they are (Microsoft's chat sample). A string that reads as a JSON object is that
    object, so either way the same value compares equal, key order and whitespace aside."""
    if parameters is None:
        return {}
    if isinstance(parameters, str) and parameters.lstrip().startswith("{"):
        try:
            value = json.loads(parameters)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
            return parameters
        return value if isinstance(value, dict) else parameters
    return parameters


Form = tuple[Any, ...]


def is_global_context_message(message: Message) -> bool:
    """Copilot's environment/workspace message: context the agent has, re-rendered at will.
    Takes a normalised message: a wrapped turn (`CopilotText`) is never one."""
    if message.role != "user" or len(message.content) != 1:
        return False
    part = message.content[0]
    return type(part) is TextPart and part.value.lstrip().startswith(GLOBAL_CONTEXT_TAGS)


def canonical(message: Message) -> Form | None:
    """The form two renderings of the same message share; None for messages that never count.

    Call it on normalised messages (History normalises every request once). The form is a
    nested tuple of strings, so hashing it is cheap enough to run over every message of
    every request.
    """
    if message.role == "system" or is_global_context_message(message):
        return None
    if message.role == "assistant":
        text = "".join(p.value for p in message.content if isinstance(p, TextPart)).strip()
        calls = tuple(_part_form(p) for p in message.content if isinstance(p, ToolCallPart))
        return ("assistant", text, calls)
    return ("user", tuple(_part_form(p) for p in message.content))


def message_digest(form: Form) -> Digest:
    """A message's own digest: 64 bits of BLAKE2b over its canonical form.

    Stable across backend runs (markers carry digests, see `markers`), and computed once per
    message: History reuses the digests of the messages a request shares with the previous
    request of the same conversation (`reading`).
    """
    return int.from_bytes(hashlib.blake2b(repr(form).encode(), digest_size=8).digest(), "little")


def chain(previous: Digest, message: Digest) -> Digest:
    """The digest of a history extended by one message (of digest `message`).

    A hash of two ints: as stable across runs as the message digests, and cheap.
    """
    return hash((previous, message))


def root(agent: Agent) -> Digest:
    """Chains start from the agent definition, so histories of different agents never meet."""
    return message_digest(("agent", canonical_json(agent_to_wire(agent))))


def prefix_digests(start: Digest, messages: Sequence[Message]) -> list[tuple[int, Digest]]:
    """(index after the message, digest of everything up to it) for each counting message."""
    out: list[tuple[int, Digest]] = []
    digest = start
    for index, message in enumerate(messages):
        form = canonical(message)
        if form is None:
            continue
        digest = chain(digest, message_digest(form))
        out.append((index + 1, digest))
    return out


def has_content(messages: Iterable[Message]) -> bool:
    return any(m.role != "system" and _content_parts(m.content) for m in messages)

