"""`symposium vscodelm`: the backend the VS Code extension talks to (DESIGN §3).

A thin shell: it parses requests, hands chat requests to the History actor and turns the
replies History routes back into `lm/responsePart` / `lm/responseComplete` / a response.
"""

from __future__ import annotations

import logging
import math
import os
from typing import Any

import trio

from actors.agent_process import AgentError, AgentPool, Connector
from actors.history import CancelRequest, ChatRequest, HistoryActor
from actors.markers import MarkerCodec, load_secret, state_dir
from actors.messages import Reply
from actors.rendering import merge_parts
from actors.session_store import SessionStore
from actors.settings import Settings
from actors.warm import Spares
from actors.tool_bridge import BridgeListener
from protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, Peer, RpcError, id_key
from protocol.transcript import Recorder
from protocol.lm import (
    METHOD_CANCEL,
    METHOD_CHAT,
    METHOD_COMPLETE,
    METHOD_INFO,
    METHOD_PART,
    METHOD_PREPARE,
    METHOD_TOKENS,
    CancelParams,
    Capabilities,
    ChatParams,
    InfoParams,
    ModelInfo,
    PrepareParams,
    TokenCountParams,
    parse,
    parse_info,
    part_to_wire,
    to_wire,
)
from protocol.wire import WireError

log = logging.getLogger(__name__)

METHOD_STATS = "symposium/stats"  # diagnostics for benchmarks and tests; the extension never calls it
ELIZA_MODEL_ID = "symposium-eliza"
FAMILY = "symposium"
VERSION = "0.1.0"
CONTEXT_TOKENS = 200_000


def _model(id: str, name: str, detail: str) -> ModelInfo:
    return ModelInfo(
        id=id,
        name=name,
        family=FAMILY,
        version=VERSION,
        max_input_tokens=CONTEXT_TOKENS,
        max_output_tokens=CONTEXT_TOKENS,
        capabilities=Capabilities(tool_calling=True),
        detail=detail,
    )


def model_infos(params: InfoParams) -> list[ModelInfo]:
    """The built-in Eliza, then one model per configured agent."""
    models = [_model(ELIZA_MODEL_ID, "Eliza (Symposium)", "built-in ACP agent")]
    models += [_model(e.id, f"{e.name} (ACP)", "ACP agent") for e in params.agents if e.id != ELIZA_MODEL_ID]
    return models


def token_count(text: str) -> int:
    """A cheap estimate (about four bytes a token); agents do their own accounting."""
    return max(1, math.ceil(len(text.encode()) / 4))


def _params(value: Any, cl: type) -> Any:
    try:
        return parse(value, cl)
    except WireError as exc:
        raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None


def _waiting(replies: trio.MemoryReceiveChannel[Reply]) -> list[Reply]:
    """The replies already queued, up to and including an end (complete or error)."""
    batch: list[Reply] = []
    while True:
        try:
            reply = replies.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel):
            return batch
        batch.append(reply)
        if reply.part is None:
            return batch


def task_count() -> int:
    """Every trio task of this run: a leak of actors or connections shows here first."""
    count, stack = 0, [trio.lowlevel.current_root_task()]
    while stack:
        task = stack.pop()
        count += 1
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return count


class Backend:
    """Wires a VS Code-side Peer to the History actor."""

    def __init__(self, peer: Peer, history: HistoryActor, bridges: BridgeListener, spares: Spares | None = None) -> None:
        self.peer = peer
        self.history = history
        self.bridges = bridges
        self.spares = spares
        self._submitted: set[str] = set()  # chat requests handed to History, by id key
        peer.on_request(METHOD_STATS, self.stats)
        peer.on_request(METHOD_INFO, self.provide_information)
        peer.on_request(METHOD_PREPARE, self.prepare_model)
        peer.on_request(METHOD_TOKENS, self.provide_token_count)
        peer.on_request(METHOD_CHAT, self.provide_response)
        peer.on_notification(METHOD_CANCEL, self.cancel)

    async def provide_information(self, params: Any, _id: Any) -> dict[str, Any]:
        try:
            info, problems = parse_info(params)
        except WireError as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        for problem in problems:
            log.warning("agent left out of the model list: %s", problem)
        return {"models": [to_wire(m) for m in model_infos(info)]}

    async def prepare_model(self, params: Any, _id: Any) -> dict[str, Any]:
        """Start the model's agent and keep a session ready for its next new conversation.

        Answers once that session is ready: `ready` false (with the agent's `error`) when the
        agent started but would not open one, e.g. until the user signs in. `authMethods` and
        `agentInfo` are what the agent said in `initialize`. An agent that cannot start at all
        is an error, as for a chat request.
        """
        prepare = _params(params, PrepareParams)
        if prepare.cwd is not None and not os.path.isdir(prepare.cwd):
            raise RpcError(INVALID_PARAMS, f"Invalid params: cwd: no such folder: {prepare.cwd}")
        if self.spares is None:
            raise RpcError(INTERNAL_ERROR, "Internal error: this backend keeps no agents warm")
        try:
            process, failure = await self.spares.prepare(prepare.agent, prepare.cwd)
        except AgentError as exc:
            raise exc.error from None
        result: dict[str, Any] = {
            "ready": failure is None,
            "authMethods": process.initialized.get("authMethods") or [],
            "agentInfo": process.initialized.get("agentInfo"),
        }
        if failure is not None:
            result["error"] = failure.error.message
        return result

    async def stats(self, _params: Any, _id: Any) -> dict[str, int]:
        """What the backend holds: a soak reads it before and after to see that nothing grew."""
        return {
            "conversations": self.history.conversations,
            "maxConversations": self.history.max_conversations,
            "bridges": len(self.bridges),
            "tasks": task_count(),
        }

    async def provide_token_count(self, params: Any, _id: Any) -> dict[str, Any]:
        return {"count": token_count(_params(params, TokenCountParams).text)}

    async def provide_response(self, params: Any, request_id: Any) -> dict[str, Any]:
        # An lm/cancel read right after the request (in the same chunk, say) runs before this
        # handler does; this checkpoint is where that cancel takes effect, before any turn starts.
        await trio.lowlevel.checkpoint()
        chat = _params(params, ChatParams)
        if chat.cwd is not None and not os.path.isdir(chat.cwd):
            problem = "not a folder" if os.path.exists(chat.cwd) else "no such folder"
            raise RpcError(INVALID_PARAMS, f"Invalid params: cwd: {problem}: {chat.cwd}")
        try:
            return await self._respond(chat, request_id)
        finally:
            if self.spares is not None:
                self.spares.settled(chat.agent, chat.cwd)

    async def _respond(self, chat: ChatParams, request_id: Any) -> dict[str, Any]:
        send, replies = trio.open_memory_channel[Reply](math.inf)
        self.history.mailbox.send_nowait(ChatRequest(request_id, chat, send))
        self._submitted.add(id_key(request_id))
        try:
            return await self._stream(request_id, replies)
        finally:
            self._submitted.discard(id_key(request_id))

    async def _stream(self, request_id: Any, replies: trio.MemoryReceiveChannel[Reply]) -> dict[str, Any]:
        async for reply in replies:
            batch = [reply, *_waiting(replies)]  # what queued up meanwhile goes out in one write
            parts = merge_parts(r.part for r in batch if r.part is not None)
            notifications = [(METHOD_PART, {"requestId": request_id, "part": part_to_wire(p)}) for p in parts]
            end = batch[-1]
            if end.complete:
                notifications.append((METHOD_COMPLETE, {"requestId": request_id}))
            await self.peer.notify_many(notifications)
            if end.complete:
                return {}
            if end.error is not None:
                raise end.error
        raise RpcError(INTERNAL_ERROR, "Internal error: the request ended without an answer")

    async def cancel(self, params: Any) -> None:
        try:
            request_id = parse(params, CancelParams).request_id
        except WireError as exc:
            log.warning("ignored lm/cancel with bad params: %s", exc)
            return
        if id_key(request_id) in self._submitted:
            self.history.mailbox.send_nowait(CancelRequest(request_id))  # History answers it -32800
        else:
            self.peer.cancel_inbound(request_id)  # not started yet: it never will, and is answered -32800


async def serve(
    stream: trio.abc.Stream,
    *,
    cwd: str,
    settings: Settings = Settings(),
    recorder: Recorder | None = None,
    connector: Connector | None = None,
    markers: MarkerCodec | None = None,
) -> None:
    """Serve one VS Code connection until its input ends, then shut down gracefully.

    At EOF every pending request is answered, every agent is stopped (bounded), and only
    then does this return.
    """
    peer = Peer(stream, name="vscode", tracer=recorder.channel("vscode") if recorder else None)
    async with trio.open_nursery() as nursery:
        pool = AgentPool(nursery, cwd=cwd, idle=settings.agent_idle, recorder=recorder, connector=connector)
        key = load_secret(state_dir())
        store = SessionStore(state_dir() / "sessions.sqlite3", key)
        bridges = BridgeListener(nursery)  # every conversation's vscode_tools, on one loopback port
        spares = Spares(pool, nursery, bridges, cwd=cwd, recorder=recorder)
        history = HistoryActor(pool, settings, markers or MarkerCodec(key), recorder, store, bridges=bridges)
        nursery.start_soon(history.run, name="history")
        Backend(peer, history, bridges, spares)
        async with trio.open_nursery() as serving:
            serving.start_soon(peer.serve, name="vscode reader")
            await peer.eof.wait()
            log.info("input closed; shutting down")
            await history.shutdown()
            await pool.shutdown()
        nursery.cancel_scope.cancel()
