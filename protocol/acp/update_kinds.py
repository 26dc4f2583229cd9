"""The vocabulary of ACP `session/update`: the kinds an agent sends, and which of them do what.

An update's kind is its `sessionUpdate` field. Every module that reads updates names a kind through
`UpdateKind` and a group of kinds through the sets below, so a new kind is added here, then read
where it matters (rendering, the usage meter, the choices, forking), and an update of a kind we do
not know is passed over wherever it is read (docs/DESIGN.md, "Where to change what").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final


class UpdateKind:
    """ACP v1's `sessionUpdate` values, as the wire's strings: a namespace rather than an `enum`, since
    an update's kind is compared on the streaming hot path, where an enum member costs six times a
    string (`KNOWN` lists them all)."""

    USER_MESSAGE_CHUNK: Final = "user_message_chunk"  # a loaded session's history replayed
    AGENT_MESSAGE_CHUNK: Final = "agent_message_chunk"
    AGENT_THOUGHT_CHUNK: Final = "agent_thought_chunk"
    TOOL_CALL: Final = "tool_call"
    TOOL_CALL_UPDATE: Final = "tool_call_update"
    PLAN: Final = "plan"  # the agent's whole plan, each time
    AVAILABLE_COMMANDS_UPDATE: Final = "available_commands_update"
    CURRENT_MODE_UPDATE: Final = "current_mode_update"
    CONFIG_OPTION_UPDATE: Final = "config_option_update"
    CURRENT_MODEL_UPDATE: Final = "current_model_update"  # unstable in ACP v1: agents before config options
    SESSION_INFO_UPDATE: Final = "session_info_update"
    USAGE_UPDATE: Final = "usage_update"
    # The agent compacting its own context (ACP, for a client declaring `session.compaction`): its
    # progress and, once done, its summary; the summary also streams in chunks.
    COMPACTION_UPDATE: Final = "compaction_update"
    COMPACTION_SUMMARY_CHUNK: Final = "compaction_summary_chunk"


KNOWN = frozenset(value for name, value in vars(UpdateKind).items() if name.isupper())
# What the agent says in a prompt, text and thoughts: each carries the `messageId` a fork ends at.
MESSAGE_KINDS = frozenset({UpdateKind.AGENT_MESSAGE_CHUNK, UpdateKind.AGENT_THOUGHT_CHUNK})
# What changes a session's choices (its models, modes, effort: protocol/acp/agent_options.py).
CHOICE_KINDS = frozenset({UpdateKind.CONFIG_OPTION_UPDATE, UpdateKind.CURRENT_MODE_UPDATE, UpdateKind.CURRENT_MODEL_UPDATE})
# What an agent says of a session with no prompt running that is still kept: what changes the
# session's state (its choices, its context's usage, its commands: announced right after
# `session/new`). Anything else then is about a prompt that ended, or replays history, and is dropped.
BETWEEN_PROMPTS = CHOICE_KINDS | {UpdateKind.USAGE_UPDATE, UpdateKind.AVAILABLE_COMMANDS_UPDATE}


def kind_of(update: Mapping[str, Any]) -> Any:
    """The update's kind as it came (compare it with `UpdateKind`; a kind not in `KNOWN` is passed over where it is read)."""
    return update.get("sessionUpdate")
