"""An in-memory byte stream pair, for running an ACP agent in-process.

`trio.testing.memory_stream_pair` would do, but importing `trio.testing` pulls in pytest
(about 90 ms), which has no place on the backend's start-up path.
"""

from __future__ import annotations

import trio


class ChannelStream(trio.abc.HalfCloseableStream):
    """One end of a pair: bytes sent here are received at the other end, in order."""

    def __init__(self, send: trio.MemorySendChannel[bytes], receive: trio.MemoryReceiveChannel[bytes]) -> None:
        self._send = send
        self._receive = receive
        self._pending = memoryview(b"")  # what the last message still holds, read in place

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if data:
            await self._send.send(bytes(data))

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if not self._pending:
            try:
                message = await self._receive.receive()
            except (trio.EndOfChannel, trio.BrokenResourceError):
                return b""
            if max_bytes is None or len(message) <= max_bytes:
                return message
            self._pending = memoryview(message)
        else:
            await trio.lowlevel.checkpoint()
        # A view, not `bytes[size:]`: slicing off the rest would copy it at every read, and a
        # 50 MiB message read 64 KiB at a time would cost time quadratic in its size.
        size = len(self._pending) if max_bytes is None else max_bytes
        chunk, self._pending = self._pending[:size], self._pending[size:]
        return bytes(chunk)

    async def send_eof(self) -> None:
        self._send.close()
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        self._send.close()
        self._receive.close()
        await trio.lowlevel.checkpoint()


def memory_stream_pair(buffer: int = 64) -> tuple[ChannelStream, ChannelStream]:
    a_send, b_receive = trio.open_memory_channel[bytes](buffer)
    b_send, a_receive = trio.open_memory_channel[bytes](buffer)
    return ChannelStream(a_send, a_receive), ChannelStream(b_send, b_receive)
