"""The stdio MCP server an agent starts for `vscode_tools`: a relay back to the backend.

    python -m symposium.mcp_relay --port PORT        (token in $SYMPOSIUM_RELAY_TOKEN)

Every ACP agent must support stdio MCP servers, so this is the transport that always works.
It connects to the conversation's ToolBridge on 127.0.0.1, presents the conversation's
token on the first line, then copies bytes both ways. Standard library only, so it starts
in tens of milliseconds. stdin EOF half-closes the socket and waits for the backend to
finish; a refused connection exits 1 (the agent sees the server fail).
"""

from __future__ import annotations

import os
import socket
import sys
import threading

TOKEN_ENV = "SYMPOSIUM_RELAY_TOKEN"


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
    if len(argv) != 2 or argv[0] != "--port" or not argv[1].isdigit():
        print("usage: python -m symposium.mcp_relay --port PORT", file=sys.stderr)
        return 2
    token = os.environ.get(TOKEN_ENV, "")
    try:
        sock = socket.create_connection(("127.0.0.1", int(argv[1])))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(token.encode() + b"\n")
    except OSError as exc:
        print(f"symposium mcp relay: cannot reach the backend on port {argv[1]}: {exc}", file=sys.stderr)
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
