"""Work handed to a worker thread, counted while it runs.

Every blocking call of the backend goes through `run_sync` (trio's `to_thread.run_sync`) so that
`working()` says whether one is under way. The replay (`symposium/replay.py`, docs/wire-protocol.md,
"Transcripts and replay") runs the backend on a virtual clock: a thread still working means the
backend has not finished with what it was sent, however long the machine takes, so virtual time
must not jump then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import attrs
import trio

T = TypeVar("T")


@attrs.define
class _Working:
    count: int = 0


_WORKING = _Working()


def working() -> int:
    """How many calls are on a worker thread (or waiting for one) now."""
    return _WORKING.count


async def run_sync(fn: Callable[..., T], *args: object, limiter: trio.CapacityLimiter | None = None, abandon_on_cancel: bool = False) -> T:
    """`fn(*args)` on a worker thread, counted by `working()` until it returns (or is abandoned)."""
    _WORKING.count += 1
    try:
        return await trio.to_thread.run_sync(fn, *args, limiter=limiter, abandon_on_cancel=abandon_on_cancel)
    finally:
        _WORKING.count -= 1
