"""What the user asked, turn by turn, and the conversation the user sees, however a consumer
renders the rest (the agent's tool rounds, context messages). Pure logic (docs/DESIGN.md,
"History and matching", "Identity and markers")."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import attrs

from protocol.history.canonical import Digest, canonical, chain, message_digest
from protocol.history.summaries import is_summary
from protocol.history.tool_rounds import carries_results, is_tool_round
from protocol.vscode.lm import Message, TextPart, ToolCallPart


@attrs.frozen
class UserTurn:
    """One turn the user asked: its first message that is not a known note, and the digest of its
    last message (what the user typed comes last: Copilot's `<userRequest>`, the chat sample's
    prompt after its `<context>` message)."""

    start: int
    digest: Digest


def user_turns(messages: Sequence[Message], digests: Sequence[Digest | None], notes: Collection[Digest] = ()) -> list[UserTurn]:
    """What the user asked, turn by turn, however the consumer renders the rest.

    A turn is a run of user messages between the model's messages and tool rounds; it is known by
    its last message, so a context message the consumer sent before the user's words and leaves
    out when it renders that turn again does not change it. Messages that never count (system,
    Copilot's environment) and the consumer's known notes (`notes`, their digests) are skipped;
    the model's messages, rendered however the consumer likes, only end a turn."""
    turns: list[UserTurn] = []
    start: int | None = None
    last: Digest = 0
    for index, (message, digest) in enumerate(zip(messages, digests, strict=False)):
        if digest is None:
            continue
        if message.role != "user" or carries_results(message):
            if start is not None:
                turns.append(UserTurn(start, last))
                start = None
            continue
        if digest in notes:
            continue
        if start is None:
            start = index
        last = digest
    if start is not None:
        turns.append(UserTurn(start, last))
    return turns


def asked(turns: Iterable[UserTurn]) -> Digest:
    """The digest of what the user asked in `turns`, in order."""
    digest = 0
    for turn in turns:
        digest = chain(digest, turn.digest)
    return digest


# What `conversation_step` carries from message to message: the digest of the conversation so far,
# and the digest of the agent's latest answer, not yet followed by a turn of the user's.
SeenSoFar = tuple[Digest, Digest | None]
SEEN_START: SeenSoFar = (0, None)


def conversation_step(state: SeenSoFar, message: Message, own: Digest | None) -> SeenSoFar:
    """One message more of the conversation the user sees (`own`: the message's own digest,
    None for one that never counts): each turn the user asked, and the agent's answer that ended
    the turn before it (the text of its last assistant message before the user's next turn).
    The agent's own tool rounds (calls, results, the text in a message with calls) are left out: Copilot
    re-renders them at will (a round at its request limit is dropped once the user goes on with
    Continue), and they are the agent's business (docs/DESIGN.md, "Identity and markers")."""
    digest, answer = state
    if own is None:
        return state
    if message.role == "assistant":
        if any(isinstance(p, ToolCallPart) for p in message.content):
            # A round of the agent's tool loop, not an answer: Copilot drops the round pending
            # at its request limit when the user sends a new message there, and the text of the
            # round before it would otherwise read as another answer.
            return state
        text = "".join(p.value for p in message.content if isinstance(p, TextPart)).strip()
        return (digest, message_digest(("answer", text))) if text else state
    if is_tool_round(message):
        return state
    if answer is not None:
        digest = chain(digest, answer)
    return chain(digest, own), None


def trailing_digest(messages: Sequence[Message]) -> Digest:
    """The digest of the messages after the last assistant message: what a turn was asked.

    A marker carries it beside the digest of the whole history before it: when Copilot has
    replaced that history with a summary, the turn's own messages still identify it.
    """
    digest = 0
    for message in messages[_last_assistant(messages) + 1 :]:
        form = canonical(message)
        if form is not None and not is_summary(message):
            digest = chain(digest, message_digest(form))
    return digest


def _last_assistant(messages: Sequence[Message]) -> int:
    return last_assistant(messages) - 1


def last_assistant(messages: Sequence[Message]) -> int:
    """The index after the last assistant message (0 if there is none)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return index + 1
    return 0
