"""Continuing an agent's earlier session (one started in its own terminal UI) in a new chat.

"Symposium: Continue an Agent Session" lists the agent's sessions (`session/list`); each comes
with a token naming it (the agent, the session, its folder). The extension opens a new chat
whose first exchange carries the chosen session's token in its answer; the conversation that
begins with that exchange resumes the agent's session (`session/resume` or `session/load`)
instead of starting a new one. Tokens are authenticated with the backend's key, so text from
elsewhere cannot make a conversation take over another session, and they name the agent
definition, so one agent's token does nothing for another.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Iterable

from protocol.vscode.lm import Message

PREFIX = "symposium-continue:"
_TOKEN = re.compile(r"symposium-continue:([A-Za-z0-9_-]{1,2048})\.([A-Za-z0-9_-]{22})")


def _mac(key: bytes, agent: str, payload: str) -> str:
    digest = hmac.new(key, b"continue\0" + agent.encode() + b"\0" + payload.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode()[:22]


def encode(key: bytes, agent: str, session_id: str, cwd: str) -> str:
    """The token for the agent's (`agent_process.agent_key`) session `session_id` in folder `cwd`."""
    payload = base64.urlsafe_b64encode(json.dumps([session_id, cwd]).encode()).decode().rstrip("=")
    return f"{PREFIX}{payload}.{_mac(key, agent, payload)}"


def decode(key: bytes, agent: str, text: str) -> tuple[str, str] | None:
    """(session id, folder) of the first valid token for this agent in `text`."""
    for match in _TOKEN.finditer(text):
        payload, mac = match[1], match[2]
        if not hmac.compare_digest(_mac(key, agent, payload), mac):
            continue
        try:
            session_id, cwd = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except (binascii.Error, ValueError, TypeError):
            continue
        if isinstance(session_id, str) and isinstance(cwd, str):
            return session_id, cwd
    return None


def continued(key: bytes, agent: str, messages: Iterable[Message]) -> tuple[str, str] | None:
    """The session a conversation's opening exchange names, if one of its answers carries a token."""
    for message in messages:
        if message.role == "assistant" and PREFIX in (text := message.text()) and (found := decode(key, agent, text)) is not None:
            return found
    return None
