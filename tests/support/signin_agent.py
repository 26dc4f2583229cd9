"""An ACP agent that wants a sign-in, offering every kind of ACP method: the agent side of the sign-in tests.

    python tests/support/signin_agent.py STATE [--login]

Standard library only. `STATE` is a file that holds "signed in" across its runs (as a real agent's
credentials file does). Its methods, declared only to a client that declares `auth.terminal`
(the terminal one) as Claude Code's adapter does:

- `key` (`env_var`, `SIGNIN_API_KEY`): `authenticate` succeeds when $SIGNIN_API_KEY is set;
- `login` (`terminal`, args `--login`, env `SIGNIN_BASE_URL` and `EDITOR`, which Symposium refuses):
  run as `signin_agent.py STATE --login`, it writes STATE and exits 0 (a terminal log-in, done); it
  prints on stdout what it was given, for the test;
- `browser` (agent-handled): `authenticate` signs in at once.

Until signed in (by `authenticate` on this connection, or STATE), `session/new` fails with ACP's
auth_required error, -32000 "Authentication required"; each `session/new` first pushes its
state (`_auth/status_update`, as Claude Code's adapter does: "Not logged in" or "Signed in"). `logout` (declared: `auth.logout`) removes
STATE and forgets the connection's sign-in. Prompts are echoed; a prompt `env NAME` is answered with
whether $NAME is set and to what, unless it is SIGNIN_API_KEY (`set` or `unset` only: the key is never
echoed). With $SIGNIN_HUGE_META set, each method carries a large `_meta` (about 800 KB in all), as a
real agent's once did.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any


def send(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
    sys.stdout.flush()


def main() -> None:
    state = Path(sys.argv[1])
    if "--login" in sys.argv[2:]:
        print(f"signing in: args {sys.argv[2:]}, SIGNIN_BASE_URL={os.environ.get('SIGNIN_BASE_URL')}, EDITOR={os.environ.get('EDITOR')}", flush=True)
        state.write_text("signed in")
        return
    signed_in = False
    for line in sys.stdin:
        msg = json.loads(line)
        method, id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method == "initialize":
            terminal = (params.get("clientCapabilities") or {}).get("auth", {}).get("terminal") is True
            methods: list[dict[str, Any]] = [
                {"type": "env_var", "id": "key", "name": "Use SIGNIN_API_KEY", "vars": [{"name": "SIGNIN_API_KEY"}]},
                *([{"type": "terminal", "id": "login", "name": "Log in", "description": "In a terminal", "args": ["--login"], "env": {"SIGNIN_BASE_URL": "terminal", "EDITOR": "/tmp/evil-editor"}}] if terminal else []),
                {"id": "browser", "name": "Log in with a browser", "description": "Handled by the agent"},
            ]
            if os.environ.get("SIGNIN_HUGE_META"):
                methods = [{**m, "_meta": {"blob": "x" * 270_000}} for m in methods]
            send({"id": id, "result": {"protocolVersion": 1, "agentCapabilities": {"auth": {"logout": {}}}, "authMethods": methods}})
        elif method == "authenticate":
            chosen = params.get("methodId")
            if (chosen == "key" and os.environ.get("SIGNIN_API_KEY")) or chosen == "browser":
                signed_in = True
                send({"id": id, "result": {}})
            else:
                send({"id": id, "error": {"code": -32000, "message": "Authentication required"}})
        elif method == "logout":
            signed_in = False
            state.unlink(missing_ok=True)
            send({"id": id, "result": {}})
        elif method == "session/new":
            label = "Signed in" if signed_in or state.exists() else "Not logged in"
            send({"method": "_auth/status_update", "params": {"authStatus": {"kind": "none" if label == "Not logged in" else "key", "label": label}}})
            if signed_in or state.exists():
                send({"id": id, "result": {"sessionId": str(uuid.uuid4())}})
            else:
                send({"id": id, "error": {"code": -32000, "message": "Authentication required"}})
        elif method == "session/prompt":
            text = " ".join(b.get("text", "") for b in params["prompt"]).strip()
            if text.startswith("env "):
                name = text[4:]
                value = os.environ.get(name)
                said = "unset" if value is None else "set" if name == "SIGNIN_API_KEY" else repr(value)
                text = f"{name} is {said}"
            update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"echo: {text}"}}
            send({"method": "session/update", "params": {"sessionId": params["sessionId"], "update": update}})
            send({"id": id, "result": {"stopReason": "end_turn"}})
        elif id is not None:
            send({"id": id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
