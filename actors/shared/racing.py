"""Waiting for whichever of several things happens first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio


async def race(*contenders: Callable[[], Awaitable[object]]) -> None:
    """Run `contenders` together; the first to return cancels the others.

    What a contender found, it keeps itself (in a `nonlocal`): an exception escaping one would
    leave the nursery wrapped in an exception group, so a contender that can fail catches it.
    """
    async with trio.open_nursery() as nursery:
        for contender in contenders:
            nursery.start_soon(_first_wins, contender, nursery.cancel_scope)


async def _first_wins(contender: Callable[[], Awaitable[object]], everyone: trio.CancelScope) -> None:
    await contender()
    everyone.cancel()
