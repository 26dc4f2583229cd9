"""Which ACP session holds which conversation, kept in SQLite in the user's state folder.

After a backend restart, a request whose marker names a conversation this process does not
hold can then `session/load` the agent's own session (when the agent supports it) instead
of priming a new one with a transcript. Plain synchronous sqlite3: each call is one small
indexed statement, well under a millisecond. That holds for writes only with a write-ahead log
and `synchronous = normal`: in the default rollback mode every commit waits for fsyncs (6 ms
typical, 24 ms seen), and a new conversation saves its session before its first prompt. A
crash may then lose the last saves, which costs a transcript instead of a `session/load`.

The agent a session belongs to is kept as a keyed digest of its definition, never the
definition itself: definitions carry environment values (API keys). The file is 0600.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import sqlite3
import time
from pathlib import Path

from protocol.private import private_file, private_folder

log = logging.getLogger(__name__)

SCHEMA = """
create table if not exists sessions (
    conversation text primary key,
    agent text not null,       -- a keyed digest of the agent definition: a session belongs to its agent
    session_id text not null,
    cwd text not null,
    updated real not null
)
"""
VERSION = 1  # 0: `agent` held the definition itself, env values included


class SessionStore:
    def __init__(self, path: Path | str, key: bytes) -> None:
        """`key`: the digests are keyed, so a guessable env value cannot be confirmed by
        hashing candidate definitions."""
        self._key = key
        self._db: sqlite3.Connection | None = None
        try:
            private_folder(Path(path).parent, tighten=True)
            private_file(path)
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.execute("pragma secure_delete = on")  # what is replaced or deleted is overwritten
            self._db.execute(SCHEMA)
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            log.warning("not remembering agent sessions: %s", exc)
            self._db = None
            return
        try:  # after the migration, whose `vacuum` must rewrite the main file, not a log beside it
            self._db.execute("pragma journal_mode = wal")
            self._db.execute("pragma synchronous = normal")
        except sqlite3.Error as exc:  # e.g. another backend holds the file: slower saves, same answers
            log.info("agent sessions saved without a write-ahead log: %s", exc)

    def _migrate(self) -> None:
        """Replace definitions stored by earlier versions with their digests, and purge them."""
        assert self._db is not None
        (version,) = self._db.execute("pragma user_version").fetchone()
        if version >= VERSION:
            return
        rows = self._db.execute("select conversation, agent from sessions").fetchall()
        self._db.execute("begin")
        for conversation, agent in rows:
            self._db.execute("update sessions set agent = ? where conversation = ?", (self.digest(agent), conversation))
        self._db.execute(f"pragma user_version = {VERSION}")
        self._db.execute("commit")
        if rows:
            self._db.execute("vacuum")  # rewrite the file: no old page keeps a definition
            log.info("replaced %d stored agent definitions with their digests", len(rows))

    def digest(self, agent: str) -> str:
        """What is stored for an agent definition (its canonical JSON)."""
        return hmac.new(self._key, b"agent\0" + agent.encode(), hashlib.sha256).hexdigest()

    def save(self, conversation: str, agent: str, session_id: str, cwd: str) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(
                "insert or replace into sessions values (?, ?, ?, ?, ?)", (conversation, self.digest(agent), session_id, cwd, time.time())
            )
        except sqlite3.Error as exc:
            log.warning("could not remember the session of conversation %s: %s", conversation, exc)

    def find(self, conversation: str, agent: str) -> tuple[str, str] | None:
        """(session id, cwd) of the conversation's session with this agent, if remembered."""
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "select session_id, cwd from sessions where conversation = ? and agent = ?", (conversation, self.digest(agent))
            ).fetchone()
        except sqlite3.Error as exc:
            log.warning("could not look up the session of conversation %s: %s", conversation, exc)
            return None
        return (row[0], row[1]) if row else None
