"""Which ACP session holds which conversation, kept in SQLite in the user's state folder.

After a backend restart, a request whose marker names a conversation this process does not
hold can then `session/load` the agent's own session (when the agent supports it) instead
of priming a new one with a transcript. Plain synchronous sqlite3: each call is one small
indexed statement, well under a millisecond.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

log = logging.getLogger(__name__)

SCHEMA = """
create table if not exists sessions (
    conversation text primary key,
    agent text not null,       -- the agent definition, canonical JSON: a session belongs to its agent
    session_id text not null,
    cwd text not null,
    updated real not null
)
"""


class SessionStore:
    def __init__(self, path: Path | str) -> None:
        self._db: sqlite3.Connection | None = None
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.execute(SCHEMA)
        except sqlite3.Error as exc:
            log.warning("not remembering agent sessions: %s", exc)
            self._db = None

    def save(self, conversation: str, agent: str, session_id: str, cwd: str) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(
                "insert or replace into sessions values (?, ?, ?, ?, ?)", (conversation, agent, session_id, cwd, time.time())
            )
        except sqlite3.Error as exc:
            log.warning("could not remember the session of conversation %s: %s", conversation, exc)

    def find(self, conversation: str, agent: str) -> tuple[str, str] | None:
        """(session id, cwd) of the conversation's session with this agent, if remembered."""
        if self._db is None:
            return None
        try:
            row = self._db.execute("select session_id, cwd from sessions where conversation = ? and agent = ?", (conversation, agent)).fetchone()
        except sqlite3.Error as exc:
            log.warning("could not look up the session of conversation %s: %s", conversation, exc)
            return None
        return (row[0], row[1]) if row else None
