"""An ACP agent that sends what no agent should, on command: the agent side of the robustness tests.

    python tests/support/misbehaving_agent.py [--die-at-start | --refuse-sessions]

Standard library only, raw line I/O. Prompts are commands:

- `emit <base64>`: write those bytes as one line (`{SID}` replaced by the session id and
  `{SECRET}` by $AGENT_SECRET), then answer the prompt normally ("emitted").
- `respond <base64>`: answer the prompt with that line instead, `{ID}` replaced by the prompt's
  request id, `{SID}` by the session id and `{SECRET}` by $AGENT_SECRET.
- `pid`: answer with its process id (to tell whether it is still the same process).
- `leak`: print $AGENT_SECRET on stderr (plainly and as `API_KEY=...`) and in the reply, and
  a key-shaped `INVENTED_KEY` it was never given on stderr.
- anything else: echo it.

On start it prints $AGENT_SECRET on stderr, as careless agents print their configuration;
with `--die-at-start` it then exits 3 before answering `initialize`. With `--refuse-sessions`
it refuses every `session/new`, quoting $AGENT_SECRET in its error.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import uuid
from typing import Any

INVENTED_KEY = "sk-ant-api03-Qm7vT2pXw9LcR4nYh8sKd3Fj6GbZ1eUa"


def write(data: bytes) -> None:
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def send(msg: dict[str, Any]) -> None:
    write(json.dumps({"jsonrpc": "2.0", **msg}).encode())


def say(session: str, text: str) -> None:
    send({"method": "session/update", "params": {"sessionId": session, "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})


def prompt(id: Any, session: str, text: str) -> None:
    command, _, argument = text.partition(" ")
    secret = os.environ.get("AGENT_SECRET", "")
    if command == "emit":
        write(base64.b64decode(argument).replace(b"{SID}", session.encode()).replace(b"{SECRET}", secret.encode()))
        say(session, "emitted")
    elif command == "respond":
        line = base64.b64decode(argument).replace(b"{ID}", json.dumps(id).encode()).replace(b"{SID}", session.encode())
        write(line.replace(b"{SECRET}", secret.encode()))
        return
    elif command == "pid":
        say(session, f"pid {os.getpid()}")
    elif command == "leak":
        print(f"debug: secret is {secret}; API_KEY={secret}", file=sys.stderr, flush=True)
        print(f"debug: found a key in ~/.config: {INVENTED_KEY}", file=sys.stderr, flush=True)
        say(session, f"the secret is {secret}")
    else:
        say(session, f"echo: {text}")
    send({"id": id, "result": {"stopReason": "end_turn"}})


def main() -> None:
    print(f"starting with AGENT_SECRET={os.environ.get('AGENT_SECRET', '')}", file=sys.stderr, flush=True)
    if "--die-at-start" in sys.argv:
        sys.exit(3)
    for line in sys.stdin:
        msg = json.loads(line)
        method, id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method == "initialize":
            send({"id": id, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new" and "--refuse-sessions" in sys.argv:
            send({"id": id, "error": {"code": -32000, "message": f"cannot open a session with {os.environ.get('AGENT_SECRET', '')}"}})
        elif method == "session/new":
            send({"id": id, "result": {"sessionId": str(uuid.uuid4())}})
        elif method == "session/prompt":
            prompt(id, params["sessionId"], " ".join(b.get("text", "") for b in params["prompt"]).strip())


if __name__ == "__main__":
    main()
