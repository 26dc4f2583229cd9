"""Knobs of the actor system, set from the command line (`symposium vscodelm --help`)."""

from __future__ import annotations

import attrs

MAX_CONVERSATIONS = 256


@attrs.frozen
class Settings:
    agent_idle: float = 600.0  # stop an agent no session has used for this long (seconds)
    cancel_timeout: float = 10.0  # how long a cancelled prompt may take to report its stop reason
    # How long an agent may take to answer a request other than a prompt (session/new, load,
    # resume, list, setting an option) before the turn fails: generous, since Claude Code's
    # session/new alone takes seconds and loading a long session more.
    agent_timeout: float = 120.0
    forward_system: bool = False  # send VS Code's system messages to the agent (they usually fight its own)
    max_conversations: int = MAX_CONVERSATIONS  # live conversations beyond this are released, least recently used first
    conversation_idle: float = 1800.0  # a conversation unused this long (seconds) is released
