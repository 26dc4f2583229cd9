"""The backend's stdin and stdout as one trio stream.

Where trio has a stream over a pipe's file descriptor (`trio.lowlevel.FdStream`, POSIX), that;
where it has none (Windows: trio offers no async stdio there), `ThreadSendStream` and
`ThreadReceiveStream`, whose writes and reads run in worker threads. Either way on duplicated
descriptors, so Python's own stay usable.
"""

from __future__ import annotations

import os

import trio

from actors.shared import threads
from actors.shared.platform import ON_WINDOWS, windows

PIPE_SIZE = 1 << 20  # Linux's default ceiling for an unprivileged process
READ_SIZE = 1 << 16


def _binary(fd: int) -> None:
    """Bytes as they are on Windows: no \\r\\n translation (msvcrt exists there only)."""
    if ON_WINDOWS:
        import msvcrt

        msvcrt.setmode(fd, os.O_BINARY)  # type: ignore[attr-defined,unused-ignore]  # Windows only


class ThreadReceiveStream(trio.abc.ReceiveStream):
    """Reads a file descriptor in a worker thread.

    A blocked read cannot be interrupted: when cancelled, or when `aclose` runs during one, the
    read is abandoned, its thread left blocked until input comes or the process ends, and the
    descriptor left open for it.
    """

    def __init__(self, fd: int) -> None:
        _binary(fd)
        self._fd = fd
        self._reading: trio.CancelScope | None = None
        self._closed = False

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._closed:
            raise trio.ClosedResourceError("the stream is closed")
        if self._reading is not None:
            raise trio.BusyResourceError("another task is reading")
        with trio.CancelScope() as self._reading:
            try:
                return await threads.run_sync(os.read, self._fd, max_bytes or READ_SIZE, abandon_on_cancel=True)
            except OSError as exc:
                raise trio.BrokenResourceError(str(exc)) from exc
            finally:
                self._reading = None
        raise trio.ClosedResourceError("the stream was closed while reading")  # `aclose` cancelled the read

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self._reading is not None:
                self._reading.cancel()  # its thread keeps the descriptor; the process ends soon
            else:
                os.close(self._fd)
        await trio.lowlevel.checkpoint()


class ThreadSendStream(trio.abc.SendStream):
    """Writes a file descriptor in a worker thread; a write abandoned part way (cancelled) breaks
    the stream, since what would follow it is garbage to the reader."""

    def __init__(self, fd: int) -> None:
        _binary(fd)
        self._fd = fd
        self._closed = False
        self._broken = False
        self._lock = trio.StrictFIFOLock()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._closed:
            raise trio.ClosedResourceError("the stream is closed")
        if self._lock.locked():
            raise trio.BusyResourceError("another task is writing")
        async with self._lock:
            if self._broken:
                raise trio.BrokenResourceError("an earlier write was abandoned")
            view = memoryview(data).cast("B")
            try:
                while view:
                    written = await threads.run_sync(os.write, self._fd, view, abandon_on_cancel=True)
                    view = view[written:]
            except trio.Cancelled:
                self._broken = True
                raise
            except OSError as exc:
                self._broken = True
                raise trio.BrokenResourceError(str(exc)) from exc

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if not self._broken:  # else an abandoned write's thread may still be using it
                os.close(self._fd)
        await trio.lowlevel.checkpoint()


def stdio_stream() -> trio.StapledStream[trio.abc.SendStream, trio.abc.ReceiveStream]:
    """Our stdin/stdout as one trio stream: `send_stream` writes stdout, `receive_stream` reads stdin.

    A chat request carries the whole conversation (hundreds of KiB in a long one): with room
    for all of it in the stdin pipe, the writer hands it over at once, and we wake once to
    read it rather than at every 64 KiB of the default pipe."""
    if windows() or not hasattr(trio.lowlevel, "FdStream"):
        return trio.StapledStream(ThreadSendStream(os.dup(1)), ThreadReceiveStream(os.dup(0)))
    try:
        import fcntl

        fcntl.fcntl(0, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (ImportError, OSError, AttributeError):  # not a pipe, beyond the system's limit, or not Linux
        pass
    return trio.StapledStream(trio.lowlevel.FdStream(os.dup(1)), trio.lowlevel.FdStream(os.dup(0)))
