"""Knobs of the actor system, set from the command line (`symposium vscodelm --help`)."""

from __future__ import annotations

import attrs


@attrs.frozen
class Settings:
    agent_idle: float = 600.0  # stop an agent no session has used for this long (seconds)
    cancel_timeout: float = 10.0  # how long a cancelled prompt may take to report its stop reason
    forward_system: bool = False  # send VS Code's system messages to the agent (they usually fight its own)
