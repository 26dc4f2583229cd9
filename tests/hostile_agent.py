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


# Floods (bounded memory, backpressure: docs/DESIGN.md, "Reliability") -------------------------

FLOOD_CHUNK = 16 * 1024  # characters of text per agent_message_chunk a flood writes


def flood_text(size: int, chunk: int = FLOOD_CHUNK) -> list[str]:
    """The chunks of a flood of `size` characters: each starts `<i>`, so what arrives can be
    checked for loss and order however it was merged or split."""
    chunks, i, left = [], 0, size
    while left > 0:
        head = f"<{i}>"
        text = (head + "x" * max(0, chunk - len(head)))[:left]
        chunks.append(text)
        left -= len(text)
        i += 1
    return chunks


def flood(id: Any, session: str, argument: str) -> None:
    """`flood SIZE [CHUNK]`: SIZE characters of text in CHUNK-character chunks, then the end."""
    words = argument.split()
    for text in flood_text(int(words[0]), int(words[1]) if len(words) > 1 else FLOOD_CHUNK):
        say(session, text)
    end_turn(id)


def huge(id: Any, session: str, argument: str) -> None:
    """`huge SIZE`: one chunk of SIZE characters, on one line, then the end."""
    say(session, "h" * int(argument))
    end_turn(id)


def after(id: Any, session: str, argument: str) -> None:
    """`after SIZE FIFO`: end the turn ("before"), then SIZE characters more about it, while the
    chat is idle; once the backend has read all of it (it answered a request written after
    it), say "done" on the named pipe FIFO, for the test to go on."""
    size, fifo = argument.split()
    say(session, "before")
    end_turn(id)
    for text in flood_text(int(size)):
        say(session, text.replace("x", "s"))
    probe = "after-probe"
    send({"id": probe, "method": "fs/read_text_file", "params": {"sessionId": session, "path": "/nonexistent"}})
    for line in sys.stdin:  # the backend answers in order: everything before the probe was read
        if json.loads(line).get("id") == probe:
            break
    with open(fifo, "w") as done:
        done.write("done\n")


# Prompt commands: name -> handler(request id, session id, argument). A handler answers the prompt
# itself (or deliberately never does).
COMMANDS: dict[str, Callable[[Any, str, str], None]] = {
    "echo": echo,
    # floods
    "flood": flood,
    "huge": huge,
    "after": after,
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
            send({"id": id, "result": {"sessionId": str(uuid.uuid4())}})
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
