"""What we answer an agent that asks something of its client: one handler per method of
`protocol/acp/client_methods.py`'s table, registered from it (`ClientHandlers.table`), each handing
the request to its session's Session as the turn machine's event and answering with what comes
back (docs/DESIGN.md, "Where to change what": a new client method, `terminal/*` say, is an entry
there and a handler here).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from actors.agent import files as agent_files
from actors.agent.routes import SessionRoutes
from actors.shared import threads
from actors.shared.mailbox import answering
from protocol.acp import auth
from protocol.acp.client_methods import SERVED, Kind
from protocol.acp.updates import read_updates
from protocol.shared.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from protocol.turn import fs_edits
from protocol.turn.events import FileWriteRequested, PermissionRequested, QuestionAsked

FILE_THREADS = 4  # worker threads an agent's file reads and writes may hold at once

Handler = Callable[..., Any]


class ClientHandlers:
    """One agent connection's handlers. `cancel_inbound` answers one of the agent's requests
    -32800 (its peer's); `on_status` takes who the agent says it is signed in as."""

    def __init__(self, routes: SessionRoutes, *, cancel_inbound: Callable[[Any], object], on_status: Callable[[str | None], None]) -> None:
        self._routes = routes
        self._cancel_inbound = cancel_inbound
        self._on_status = on_status
        # Its own threads for file work: a path that blocks holds these, never the backend's others.
        self._file_threads = trio.CapacityLimiter(FILE_THREADS)

    def table(self) -> dict[str, Handler]:
        """The handler of each method we serve, by name (`protocol/acp/client_methods.SERVED`)."""
        return {
            "session/update": self.on_updates,
            "session/request_permission": self.on_permission,
            "elicitation/create": self.on_question,
            "fs/write_text_file": self.on_write,
            "$/cancel_request": self.on_cancel_request,
            auth.STATUS_UPDATE: self.on_auth_status,
        }

    def register(self, peer: Any) -> None:
        """Register every served method's handler on the agent's peer, by its kind."""
        handlers = self.table()
        for method in SERVED:
            register: Callable[[str, Callable[..., Awaitable[Any] | None]], None] = {
                Kind.REQUEST: peer.on_request,
                Kind.NOTIFICATION: peer.on_notification,
                Kind.NOTIFICATIONS: peer.on_notifications,
            }[method.kind]
            register(method.name, handlers[method.name])

    def on_updates(self, batch: list[Any], size: int) -> None:
        """`session/update`s read together, each to its session, in runs per session."""
        share = size // len(batch) if batch else 0  # bytes per update, near enough: one session streams at a time
        for run in read_updates(batch):
            self._routes.deliver_updates(run.session, run.updates, share * run.sent)

    async def on_auth_status(self, params: Any) -> None:
        self._on_status(auth.status_label(params))

    async def on_cancel_request(self, params: Any) -> None:
        """The agent withdrew one of its requests (e.g. a permission): answer it -32800."""
        if isinstance(params, dict):
            self._cancel_inbound(params.get("requestId", params.get("id")))

    async def on_question(self, params: Any, id: Any) -> dict[str, Any]:
        """`elicitation/create`: a question for the user, to its session's Session (the turn
        machine decides how it is asked); "cancel" when nobody can ask it."""
        if not isinstance(params, dict):
            return {"action": "cancel"}
        handle, reply = answering()
        if not self._routes.deliver(str(params.get("sessionId")), QuestionAsked(handle, params)):
            return {"action": "cancel"}
        try:
            answer = await reply.receive()
        except trio.EndOfChannel:
            return {"action": "cancel"}
        if isinstance(answer, RpcError):
            raise RpcError(answer.code, answer.message)  # no prompt of the session runs
        return answer

    async def on_write(self, params: Any, id: Any) -> dict[str, Any]:
        """`fs/write_text_file`: to its session's Session, whose turn machine routes it through VS
        Code's edit tools or has it written on disk here (docs/DESIGN.md, "Edits through the client").
        Checked as it arrives, and again as it is written: each walks from the workspace folder
        (`actors/agent/files.py`), so a link swapped in meanwhile cannot move the write."""
        if not isinstance(params, dict) or not isinstance(params.get("path"), str) or not isinstance(params.get("content"), str):
            raise RpcError(INVALID_PARAMS, "fs/write_text_file takes a path and a content")
        path, content = params["path"], params["content"]
        if not os.path.isabs(path):
            raise RpcError(INVALID_PARAMS, f"not an absolute path: {path!r}")
        folders = self._routes.folders(str(params.get("sessionId")))
        try:
            before = await threads.run_sync(agent_files.before, path, folders, limiter=self._file_threads)
        except agent_files.FileError as exc:
            raise RpcError(INVALID_PARAMS, str(exc)) from None
        handle, reply = answering()
        if not self._routes.deliver(str(params.get("sessionId")), FileWriteRequested(handle, path, content, before.text, before.diffable, before.runs_it)):
            raise RpcError(INTERNAL_ERROR, "no conversation of this session is open: the file is unchanged")
        try:
            outcome = await reply.receive()
        except trio.EndOfChannel:
            outcome = fs_edits.CANCELLED
        if isinstance(outcome, RpcError):
            raise RpcError(outcome.code, outcome.message)  # no prompt of the session runs
        if isinstance(outcome, fs_edits.WriteOnDisk):
            try:
                await threads.run_sync(agent_files.write_text, path, content, folders, limiter=self._file_threads)
            except agent_files.FileError as exc:
                raise RpcError(INTERNAL_ERROR, str(exc)) from None
            return {}
        if isinstance(outcome, str):
            raise RpcError(INTERNAL_ERROR, outcome)
        return {}

    async def on_permission(self, params: Any, id: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            return {"outcome": {"outcome": "cancelled"}}
        handle, reply = answering()
        if not self._routes.deliver(str(params.get("sessionId")), PermissionRequested(handle, params)):
            return {"outcome": {"outcome": "cancelled"}}
        try:
            outcome = await reply.receive()
        except trio.EndOfChannel:
            outcome = {"outcome": "cancelled"}
        if isinstance(outcome, RpcError):
            raise RpcError(outcome.code, outcome.message)  # no prompt of the session runs
        return {"outcome": outcome}

