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


# Prompt commands: name -> handler(request id, session id, argument). A handler answers the prompt
# itself (or deliberately never does).
COMMANDS: dict[str, Callable[[Any, str, str], None]] = {
    "echo": echo,
}

# Start-up flags: flag -> the methods it leaves unanswered (the backend's deadlines are tested
# with these). Families add their own.
SILENT_ON: dict[str, frozenset[str]] = {}


# -- Family: unbounded metadata (tests/test_metadata.py) -------------------------------------------
#
# Flag "metadata": everything the agent names is hostile. `initialize` offers session/list (and
# resume) and sign-in methods with such names; `session/new` offers MANY_MODELS models (and modes)
# named with HOSTILE (the first in full, the others its first 200 characters), two with ids that
# would need cleaning; `session/list` lists sessions titled with it, one with an id that would.

HOSTILE = "\u202eevil\u202c \x1b[31mred\x1b[0m\r\nnext line\u2066 \u200bhidden\U000e0041 " + "x" * 10_000
MANY_MODELS = 20_000


def metadata_capabilities(flags: list[str]) -> dict[str, Any]:
    return {"sessionCapabilities": {"list": {}, "resume": {}}} if "metadata" in flags else {}


def metadata_initialize(flags: list[str]) -> dict[str, Any]:
    if "metadata" not in flags:
        return {}
    return {
        "agentInfo": {"name": HOSTILE, "title": HOSTILE, "version": "1.0\u202e"},
        "authMethods": [{"id": "login", "name": HOSTILE, "description": HOSTILE}, {"id": "bad\u202eid", "name": "x"}],
    }


def metadata_new_session(flags: list[str]) -> dict[str, Any]:
    if "metadata" not in flags:
        return {}
    models = [{"modelId": f"model-{i}", "name": f"{HOSTILE[:200]} {i}", "description": f"\u202eModel\x1b[0m {i}"} for i in range(MANY_MODELS)]
    models[0]["name"] = models[0]["description"] = HOSTILE
    models[:0] = [{"modelId": "spoof\u202egpj.exe", "name": "spoofed id"}, {"modelId": "y" * 10_000, "name": "long id"}]
    modes = [{"id": "default", "name": HOSTILE}, {"id": "plan", "name": "\x07Plan\x1b[2J"}]
    return {
        "models": {"availableModels": models, "currentModelId": "model-0"},
        "modes": {"availableModes": modes, "currentModeId": "default"},
        "configOptions": [{"id": "effort", "name": HOSTILE, "category": "thought_level", "type": "select", "currentValue": "low", "options": [{"value": "low", "name": HOSTILE}]}],
    }


def metadata_answer(flags: list[str], method: str, id: Any, params: dict[str, Any]) -> bool:
    """session/list for the "metadata" flag; False for anything else."""
    if "metadata" not in flags or method != "session/list":
        return False
    cwd = params.get("cwd") or "/"
    sessions = [{"sessionId": f"s-{i}", "cwd": cwd, "title": f"{HOSTILE} {i}", "updatedAt": "2026-11-25T10:00:00Z\u202e"} for i in range(3)]
    sessions.append({"sessionId": "s\u202eX", "cwd": cwd, "title": "spoofed id"})
    send({"id": id, "result": {"sessions": sessions}})
    return True


# -- End of family: unbounded metadata ---------------------------------------------------------------


def main() -> None:
    flags = sys.argv[1:]
    silent = frozenset().union(*(SILENT_ON.get(flag, frozenset()) for flag in flags))
    for line in sys.stdin:
        msg = json.loads(line)
        method, id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method in silent:
            continue
        if method == "initialize":
            send({"id": id, "result": {"protocolVersion": 1, "agentCapabilities": metadata_capabilities(flags), **metadata_initialize(flags)}})
        elif method == "session/new":
            send({"id": id, "result": {"sessionId": str(uuid.uuid4()), **metadata_new_session(flags)}})
        elif metadata_answer(flags, method, id, params):
            pass
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
