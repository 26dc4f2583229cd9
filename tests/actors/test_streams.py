"""The in-memory stream Eliza speaks ACP on (actors/shared/memory_streams.py): a long message is read in place.

A large tool result reaches Eliza as one long message; reading it 64 KiB at a time once copied the
rest of the message at every read (time quadratic in its size: 50 MiB took 106 s). Counted here by
memory, not time: a read that copies the rest holds a second copy of it at its peak.
"""

from __future__ import annotations

import tracemalloc

from actors.shared.memory_streams import memory_stream_pair

SIZE = 16 * 1024 * 1024
READ = 64 * 1024


async def test_a_long_message_is_read_in_pieces_without_copying_the_rest() -> None:
    ours, theirs = memory_stream_pair()
    message = bytes(SIZE)
    await ours.send_all(message)
    tracemalloc.start()
    try:
        received = 0
        while received < SIZE:
            received += len(await theirs.receive_some(READ))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert received == SIZE
    assert peak < SIZE // 4, f"reading held {peak:,} bytes at its peak for a {SIZE:,}-byte message"
