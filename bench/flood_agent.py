"""A scripted ACP agent for the streaming benchmarks: raw stdio, no library, as fast as Python goes.

    python bench/flood_agent.py

Prompts (anything after the command, e.g. `flood 20000 #3`, only makes the first message unique):

- `flood N`: N small `agent_message_chunk`s written as fast as possible, then `end_turn`.
  Each chunk's text is `c<i>;`: count the `;` to count chunks, however they were merged.
  `flood N ids`: the same, each chunk naming its message (`messageId`), as Claude Code's adapter streams.
- `pace N MS`: N chunks, one every MS milliseconds; each chunk's text is `<time.monotonic()>;`,
  taken just before the chunk is written (CLOCK_MONOTONIC: comparable across processes).
- `bulk SIZE`: SIZE characters of text in `BULK_CHUNK`-character chunks (`bulk_chunks`), as fast
  as the backend reads them: the soak's flood, read slowly at the VS Code side.
- anything else: one chunk `echo: <text>`.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

OUT = sys.stdout.buffer  # block-buffered on a pipe: a flood goes out in 8 KiB writes


def send(msg: dict[str, Any]) -> None:
    OUT.write(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")
    OUT.flush()


def _chunk_line(session: str, message_id: str | None = None) -> tuple[bytes, bytes]:
    """The bytes of a text chunk before and after its text (the text needs no escaping)."""
    update: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "@"}}
    if message_id is not None:
        update["messageId"] = message_id
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})
    head, tail = line.split('"@"')
    return (head + '"').encode(), ('"' + tail + "\n").encode()


def flood(session: str, n: int, message_id: str | None = None) -> None:
    head, tail = _chunk_line(session, message_id)
    write = OUT.write
    for i in range(n):
        write(head + b"c%d;" % i + tail)
    OUT.flush()


BULK_CHUNK = 16 * 1024


def bulk_chunks(size: int) -> Iterator[str]:
    """The chunks of `bulk SIZE`: each begins `<i>`, so a digest of what arrives shows loss and order."""
    i, left = 0, size
    while left > 0:
        head = f"<{i}>"
        text = (head + "x" * (BULK_CHUNK - len(head)))[:left]
        yield text
        left -= len(text)
        i += 1


def bulk(session: str, size: int) -> None:
    head, tail = _chunk_line(session)
    for text in bulk_chunks(size):
        OUT.write(head + text.encode() + tail)
    OUT.flush()


def pace(session: str, n: int, interval_ms: float) -> None:
    head, tail = _chunk_line(session)
    interval = interval_ms / 1000
    due = time.monotonic()
    for _ in range(n):
        due += interval
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        OUT.write(head + repr(time.monotonic()).encode() + b";" + tail)
        OUT.flush()


def prompt(id: Any, session: str, text: str) -> None:
    words = text.split()
    if len(words) >= 2 and words[0] == "flood" and words[1].isdigit():
        flood(session, int(words[1]), f"msg_{uuid.uuid4().hex}" if words[2:3] == ["ids"] else None)
    elif len(words) >= 2 and words[0] == "bulk" and words[1].isdigit():
        bulk(session, int(words[1]))
    elif len(words) >= 3 and words[0] == "pace" and words[1].isdigit():
        pace(session, int(words[1]), float(words[2]))
    else:
        head, tail = _chunk_line(session)
        OUT.write(head + json.dumps(f"echo: {text}")[1:-1].encode() + tail)
    send({"id": id, "result": {"stopReason": "end_turn"}})


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        method, id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method == "initialize":
            send({"id": id, "result": {"protocolVersion": 1, "agentCapabilities": {"loadSession": False}}})
        elif method == "session/new":
            send({"id": id, "result": {"sessionId": str(uuid.uuid4())}})
        elif method == "session/prompt":
            texts = [b.get("text", "") for b in params["prompt"] if b.get("type") == "text"]
            prompt(id, params["sessionId"], texts[-1].strip() if texts else "")
        elif id is not None and method is not None:
            send({"id": id, "error": {"code": -32601, "message": f"method not found: {method}"}})


if __name__ == "__main__":
    main()
