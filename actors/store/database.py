"""A small SQLite file used off the event loop: what the session store and the agent catalog share.

Another process may hold the file (a second backend, a backup tool, `sqlite3` in a terminal):
SQLite then waits for the lock, by default 5 s per statement, and a statement run on the event
loop stalled every conversation for that long. Here every statement runs on a thread: writes
on one writer thread of their own, fed by a bounded queue, so the caller never waits for them;
reads on trio's worker threads, awaited by the one caller that needs the answer. The busy
timeout is short (BUSY_TIMEOUT): a locked or broken store costs only what it stores (a save
dropped, a session not found), logged, never a stall of anything else.

Opening the file and its schema happens on the caller's thread (start-up), bounded by the
same timeout per statement.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from actors.shared import threads
from actors.store.private import private_file, private_folder

log = logging.getLogger(__name__)

BUSY_TIMEOUT = 0.2  # seconds a statement waits for another process's lock before it fails
MAX_QUEUED = 256  # writes waiting for the writer thread; more are dropped (the store is stuck)
CLOSE_TIMEOUT = 2.0  # at shutdown, how long queued writes are given to land

_STOP = object()
SIDE_FILES = ("-wal", "-shm", "-journal")  # what SQLite keeps beside a database, named after it


class Database:
    """One SQLite file: `write` queues a statement, `read` runs a query on a worker thread."""

    def __init__(self, path: Path | str, setup: Callable[[sqlite3.Connection], None], what: str) -> None:
        """Open `path` and run `setup` on it (the schema, migrations). Raises sqlite3.Error or
        OSError, the file then unused. `what`: what is lost when a write fails, for the log."""
        self._what = what
        # check_same_thread=False: the writer thread and trio's workers take turns, under _lock.
        self._db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT, check_same_thread=False)
        try:
            setup(self._db)
        except BaseException:
            self._db.close()
            raise
        self._lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue(MAX_QUEUED)
        self._writer = threading.Thread(target=self._write_all, name=f"sqlite {Path(path).name}", daemon=True)
        self._writer.start()

    def write(self, sql: str, params: tuple[Any, ...]) -> None:
        """Run a statement on the writer thread, in order; never waits. Dropped (and logged) when
        the queue is full: the file has been locked for a while, and waiting would stall the caller."""
        try:
            self._queue.put_nowait((sql, params))
        except queue.Full:
            log.warning("could not remember %s: the store is busy (%d writes waiting)", self._what, MAX_QUEUED)

    async def read(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        """The rows of a query, run on a worker thread. Raises sqlite3.Error (a lock held longer
        than BUSY_TIMEOUT, say). Sees every write queued before it only once those have landed;
        callers read what an earlier backend run wrote."""

        def run() -> list[Any]:
            with self._lock:
                return self._db.execute(sql, params).fetchall()

        return await threads.run_sync(run)

    def close(self) -> None:
        """Let queued writes land (bounded by CLOSE_TIMEOUT), then close the file."""
        try:
            self._queue.put(_STOP, timeout=CLOSE_TIMEOUT)
        except queue.Full:
            log.warning("closing the store with writes still waiting: they are lost")
        self._writer.join(CLOSE_TIMEOUT)
        if not self._writer.is_alive():
            self._db.close()

    def _write_all(self) -> None:
        while (item := self._queue.get()) is not _STOP:
            sql, params = item
            try:
                with self._lock:
                    self._db.execute(sql, params)
            except sqlite3.Error as exc:
                log.warning("could not remember %s: %s", self._what, exc)


def open_store(path: Path | str, setup: Callable[[sqlite3.Connection], None], what: str, *, unable: str) -> Database | None:
    """The store at `path` (its folder made 0700, the file 0600), or None when it cannot be
    opened, logged as `unable` (what the backend then does without): a locked or broken store
    costs what it would keep, never the backend. So does a store that is not the user's alone
    (a symbolic link, a FIFO, another user's file, in a folder others can write in:
    `actors/store/private.py`), which SQLite is never given to open."""
    try:
        private_folder(Path(path).parent, tighten=True)
        private_file(path)
        for side in SIDE_FILES:  # SQLite opens them by name: they must be ours too, when there
            private_file(f"{path}{side}", create=False)
        return Database(path, setup, what)
    except (sqlite3.Error, OSError, RuntimeError) as exc:  # RuntimeError: no thread to be had
        log.warning("%s: %s", unable, exc)
        return None
