"""An ACP agent that attacks the backend on command: the agent side of the hostile-agent wire tests.

    python tests/hostile_agent.py [FLAG ...]

Standard library only, raw line I/O, so it can do what no well-behaved ACP library would: floods,
silence, stray answers, descendants, descriptor exhaustion. Two ways to steer it:

- start-up flags (`FLAGS`): how it answers the backend's own requests (`initialize`, `session/new`,
  ...), e.g. never at all;
- prompts: the first word of a prompt's text names a command in `COMMANDS`, the rest is its
  argument; anything else is echoed ("echo: ...") and the turn ends normally.

Each behaviour family adds its own entries to `FLAGS` and `COMMANDS`; see docs/DESIGN.md,
"Reliability", for what the backend promises against each.
"""

from __future__ import annotations

import json
import socket
import sys
import uuid
from typing import Any, Callable

Send = Callable[[dict[str, Any]], None]


def write(data: bytes) -> None:
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def send(msg: dict[str, Any]) -> None:
    write(json.dumps({"jsonrpc": "2.0", **msg}).encode())


def say(session: str, text: str) -> None:
    send({"method": "session/update", "params": {"sessionId": session, "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})


def end_turn(id: Any) -> None:
    send({"id": id, "result": {"stopReason": "end_turn"}})


def echo(id: Any, session: str, argument: str) -> None:
    say(session, f"echo: {argument}")
    end_turn(id)


# Resource exhaustion (issue 21, "no agent can starve another") ---------------------------------

# session id -> (port, token) of its conversation's vscode_tools bridge, from `session/new`.
BRIDGES: dict[str, tuple[int, str]] = {}
HELD: list[socket.socket] = []  # connections kept open for the agent's lifetime


def connect_flood(id: Any, session: str, argument: str) -> None:
    """Open up to N connections to our own bridge with our own token and keep them; report how
    many the backend serves (it answers MCP `initialize`) and how many it closes."""
    port, token = BRIDGES[session]
    served = closed = 0
    for n in range(int(argument or "2000")):
        try:
            sock = socket.create_connection(("127.0.0.1", port))
        except OSError:  # our own descriptors ran out
            break
        request = {"jsonrpc": "2.0", "id": n, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "0"}}}
        sock.sendall(token.encode() + b"\n" + json.dumps(request).encode() + b"\n")
        if sock.makefile("rb").readline():
            served += 1
            HELD.append(sock)
        else:
            closed += 1
            sock.close()
    say(session, f"served {served} closed {closed}")
    end_turn(id)


def stderr_flood(id: Any, session: str, argument: str) -> None:
    """Write N stderr lines (each naming our secret env value, `api_key=` style; N=0: endlessly), end with a
    last line saying how many, then exit: the turn fails with the stderr tail."""
    import os

    secret = os.environ.get("HOSTILE_SECRET", "")
    line = f"working... api_key={secret} token {secret}\n".encode()
    n = int(argument or "100000")  # 0: until stderr closes (the bench's flood)
    try:
        while n == 0:
            sys.stderr.buffer.write(line * 1000)
    except (BrokenPipeError, OSError):
        os._exit(0)
    for _ in range(n // 1000):
        sys.stderr.buffer.write(line * 1000)
    sys.stderr.buffer.write(f"wrote {n} lines; giving up {secret}\n".encode())
    sys.stderr.buffer.flush()
    os._exit(3)


# Prompt commands: name -> handler(request id, session id, argument). A handler answers the prompt
# itself (or deliberately never does).
COMMANDS: dict[str, Callable[[Any, str, str], None]] = {
    "echo": echo,
    "connect_flood": connect_flood,
    "stderr_flood": stderr_flood,
}

# Start-up flags: flag -> the methods it leaves unanswered (the backend's deadlines are tested
# with these). Families add their own.
SILENT_ON: dict[str, frozenset[str]] = {}


def main() -> None:
    silent = frozenset().union(*(SILENT_ON.get(flag, frozenset()) for flag in sys.argv[1:]))
    for line in sys.stdin:
        msg = json.loads(line)
        method, id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method in silent:
            continue
        if method == "initialize":
            send({"id": id, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            session = str(uuid.uuid4())
            for server in params.get("mcpServers") or []:
                if "--port" in server.get("args", []):
                    args, env = server["args"], server.get("env") or [{}]
                    BRIDGES[session] = (int(args[args.index("--port") + 1]), env[0].get("value", ""))
            send({"id": id, "result": {"sessionId": session}})
        elif method == "session/prompt":
            text = " ".join(b.get("text", "") for b in params["prompt"]).strip()
            command, _, argument = text.partition(" ")
            handler = COMMANDS.get(command)
            if handler is None:
                echo(id, params["sessionId"], text)
            else:
                handler(id, params["sessionId"], argument)
        elif id is not None and method is not None:
            send({"id": id, "error": {"code": -32601, "message": f"not supported: {method}"}})


if __name__ == "__main__":
    main()
