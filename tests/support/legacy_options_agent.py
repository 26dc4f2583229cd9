"""An ACP agent with the older way of offering choices, as Gemini CLI does: `modes` and `models`
in the `session/new` answer, `session/set_mode` and `session/set_model` to change them, and no
`session/set_config_option` (-32601), no usage reports, no session list.

    python tests/support/legacy_options_agent.py

Raw line I/O, stdlib only. Every reply says the mode and model its session is in, so a test
reads what reached the agent the way a user would: `[plan · gemini-pro] echo: hello`. The prompt
`leave plan mode` makes it leave plan mode by itself, as Claude Code does once its plan is approved.
"""

from __future__ import annotations

import json
import sys
import uuid
from typing import Any

MODES = [
    {"id": "default", "name": "Default", "description": "Asks before editing"},
    {"id": "plan", "name": "Plan", "description": "Read-only: plans first"},
    {"id": "yolo", "name": "YOLO", "description": "Acts without asking"},
]
MODELS = [
    {"modelId": "gemini-flash", "name": "Gemini Flash", "description": "Fast"},
    {"modelId": "gemini-pro", "name": "Gemini Pro", "description": "Capable"},
]


def send(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
    sys.stdout.flush()


def main() -> None:
    sessions: dict[str, dict[str, str]] = {}
    for line in sys.stdin:
        msg = json.loads(line)
        method, id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        session = sessions.get(params.get("sessionId", ""))
        if method == "initialize":
            send({"id": id, "result": {"protocolVersion": 1, "agentCapabilities": {"loadSession": False}}})
        elif method == "session/new":
            session_id = str(uuid.uuid4())
            sessions[session_id] = {"mode": "default", "model": "gemini-flash"}
            send({"id": id, "result": {
                "sessionId": session_id,
                "modes": {"currentModeId": "default", "availableModes": MODES},
                "models": {"currentModelId": "gemini-flash", "availableModels": MODELS},
            }})
        elif method == "session/set_mode" and session is not None and any(m["id"] == params.get("modeId") for m in MODES):
            session["mode"] = params["modeId"]
            send({"id": id, "result": {}})
            send({"method": "session/update", "params": {"sessionId": params["sessionId"], "update": {"sessionUpdate": "current_mode_update", "currentModeId": params["modeId"]}}})
        elif method == "session/set_model" and session is not None and any(m["modelId"] == params.get("modelId") for m in MODELS):
            session["model"] = params["modelId"]
            send({"id": id, "result": {}})
        elif method == "session/prompt" and session is not None:
            text = " ".join(b.get("text", "") for b in params["prompt"] if b.get("type") == "text").strip()
            if text == "leave plan mode" and session["mode"] == "plan":
                session["mode"] = "default"
                send({"method": "session/update", "params": {"sessionId": params["sessionId"], "update": {"sessionUpdate": "current_mode_update", "currentModeId": "default"}}})
            reply = f"[{session['mode']} · {session['model']}] echo: {text}"
            send({"method": "session/update", "params": {"sessionId": params["sessionId"], "update": {
                "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": reply}}}})
            send({"id": id, "result": {"stopReason": "end_turn"}})
        elif id is not None:
            send({"id": id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
