"""Relay start-up: spawn `python -m symposium.mcp_relay` until the backend side has its token line.

A plain socket listener on 127.0.0.1 stands in for the ToolBridge. Each run times from just
before the spawn until the listener has accepted the relay's connection and read the token
line. Interleaved with the same listener and a `python -c` that only connects and sends a
line (the interpreter's own floor), so a busy machine slows both alike, and with the relay
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

from symposium import mcp_relay
from symposium.mcp_relay import TOKEN_ENV

RUNS = 15
ECHOES = 200
TIMEOUT = 10.0
FLOOR = "import os, socket, sys; s = socket.create_connection(('127.0.0.1', int(sys.argv[1]))); s.sendall(os.environ['{env}'].encode() + b'\\n'); s.recv(1)"


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
    env = {**os.environ, TOKEN_ENV: token}
    start = time.perf_counter()
    # An agent starts its MCP servers in its own working directory, not ours.
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=tempfile.gettempdir())
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
    relay: list[float] = []
    floor: list[float] = []
    isolated: list[float] = []
    echo: list[float] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(TIMEOUT)
        port = str(listener.getsockname()[1])
        relay_argv = [sys.executable, "-m", "symposium.mcp_relay", "--port", port]
        floor_argv = [sys.executable, "-c", FLOOR.format(env=TOKEN_ENV), port]
        isolated_argv = [sys.executable, "-I", "-S", mcp_relay.__file__, "--port", port]
        _stop(*_start(listener, relay_argv, "warm")[1:])  # the file cache
        for run in range(RUNS):
            token = secrets.token_urlsafe(32)
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
