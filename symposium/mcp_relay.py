"""The stdio MCP server an agent starts for `vscode_tools`: a relay back to the backend.

    python -I -S .../mcp_relay.py --socket PATH --key FILE
    python -I -S .../mcp_relay.py --port PORT --key FILE      (where there are no Unix sockets)

Every ACP agent must support stdio MCP servers, so this is the transport that always works.
It reads its conversation's secret from FILE (a private file of the backend's: the secret is
never on a command line or in an environment, which other local users can read), connects to
the backend's bridge listener (a Unix socket in the backend's private folder, or 127.0.0.1),
presents the secret on the first line, then copies bytes both ways. Standard library only, so
it starts in tens of milliseconds. stdin EOF half-closes the socket and waits for the backend to
finish; a refused connection or an unreadable key exits 1 (the agent sees the server fail).
See "Tool bridge" in docs/DESIGN.md.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import threading

USAGE = "usage: mcp_relay.py (--socket PATH | --port PORT) --key FILE"
MAX_KEY = 1024


class RelayError(Exception):
    """Why the relay cannot reach the backend (the message names no secret)."""


def parse(argv: list[str]) -> dict[str, str] | None:
    """`--socket` or `--port`, and `--key`, as given; None when they are not right."""
    if len(argv) != 4:
        return None
    options = dict(zip(argv[::2], argv[1::2], strict=False))
    if set(options) not in ({"--socket", "--key"}, {"--port", "--key"}):
        return None
    if "--port" in options and not options["--port"].isdigit():
        return None
    return options


def read_key(path: str) -> bytes:
    """The secret in `path`, which must be a private file of this user's. Raises RelayError."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RelayError(f"cannot read the key file {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise RelayError(f"the key file {path} is not a regular file")
        if os.name == "posix" and (info.st_uid != os.geteuid() or info.st_mode & 0o077):
            raise RelayError(f"the key file {path} is not this user's alone")
        key = os.read(descriptor, MAX_KEY).strip()
    finally:
        os.close(descriptor)
    if not key or b"\n" in key:
        raise RelayError(f"the key file {path} holds no key")
    return key


def open_bridge(options: dict[str, str]) -> socket.socket:
    """Connect to the backend and present the secret: the connected socket. Raises RelayError."""
    key = read_key(options["--key"])
    where = options.get("--socket") or f"port {options.get('--port')}"
    try:
        if "--socket" in options:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(options["--socket"])
            except BaseException:
                sock.close()
                raise
        else:
            sock = socket.create_connection(("127.0.0.1", int(options["--port"])))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(key + b"\n")
    except OSError as exc:
        raise RelayError(f"cannot reach the backend at {where}: {exc.strerror or exc}") from None
    return sock


def _stdin_to_socket(sock: socket.socket) -> None:
    fd = sys.stdin.fileno()
    try:
        while data := os.read(fd, 65536):
            sock.sendall(data)
    except OSError:
        pass
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    options = parse(argv)
    if options is None:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        sock = open_bridge(options)
    except RelayError as exc:
        print(f"symposium mcp relay: {exc}", file=sys.stderr)
        return 1
    threading.Thread(target=_stdin_to_socket, args=(sock,), daemon=True).start()
    out = sys.stdout.fileno()
    try:
        while data := sock.recv(65536):
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    # os._exit: the stdin thread may still be blocked in a read.
    os._exit(main(sys.argv[1:]))
