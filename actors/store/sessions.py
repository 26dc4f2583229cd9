"""Which ACP session holds which conversation, kept in SQLite in the user's state folder.

After a backend restart, a request whose marker names a conversation this process does not
hold can then `session/load` the agent's own session (when the agent supports it) instead
of priming a new one with a transcript. Each call is one small indexed statement, run off the
event loop (`actors/store/database.py`): a save is queued to a writer thread, a lookup awaited on a
worker thread, each waiting at most BUSY_TIMEOUT for another process's lock. Writes use a
write-ahead log and `synchronous = normal`: in the default rollback mode every commit waits for
fsyncs (6 ms typical, 24 ms seen). A crash may then lose the last saves, which costs a
transcript instead of a `session/load`.

Beside each session, the conversation's last turn handed to it: after a restart, a
marker older than that turn must not resume the session past it (`protocol/turn/opening.py`
`opening_after_restart`; docs/DESIGN.md, "Identity and markers"). Files written before it have no such
column: it is added, empty (unknown), and unknown resumes as before. And per turn whose prompt
ended, its fork point (`fork_points`: the session and the message the agent's turn ended with), so
such a marker goes on in a fork of the session at its own turn where the agent can
(`protocol/turn/opening.py`); a turn handed anew (after a fork, the numbers go on from the marker's)
drops the points of its number and later, which named another branch.

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

from actors.store.database import Database, open_store
from protocol.history.forking import ForkPoint

log = logging.getLogger(__name__)

SCHEMA = """
create table if not exists sessions (
    conversation text primary key,
    agent text not null,       -- a keyed digest of the agent definition: a session belongs to its agent
    session_id text not null,
    cwd text not null,
    updated real not null,
    turn integer               -- the last turn handed to the session (markers' numbering); null: unknown
)
"""
FORK_POINTS = """
create table if not exists fork_points (
    conversation text not null,
    turn integer not null,      -- markers' numbering
    session_id text not null,
    message_id text not null,   -- the last message the agent's turn ended with (ACP messageId)
    primary key (conversation, turn)
)
"""
VERSION = 1  # 0: `agent` held the definition itself, env values included


class SessionStore:
    def __init__(self, path: Path | str, key: bytes) -> None:
        """`key`: the digests are keyed, so a guessable env value cannot be confirmed by
        hashing candidate definitions."""
        self._key = key
        self._db: Database | None = None
        self._db = open_store(path, self._setup, "an agent session", unable="not remembering agent sessions")

    def _setup(self, db: sqlite3.Connection) -> None:
        db.execute("pragma secure_delete = on")  # what is replaced or deleted is overwritten
        db.execute(SCHEMA)
        db.execute(FORK_POINTS)
        if "turn" not in {row[1] for row in db.execute("pragma table_info(sessions)")}:
            db.execute("alter table sessions add column turn integer")  # a file of an earlier version: unknown turns
        self._migrate(db)
        try:  # after the migration, whose `vacuum` must rewrite the main file, not a log beside it
            db.execute("pragma journal_mode = wal")
            db.execute("pragma synchronous = normal")
        except sqlite3.Error as exc:  # e.g. another backend holds the file: slower saves, same answers
            log.info("agent sessions saved without a write-ahead log: %s", exc)

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Replace definitions stored by earlier versions with their digests, and purge them."""
        (version,) = db.execute("pragma user_version").fetchone()
        if version >= VERSION:
            return
        rows = db.execute("select conversation, agent from sessions").fetchall()
        db.execute("begin")
        for conversation, agent in rows:
            db.execute("update sessions set agent = ? where conversation = ?", (self.digest(agent), conversation))
        db.execute(f"pragma user_version = {VERSION}")
        db.execute("commit")
        if rows:
            db.execute("vacuum")  # rewrite the file: no old page keeps a definition
            log.info("replaced %d stored agent definitions with their digests", len(rows))

    def digest(self, agent: str) -> str:
        """What is stored for an agent definition (its canonical JSON)."""
        return hmac.new(self._key, b"agent\0" + agent.encode(), hashlib.sha256).hexdigest()

    def save(self, conversation: str, agent: str, session_id: str, cwd: str) -> None:
        """Remember the conversation's session (its last turn not yet known); returns at
        once (the write is queued)."""
        if self._db is not None:
            self._db.write(
                "insert or replace into sessions (conversation, agent, session_id, cwd, updated, turn) values (?, ?, ?, ?, ?, null)",
                (conversation, self.digest(agent), session_id, cwd, time.time()),
            )

    def handed(self, conversation: str, session_id: str, turn: int) -> None:
        """The session was handed the conversation's turn `turn` (markers' numbering); queued."""
        if self._db is not None:
            self._db.write("update sessions set turn = ?, updated = ? where conversation = ? and session_id = ?", (turn, time.time(), conversation, session_id))
            self._db.write("delete from fork_points where conversation = ? and turn >= ?", (conversation, turn))

    def left(self, conversation: str, turn: int, point: ForkPoint) -> None:
        """The conversation's turn `turn` left its session at `point` (protocol/history/forking.py); queued."""
        if self._db is not None:
            self._db.write(
                "insert or replace into fork_points (conversation, turn, session_id, message_id) values (?, ?, ?, ?)",
                (conversation, turn, point.session_id, point.message_id),
            )

    async def fork_point(self, conversation: str, turn: int) -> ForkPoint | None:
        """Where the conversation's session can be forked to go on after turn `turn`, if saved."""
        if self._db is None:
            return None
        try:
            rows = await self._db.read("select session_id, message_id from fork_points where conversation = ? and turn = ?", (conversation, turn))
        except (sqlite3.Error, RuntimeError) as exc:
            log.warning("could not look up a fork point of conversation %s: %s", conversation, exc)
            return None
        return ForkPoint(rows[0][0], rows[0][1]) if rows else None

    async def find(self, conversation: str, agent: str) -> tuple[str, str, int | None] | None:
        """(session id, cwd, last turn prompted or None if unknown) of the conversation's
        session with this agent, if remembered."""
        if self._db is None:
            return None
        try:
            rows = await self._db.read("select session_id, cwd, turn from sessions where conversation = ? and agent = ?", (conversation, self.digest(agent)))
        except (sqlite3.Error, RuntimeError) as exc:  # RuntimeError: no thread to be had
            log.warning("could not look up the session of conversation %s: %s", conversation, exc)
            return None
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None

    def close(self) -> None:
        """Let queued saves land, then close the file."""
        if self._db is not None:
            self._db.close()
            self._db = None
