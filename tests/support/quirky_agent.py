"""An ACP agent with the quirks real agents have, scripted by the prompt text.

    python tests/support/quirky_agent.py [--refuse-init]

Raw line I/O (no library), so it can do what libraries would not: permission requests
with string UUID ids and a tool call id never announced ("pending", as fast-agent sends),
request ids from 0, `_`-prefixed and `$/cancel_request` notifications, unknown update
kinds, calls to client methods we do not offer, and a prompt that ignores session/cancel.
"""

from __future__ import annotations

import json
import sys
import uuid
from typing import Any


def send(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
    sys.stdout.flush()


def read() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def wait_response(id: Any) -> dict[str, Any]:
    while (msg := read()) is not None:
        if msg.get("id") == id and "method" not in msg:
            return msg
    raise SystemExit(0)


def say(session: str, text: str) -> None:
    send({"method": "session/update", "params": {"sessionId": session, "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}})


def prompt(id: Any, session: str, text: str) -> None:
    if text == "permission":
        request_id = str(uuid.uuid4())
        send({"id": request_id, "method": "session/request_permission", "params": {
            "sessionId": session,
            "toolCall": {"toolCallId": "pending", "title": "Edit config.toml", "kind": "edit"},
            "options": [{"optionId": "denied", "name": "No", "kind": "reject_once"}, {"optionId": "approved", "name": "Yes", "kind": "allow_once"}],
        }})
        say(session, "outcome: " + json.dumps(wait_response(request_id).get("result", {}).get("outcome"), sort_keys=True))
    elif text == "fs":
        send({"id": 0, "method": "fs/read_text_file", "params": {"sessionId": session, "path": "/etc/hostname"}})
        say(session, f"fs: error {wait_response(0).get('error', {}).get('code')}")
    elif text == "withdraw":
        send({"id": "w1", "method": "session/request_permission", "params": {
            "sessionId": session, "toolCall": {"toolCallId": "t9"}, "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]}})
        send({"method": "$/cancel_request", "params": {"requestId": "w1"}})
        say(session, f"withdrawn: {wait_response('w1').get('error', {}).get('code')}")
    elif text == "noise":
        send({"method": "_zed/notice", "params": {"hello": True}})
        send({"method": "$/cancel_request", "params": {"requestId": "nobody"}})
        send({"method": "session/update", "params": {"sessionId": session, "update": {"sessionUpdate": "brand_new_kind", "x": 1}}})
        send({"method": "session/update", "params": {"sessionId": session, "update": {"sessionUpdate": "usage_update", "used": 10, "size": 100}}})
        say(session, "noise ok")
    elif text == "stubborn":
        say(session, "working")
        return  # never answers, and ignores session/cancel
    else:
        say(session, f"echo: {text}")
    send({"id": id, "result": {"stopReason": "end_turn"}})


def main() -> None:
    refuse = "--refuse-init" in sys.argv
    loads = "--load" in sys.argv  # advertises and serves session/load (replaying a line of history)
    while (msg := read()) is not None:
        method, id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method == "initialize":
            if refuse:
                send({"id": id, "error": {"code": -32000, "message": "Authentication required"}})
            else:
                send({"id": id, "result": {"protocolVersion": 1, "agentCapabilities": {"loadSession": loads}}})
        elif method == "session/new":
            send({"id": id, "result": {"sessionId": str(uuid.uuid4())}})
        elif method == "session/load" and loads:
            say(params["sessionId"], "(replayed history)")
            send({"id": id, "result": {}})
        elif method == "session/prompt":
            prompt(id, params["sessionId"], " ".join(b.get("text", "") for b in params["prompt"]).strip())


if __name__ == "__main__":
    main()
