"""Eliza as an ACP agent: in-process over a memory stream, or on stdio.

Besides talking like Weizenbaum's DOCTOR, it understands test commands, so every flow
of the bridge can be exercised without a model:

- `list tools from <server>` / `use tool <server>::<tool> with <json>`: real MCP calls to a
  server given in `session/new`; `use tools a::x with {..} and b::y with {..}` calls them at once (`then`: in turn);
- `run <command>`: asks permission (`session/request_permission`) and reports the outcome;
- `count slowly to <n>`: streams one number every quarter second, honouring `session/cancel`;
- `think about <text>`: a thought chunk, then a reply.
"""

from __future__ import annotations

import itertools
import logging
import re
import uuid
from typing import Any

import attrs
import trio

from actors.shared.peer import ConnectionClosed, Peer, Tracer
from actors.shared.version import version
from protocol.acp import schema as acp
from protocol.shared.jsonrpc import INVALID_PARAMS, RpcError
from symposium.eliza.engine import Eliza

log = logging.getLogger(__name__)

SLOW_TICK = 0.25

LIST_TOOLS = re.compile(r"^list tools from ([\w-]+)$", re.IGNORECASE)
USE_TOOL = re.compile(r"^use tool ([\w-]+)::([\w-]+) with (.+)$", re.IGNORECASE)
USE_TOOLS = re.compile(r"^use tools (.+)$", re.IGNORECASE)
RUN = re.compile(r"^run (.+)$", re.IGNORECASE)
SLOW = re.compile(r"^count slowly to (\d+)$", re.IGNORECASE)
THINK = re.compile(r"^think about (.+)$", re.IGNORECASE)

PERMISSION_OPTIONS = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


@attrs.define(eq=False)
class _Session:
    engine: Eliza
    mcp_servers: list[dict[str, Any]]
    prompt_scope: trio.CancelScope | None = None


class _Cancelled(Exception):
    pass


class ElizaServer:
    """The agent side of ACP, with Eliza behind it."""

    def __init__(self, peer: Peer, deterministic: bool) -> None:
        self.peer = peer
        self.deterministic = deterministic
        self.sessions: dict[str, _Session] = {}
        self._call_ids = itertools.count(1)
        peer.on_request("initialize", self.initialize)
        peer.on_request("session/new", self.new_session)
        peer.on_request("session/prompt", self.prompt)
        peer.on_notification("session/cancel", self.cancel)
        peer.on_request("session/close", self.close_session)

    async def initialize(self, params: Any, _id: Any) -> dict[str, Any]:
        return {
            "protocolVersion": acp.PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": False,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
                "mcpCapabilities": {"http": False, "sse": False},
                "sessionCapabilities": {"close": {}},
            },
            "authMethods": [],
            "agentInfo": {"name": "eliza", "title": "Eliza", "version": version()},
        }

    async def new_session(self, params: Any, _id: Any) -> dict[str, Any]:
        if not isinstance(params, dict) or not isinstance(params.get("cwd"), str):
            raise RpcError(INVALID_PARAMS, "Invalid params: cwd is required")
        servers = params.get("mcpServers") or []
        session_id = str(uuid.uuid4())
        self.sessions[session_id] = _Session(Eliza(seed=0 if self.deterministic else None), list(servers))
        return {"sessionId": session_id}

    async def cancel(self, params: Any) -> None:
        session = self.sessions.get(str(params.get("sessionId"))) if isinstance(params, dict) else None
        if session is not None and session.prompt_scope is not None:
            session.prompt_scope.cancel()

    async def close_session(self, params: Any, _id: Any) -> dict[str, Any]:
        """Forget a session: the client is done with it (a released conversation)."""
        session = self.sessions.pop(str(params.get("sessionId")), None) if isinstance(params, dict) else None
        if session is None:
            raise RpcError(INVALID_PARAMS, "Invalid params: unknown session")
        if session.prompt_scope is not None:
            session.prompt_scope.cancel()
        return {}

    async def prompt(self, params: Any, _id: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params")
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None or not isinstance(session_id, str):
            raise RpcError(INVALID_PARAMS, f"Invalid params: unknown session {session_id!r}")
        # Eliza answers the last thing said; earlier blocks are context she cannot use.
        texts = [block.get("text", "") for block in params.get("prompt") or [] if isinstance(block, dict) and block.get("type") == "text"]
        text = texts[-1].strip() if texts else ""
        with trio.CancelScope() as scope:
            session.prompt_scope = scope
            try:
                await self._respond(session_id, session, text)
            except _Cancelled:
                scope.cancel()
        session.prompt_scope = None
        return {"stopReason": "cancelled" if scope.cancelled_caught else "end_turn"}

    # Replies -------------------------------------------------------------------------------

    async def _update(self, session_id: str, update: dict[str, Any]) -> None:
        await self.peer.notify("session/update", {"sessionId": session_id, "update": update})

    async def _say(self, session_id: str, text: str, *, kind: str = "agent_message_chunk") -> None:
        """Stream `text` in a few chunks, as a model would."""
        words = text.split(" ")
        size = max(1, len(words) // 3 + (len(words) % 3 > 0))
        for start in range(0, len(words), size):
            chunk = " ".join(words[start : start + size])
            if start + size < len(words):
                chunk += " "
            await self._update(session_id, {"sessionUpdate": kind, "content": acp.text_block(chunk)})

    async def _respond(self, session_id: str, session: _Session, text: str) -> None:
        if match := LIST_TOOLS.match(text):
            from symposium.eliza.tools import list_tools

            await self._say(session_id, await list_tools(session.mcp_servers, match[1]))
        elif match := USE_TOOL.match(text):
            from symposium.eliza.tools import use_tool

            await self._say(session_id, await use_tool(session.mcp_servers, match[1], match[2], match[3]))
        elif match := USE_TOOLS.match(text):
            from symposium.eliza.tools import use_tools

            await self._say(session_id, await use_tools(session.mcp_servers, match[1]))
        elif match := RUN.match(text):
            await self._run_with_permission(session_id, match[1].strip())
        elif match := SLOW.match(text):
            for number in range(1, int(match[1]) + 1):
                await self._update(session_id, {"sessionUpdate": "agent_message_chunk", "content": acp.text_block(f"{number} ")})
                await trio.sleep(SLOW_TICK)
        elif match := THINK.match(text):
            await self._say(session_id, f"The user wants me to think about {match[1]}.", kind="agent_thought_chunk")
            await self._say(session_id, session.engine.respond(match[1]))
        else:
            await self._say(session_id, session.engine.respond(text))

    async def _run_with_permission(self, session_id: str, command: str) -> None:
        call_id = f"run-{next(self._call_ids)}"
        title = f"Run `{command}`"
        raw_input = {"command": command, "description": f"Eliza would like to run {command}"}
        await self._update(
            session_id,
            {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, "kind": "execute", "status": "pending", "rawInput": raw_input},
        )
        try:
            result = await self.peer.request(
                "session/request_permission",
                {
                    "sessionId": session_id,
                    "toolCall": {"toolCallId": call_id, "title": title, "kind": "execute", "rawInput": raw_input},
                    "options": PERMISSION_OPTIONS,
                },
            )
        except (RpcError, ConnectionClosed) as exc:
            log.info("permission request failed: %s", exc)
            raise _Cancelled from None
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            raise _Cancelled
        if outcome.get("optionId") in ("allow", "always"):
            await self._update(
                session_id,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call_id,
                    "status": "completed",
                    "content": [{"type": "content", "content": acp.text_block(f"(pretended to run {command})")}],
                },
            )
            await self._say(session_id, f"I ran `{command}`. How does that make you feel?")
        else:
            await self._update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed"})
            await self._say(session_id, f"You did not let me run `{command}`. Why do you think that is?")


async def serve_eliza(stream: trio.abc.Stream, deterministic: bool = False, tracer: Tracer | None = None) -> None:
    """Serve one ACP client on `stream` until it closes."""
    peer = Peer(stream, name="eliza", tracer=tracer)
    ElizaServer(peer, deterministic)
    await peer.serve()
