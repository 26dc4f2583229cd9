"""Where agents reach the tool bridges, and how a bridge's secret reaches its relay: this user's alone.

See "Tool bridge" in `docs/DESIGN.md`. Everything lives in one private folder per backend, made by
`tempfile.mkdtemp` (0700, a name nobody can predict, created exclusively: nobody can make it first
or put anything in it), under `$XDG_RUNTIME_DIR` when that is the user's own private folder, else in
the temporary folder:

- where the platform has Unix sockets, the listener is the socket `bridge` in that folder. No other
  user can reach it (the folder is 0700), and every connection's peer credentials are read as it is
  accepted (`SO_PEERCRED` on Linux, `LOCAL_PEERCRED` on macOS and FreeBSD): a process of another
  uid is closed unread. Where neither can be read, the folder alone keeps others out;
- elsewhere (Windows: Python has no `AF_UNIX` there) a loopback TCP port, any local process can
  connect to, and the bridge's secret is the only proof;
- each bridge's secret is a file in the folder (`write_key`: 0600, created exclusively, never
  following a link). The relay's command line names the file, never its content: the command line
  and environment of the agent's processes are readable by other local users (`/proc/<pid>/cmdline`;
  Claude Code's SDK puts an MCP server's `env` on its CLI's command line).

The folder is removed when the listener closes; a backend that was killed leaves it behind
(`$XDG_RUNTIME_DIR` is emptied at logout), holding secrets of bridges that no longer exist.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import stat
import struct
import sys
import tempfile

import attrs
import trio

from actors.shared.platform import windows
from actors.store.private import open_private

log = logging.getLogger(__name__)

UNIX_SOCKETS = hasattr(socket, "AF_UNIX") and not windows()  # the default transport; False: loopback TCP (the fallback)
SOCKET_NAME = "bridge"
KEY_PREFIX = "key-"
# A Unix socket's path must fit `sun_path` (104 bytes on macOS, 108 on Linux, its NUL included).
MAX_SOCKET_PATH = 100
BACKLOG = 128  # connections the kernel keeps waiting to be accepted (MAX_HANDSHAKES are read at once)


@attrs.frozen
class Endpoint:
    """Where a relay connects: a Unix socket's path, or a port on 127.0.0.1."""

    socket_path: str | None = None
    port: int | None = None

    def args(self) -> list[str]:
        """The relay's arguments naming it (`symposium/mcp_relay.py`)."""
        return ["--socket", self.socket_path] if self.socket_path is not None else ["--port", str(self.port)]


def _own_private_folder(path: str) -> bool:
    """A folder (not a link to one) of this user's that nobody else may enter."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o077


def private_folder(unix: bool) -> str:
    """A new folder only this user can enter, with a name nobody can predict. Raises OSError."""
    parents: list[str | None] = []
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if not windows() and os.path.isabs(runtime) and _own_private_folder(runtime):
        parents.append(runtime)
    parents.append(None)  # tempfile's choice: $TMPDIR, else /tmp
    if not windows():
        parents.append("/tmp")  # a $TMPDIR too deep for a socket's path
    for parent in parents:
        base = parent if parent is not None else tempfile.gettempdir()
        if unix and len(os.path.join(base, "symposium-12345678", SOCKET_NAME)) > MAX_SOCKET_PATH:
            continue
        folder = tempfile.mkdtemp(prefix="symposium-", dir=parent)
        if not windows() and not _own_private_folder(folder):
            # mkdir(0o700) cannot make it anything else; refuse rather than trust what we cannot explain.
            with contextlib.suppress(OSError):
                os.rmdir(folder)
            raise OSError(f"the folder {folder} is not private after it was made")
        return folder
    raise OSError("no temporary folder whose path is short enough for a Unix socket")


async def open_listener(folder: str, unix: bool) -> tuple[trio.SocketListener, Endpoint]:
    """The listener every bridge is reached through: the Unix socket `bridge` in `folder`, or a
    port on 127.0.0.1 when `unix` is False. Raises OSError."""
    if not unix:
        [listener] = await trio.open_tcp_listeners(0, host="127.0.0.1")
        return listener, Endpoint(port=listener.socket.getsockname()[1])
    path = os.path.join(folder, SOCKET_NAME)
    # Bound here, not with trio's `bind`, which walks the path in a thread: making one entry in a
    # folder of ours is as quick as the key files written beside it.
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        os.chmod(path, 0o600)  # the folder keeps others out already; this says the same
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(trio.socket.from_stdlib_socket(sock)), Endpoint(socket_path=path)


def peer_uid(sock: trio.socket.SocketType) -> int | None:
    """The uid of the process at the other end of a Unix socket, as it was when it connected;
    None where the platform offers no way to read it. Raises OSError."""
    if sys.platform.startswith("linux"):
        _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        return uid
    if sys.platform == "darwin" or sys.platform.startswith("freebsd"):
        # getpeereid(3) reads this: struct xucred {u_int cr_version; uid_t cr_uid; short
        # cr_ngroups; gid_t cr_groups[16]}, at level SOL_LOCAL (0), option LOCAL_PEERCRED (1).
        data = sock.getsockopt(0, getattr(socket, "LOCAL_PEERCRED", 1), 76)
        version, uid = struct.unpack_from("=II", data)
        if version != 0:  # XUCRED_VERSION
            raise OSError(f"unknown peer credentials version {version}")
        return uid
    return None


_unchecked_said = False


def refusal(stream: trio.SocketStream) -> str | None:
    """Why a connection is closed before anything is read from it, or None to read its secret."""
    global _unchecked_said
    if stream.socket.family != getattr(socket, "AF_UNIX", None):
        return None  # the loopback fallback: the secret is the only proof
    try:
        uid = peer_uid(stream.socket)
    except OSError as exc:
        return f"cannot read its peer credentials ({exc.strerror or exc})"
    if uid is None:
        if not _unchecked_said:
            _unchecked_said = True
            log.info("vscode_tools: peer credentials cannot be read on %s; the private folder alone keeps other users out", sys.platform)
        return None
    if uid != os.geteuid():
        return f"it comes from uid {uid}, not this user's"
    return None


def write_key(folder: str, token: str) -> str:
    """A bridge's secret as a new 0600 file in `folder`, named at random: its path. Raises OSError."""
    path = os.path.join(folder, KEY_PREFIX + secrets.token_hex(8))
    file = open_private(path, "w", new=True)  # O_EXCL|O_NOFOLLOW, 0600 whatever the umask
    try:
        with file:
            file.write(token + "\n")
    except BaseException:
        remove(path)  # ours: it was created just now
        raise
    return path


def remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def remove_folder(folder: str) -> None:
    """The folder, with the socket and the keys left in it (nothing else is ever put there)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            if name == SOCKET_NAME or name.startswith(KEY_PREFIX):
                remove(os.path.join(folder, name))
        os.rmdir(folder)
