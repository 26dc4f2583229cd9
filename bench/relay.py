"""Relay start-up: spawn `python -m symposium.mcp_relay` until the backend side has its token line.

A plain Unix socket listener in a private folder stands in for the ToolBridge, and a 0600 key
file beside it holds the token, as `actors/bridge/endpoint.py` makes them (where there are no Unix
sockets, 127.0.0.1). Each run times from just before the spawn until the listener has accepted
the relay's connection and read the token line. Interleaved with the same listener and a
`python -c` that only reads the key, connects and sends a line (the interpreter's own floor), so
a busy machine slows both alike, and with the relay
started as the ToolBridge could start it: `python -I -S .../mcp_relay.py` (it is stdlib only,
and `site` with the editable install's import hook is most of the interpreter's start-up).
Also: the echo round trip of one line through a connected relay (stdin → socket → back →
stdout), the relay's share of every bridged MCP message.
"""

from __future__ import annotations

import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from actors.bridge import endpoint as bridge_socket
from symposium import mcp_relay

RUNS = 15
ECHOES = 200
TIMEOUT = 10.0
FLOOR = (
    "import socket, sys; key = open(sys.argv[4], 'rb').read().strip(); "
    "s = socket.socket(socket.AF_UNIX) if sys.argv[1] == '--socket' else socket.socket(); "
    "s.connect(sys.argv[2] if sys.argv[1] == '--socket' else ('127.0.0.1', int(sys.argv[2]))); "
    "s.sendall(key + b'\\n'); s.recv(1)"
)


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            raise RuntimeError(f"the relay closed the connection before its token line ({data!r})")
        data += chunk
    return data


def _start(listener: socket.socket, argv: list[str], token: str) -> tuple[float, subprocess.Popen[bytes], socket.socket]:
    """Spawn, accept, read the token line: (seconds, the process, the accepted connection)."""
    start = time.perf_counter()
    # An agent starts its MCP servers in its own working directory, not ours.
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tempfile.gettempdir())
    conn, _ = listener.accept()
    line = _read_line(conn)
    elapsed = time.perf_counter() - start
    if line.split(b"\n")[0] != token.encode():
        raise RuntimeError(f"wrong token line {line!r}")
    return elapsed, process, conn


def _stop(process: subprocess.Popen[bytes], conn: socket.socket) -> None:
    conn.close()
    assert process.stdin is not None and process.stdout is not None
    process.stdin.close()
    try:
        process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    process.stdout.close()


def _echo_round_trip(process: subprocess.Popen[bytes], conn: socket.socket) -> list[float]:
    """One line at a time: relay stdin → socket (we echo it) → relay stdout."""
    assert process.stdin is not None and process.stdout is not None
    if conn.family != getattr(socket, "AF_UNIX", None):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}\n'
    timings = []
    for _ in range(ECHOES):
        start = time.perf_counter()
        process.stdin.write(line)
        process.stdin.flush()
        conn.sendall(_read_line(conn))
        echoed = process.stdout.readline()
        timings.append(time.perf_counter() - start)
        assert echoed == line, echoed
    return timings


def measure() -> dict[str, Any]:
    unix = bridge_socket.UNIX_SOCKETS
    folder = bridge_socket.private_folder(unix)
    try:
        if unix:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(os.path.join(folder, bridge_socket.SOCKET_NAME))
            listener.listen()
            where = ["--socket", listener.getsockname()]
        else:
            listener = socket.create_server(("127.0.0.1", 0))
            where = ["--port", str(listener.getsockname()[1])]
        with listener:
            listener.settimeout(TIMEOUT)
            return _measure(listener, folder, where)
    finally:
        bridge_socket.remove_folder(folder)


def _measure(listener: socket.socket, folder: str, where: list[str]) -> dict[str, Any]:
    relay: list[float] = []
    floor: list[float] = []
    isolated: list[float] = []
    echo: list[float] = []

    def commands(token: str) -> tuple[list[str], list[str], list[str]]:
        args = [*where, "--key", bridge_socket.write_key(folder, token)]
        return (
            [sys.executable, "-m", "symposium.mcp_relay", *args],
            [sys.executable, "-c", FLOOR, *args],
            [sys.executable, "-I", "-S", mcp_relay.__file__, *args],
        )

    _stop(*_start(listener, commands("warm")[0], "warm")[1:])  # the file cache
    for run in range(RUNS):
        token = secrets.token_urlsafe(32)
        relay_argv, floor_argv, isolated_argv = commands(token)
        variants = [(relay_argv, relay), (floor_argv, floor), (isolated_argv, isolated)]
        for argv, timings in variants[run % 3 :] + variants[: run % 3]:
            elapsed, process, conn = _start(listener, argv, token)
            timings.append(elapsed)
            if argv is relay_argv and run == 0:
                echo = _echo_round_trip(process, conn)
            _stop(process, conn)
    echo.sort()
    return {
        "relay_ms": statistics.median(relay) * 1000,
        "floor_ms": statistics.median(floor) * 1000,
        "isolated_ms": statistics.median(isolated) * 1000,
        "echo_p50_ms": statistics.median(echo) * 1000,
        "echo_p99_ms": echo[int(len(echo) * 0.99) - 1] * 1000,
    }


if __name__ == "__main__":
    print(measure())
