"""`symposium vscodelm`: the backend the VS Code extension talks to (docs/DESIGN.md, "Wire protocol").

A thin shell: it parses requests, hands chat requests to the History actor and turns the
replies History routes back into `lm/responsePart` / `lm/responseComplete` / a response.

The first thing VS Code asks is the model list, which needs only the agent catalog: the actors
(History, the pool, the spares, the tool bridges' listener) and the modules they need (most of our
code) are loaded, off the event loop, at the first request that needs them (`lm/prepareModel`, which
the extension sends as a chat view opens, or a chat), so a window's models show as soon as Python
and trio are up (`make bench`, "cold start"). Loading them in a thread right after the model list
went out cost that answer more than it saved (measured: 1.63x against 0.98x).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs
import trio

from actors.agent.connection import Connector
from actors.shared import threads
from actors.shared.flow import PART_MAX, Window, part_cost
from actors.shared.mailbox import queued
from actors.shared.peer import ConnectionClosed, Peer
from actors.store.catalog import AgentCatalog
from actors.store.state import load_secret, state_dir
from actors.store.transcript import Recorder
from protocol.acp import agent_options, auth, model_configuration
from protocol.acp import schema as acp
from protocol.acp.agent_text import is_shown_as_is, shown, shown_or_none
from protocol.acp.capabilities import AgentInfo
from protocol.history import agent_commands
from protocol.shared.failures import AgentError, Failure, FailureKind, failure
from protocol.shared.incremental_json import Decoder
from protocol.shared.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, REQUEST_CANCELLED, SERVER_ERROR, RpcError, id_key
from protocol.shared.redact import Redactor
from protocol.shared.settings import Settings
from protocol.shared.structuring import WireError
from protocol.vscode.agent_identity import agent_key
from protocol.vscode.lm import (
    METHOD_AGENT_COMMANDS,
    METHOD_AGENT_OPTIONS,
    METHOD_AUTHENTICATE,
    METHOD_CANCEL,
    METHOD_CHAT,
    METHOD_COMPLETE,
    METHOD_INFO,
    METHOD_LIST_SESSIONS,
    METHOD_LOGOUT,
    METHOD_MODELS_CHANGED,
    METHOD_PART,
    METHOD_PREPARE,
    AgentOptions,
    AgentParams,
    AuthenticateParams,
    CancelParams,
    ChatParams,
    ListSessionsParams,
    PrepareParams,
    parse,
    parse_info,
    part_to_wire,
    to_wire,
)
from symposium.models import model_infos

if TYPE_CHECKING:
    from actors.agent.pool import AgentPool
    from actors.agent.process import AgentProcess
    from actors.bridge.listener import BridgeListener
    from actors.conversation.history import HistoryActor
    from actors.conversation.spares import Spares
    from protocol.history.channels import Reply
    from protocol.history.markers import MarkerCodec

log = logging.getLogger(__name__)

# What the actors need beyond the model list's path, imported in a worker thread (`Backend.ready`).
ACTOR_MODULES = ("actors.conversation.history", "actors.agent.pool", "actors.conversation.spares", "actors.store.sessions", "actors.bridge.listener", "protocol.history.markers", "symposium.launch", "symposium.agent_facts")

METHOD_STATS = "symposium/stats"  # diagnostics for benchmarks and tests; the extension never calls it
# The kinds the JSON-RPC spec has codes of its own for; every other failure is -32000 with its kind.
_CODES = {FailureKind.CANCELLED: REQUEST_CANCELLED, FailureKind.INVALID_PARAMS: INVALID_PARAMS}


def rpc_error(failure: Failure) -> RpcError:
    """A failure as the extension reads it: the one place domain failures become JSON-RPC
    errors (`protocol/shared/failures.py`; docs/DESIGN.md, "Failures")."""
    code = _CODES.get(failure.kind)
    if code is not None:
        return RpcError(code, failure.message)
    return RpcError(SERVER_ERROR, failure.message, {"kind": failure.kind.value, **failure.details})


def _params(value: Any, cl: type) -> Any:
    try:
        return parse(value, cl)
    except WireError as exc:
        raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None


def _waiting(replies: trio.MemoryReceiveChannel[Reply]) -> list[Reply]:
    """The replies already queued, up to and including an end (complete or error)."""
    batch: list[Reply] = []
    for reply in queued(replies):
        batch.append(reply)
        if reply.part is None:
            break
    return batch


def task_count() -> int:
    """Every trio task of this run: a leak of actors or connections shows here first."""
    root = trio.lowlevel.current_root_task()
    count, stack = 0, [root] if root is not None else []
    while stack:
        task = stack.pop()
        count += 1
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return count


@attrs.frozen
class Actors:
    """What serves chats and agents, made once its modules are loaded (`serve`'s `build`)."""

    history: HistoryActor
    bridges: BridgeListener
    spares: Spares | None
    pool: AgentPool


@attrs.define(eq=False)
class Backend:
    """Wires a VS Code-side Peer to the History actor; the actors are made by `build`, once, when a
    request first needs them (`ready`: the extension's `lm/prepareModel`, as a chat view opens, or a
    chat)."""

    peer: Peer
    build: Callable[[], Awaitable[Actors]]
    catalog: AgentCatalog | None = attrs.field(default=None, kw_only=True)
    history: HistoryActor = attrs.field(init=False)
    bridges: BridgeListener = attrs.field(init=False)
    spares: Spares | None = attrs.field(default=None, init=False)
    pool: AgentPool | None = attrs.field(default=None, init=False)
    _built: trio.Event | None = attrs.field(default=None, init=False)  # set once `build` has returned (or failed)
    _submitted: set[str] = attrs.field(factory=set, init=False)  # chat requests handed to History, by id key

    def __attrs_post_init__(self) -> None:
        peer = self.peer
        peer.on_request(METHOD_STATS, self.stats)
        peer.on_request(METHOD_INFO, self.provide_information)
        peer.on_request(METHOD_PREPARE, self.prepare_model)
        peer.on_request(METHOD_CHAT, self.provide_response)
        peer.on_request(METHOD_AGENT_OPTIONS, self.agent_options)
        peer.on_request(METHOD_AGENT_COMMANDS, self.agent_commands)
        peer.on_request(METHOD_LIST_SESSIONS, self.list_sessions)
        peer.on_request(METHOD_AUTHENTICATE, self.authenticate)
        peer.on_request(METHOD_LOGOUT, self.logout)
        peer.on_notification(METHOD_CANCEL, self.cancel)

    @property
    def started(self) -> bool:
        """Whether the actors are made or being made (then `ready` waits for them)."""
        return self._built is not None

    async def ready(self) -> None:
        """The actors, made on the first call (the others wait for it); raises RpcError if they could not be."""
        if self._built is None:
            self._built = trio.Event()
            try:
                actors = await self.build()
                self.history, self.bridges, self.spares, self.pool = actors.history, actors.bridges, actors.spares, actors.pool
            finally:
                self._built.set()
        await self._built.wait()
        if not hasattr(self, "history"):
            raise RpcError(INTERNAL_ERROR, "Internal error: the backend could not start its actors")

    async def provide_information(self, params: Any, _id: Any) -> dict[str, Any]:
        try:
            info, problems = parse_info(params)
        except WireError as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        for problem in problems:
            log.warning("agent left out of the model list: %s", problem)
        return {"models": [to_wire(m) for m in model_infos(info, self.catalog)]}

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
        await self.ready()
        if self.spares is None:
            raise RpcError(INTERNAL_ERROR, "Internal error: this backend keeps no agents warm")
        try:
            process, failure = await self.spares.prepare(prepare.agent, prepare.cwd)
        except AgentError as exc:
            raise rpc_error(exc.error) from None
        if self.catalog is not None:
            info = process.initialized.info
            wants = failure is not None and failure.error.kind is FailureKind.AUTH_REQUIRED
            self.catalog.learn_start(agent_key(prepare.agent), version=info.version if info else None, sign_in=wants)
        result: dict[str, Any] = {
            "ready": failure is None,
            "authMethods": _shown_auth_methods(process),
            "signIn": _sign_in(process),
            "agentInfo": _shown_agent_info(process.initialized.info),
        }
        if failure is not None:
            result["error"] = failure.error.message
        return result

    async def stats(self, _params: Any, _id: Any) -> dict[str, int]:
        """What the backend holds: a soak reads it before and after to see that nothing grew."""
        await self.ready()
        return {
            "conversations": self.history.conversations,
            "maxConversations": self.history.max_conversations,
            "bridges": len(self.bridges),
            "tasks": task_count(),
        }

    async def agent_options(self, params: Any, _id: Any) -> dict[str, Any]:
        """The options the agent's sessions offer (for Manage Agents), as its last new session did."""
        agent = _params(params, AgentParams).agent
        choices = self.catalog.get(agent_key(agent)).choices if self.catalog else ()
        options = []
        for choice in choices:
            values = [
                {"value": v.value, "name": v.name, "description": v.description, "bypassesPermissions": choice.category == agent_options.MODE and agent_options.bypasses_permissions(v)}
                for v in choice.values
            ]
            options.append({"id": choice.id, "name": choice.name, "category": choice.category, "type": choice.kind, "current": choice.current, "description": choice.description, "values": values})
        return {"known": bool(choices), "options": options}

    async def agent_commands(self, params: Any, _id: Any) -> dict[str, Any]:
        """The slash commands the agent's latest session announced, each with how a user types it in
        VS Code's chat (docs/usage.md, "The agent's commands")."""
        agent = _params(params, AgentParams).agent
        commands = self.catalog.get(agent_key(agent)).commands if self.catalog else ()
        return {"commands": [{**c.to_json(), "typed": agent_commands.spelling(c.name)} for c in commands]}

    async def authenticate(self, params: Any, _id: Any) -> dict[str, Any]:
        """The user chose one of the agent's sign-in methods (docs/DESIGN.md, "Sign-in"). A terminal
        method has run in VS Code's terminal: the agent is started afresh, as ACP v1 asks, and reads
        what the user signed in with. Any other is ACP `authenticate` on the running agent (it signs
        in its own way: a browser, say), answered once it is done. Either way the answer is the
        agent's sign-in state, as `lm/prepareModel`'s `signIn`."""
        asked = _params(params, AuthenticateParams)
        await self.ready()
        if self.pool is None:
            raise RpcError(INTERNAL_ERROR, "Internal error: this backend runs no agents")
        try:
            process = await self.pool.start(asked.agent, asked.cwd)
            method = next((m for m in process.auth_methods if m.id == asked.method_id), None)
            if method is None:
                raise RpcError(INVALID_PARAMS, f"Invalid params: methodId: {process.name} offers no sign-in method {asked.method_id!r}")
            if method.kind == auth.TERMINAL:
                self.pool.restart(asked.agent)
                process = await self.pool.start(asked.agent, asked.cwd)
            elif not method.declared:
                pass  # a key the agent reads at start (agent facts): started with it, nothing to send
            else:
                await process.authenticate(method.id)
        except AgentError as exc:
            raise rpc_error(exc.error) from None
        if self.catalog is not None:
            info = process.initialized.info
            self.catalog.learn_start(agent_key(asked.agent), version=info.version if info else None, sign_in=False)
        return _sign_in(process)

    async def logout(self, params: Any, _id: Any) -> dict[str, Any]:
        """ACP `logout`, where the agent declares it (`agentCapabilities.auth.logout`); then the agent
        is started afresh, so that no session of it goes on signed in."""
        asked = _params(params, AgentParams)
        await self.ready()
        if self.pool is None:
            raise RpcError(INTERNAL_ERROR, "Internal error: this backend runs no agents")
        try:
            process = await self.pool.start(asked.agent, asked.cwd)
            if not process.capabilities.logout:
                raise RpcError(INVALID_PARAMS, f"Invalid params: {process.name} cannot log out")
            await process.call("logout", {})
            self.pool.restart(asked.agent)
        except AgentError as exc:
            raise rpc_error(exc.error) from None
        except RpcError as exc:
            if exc.code == INVALID_PARAMS:
                raise
            raise RpcError(SERVER_ERROR, f"{process.name} could not log out: {exc.message}") from None
        return {}

    async def list_sessions(self, params: Any, _id: Any) -> dict[str, Any]:
        """The agent's own sessions in the folder (`session/list`), each with the token a new chat
        carries to continue it (`protocol/acp/continuing.py`). Starts the agent if it is not running."""
        asked = _params(params, ListSessionsParams)
        await self.ready()
        if self.pool is None or self.catalog is None:
            raise RpcError(INTERNAL_ERROR, "Internal error: this backend does not list sessions")
        try:
            process = await self.pool.start(asked.agent, asked.cwd)
        except AgentError as exc:
            raise rpc_error(exc.error) from None
        sessions = process.capabilities.sessions
        can_list, can_resume = sessions.list, sessions.can_continue
        if not (can_list and can_resume):
            missing = "list its sessions" if not can_list else "continue an earlier session"
            return {"supported": False, "reason": f"{process.name} cannot {missing}", "sessions": []}
        cwd = os.path.abspath(asked.cwd) if asked.cwd else None
        try:
            result = await process.call("session/list", acp.list_sessions_params(cwd, asked.cursor))
        except AgentError as exc:
            raise rpc_error(exc.error) from None
        except RpcError as exc:
            raise rpc_error(failure(FailureKind.LIST_FAILED, f"{process.name} could not list its sessions: {exc.message}", agent=process.name)) from None
        key = agent_key(asked.agent)
        listed: list[dict[str, Any]] = []
        for item in (result or {}).get("sessions") or () if isinstance(result, dict) else ():
            # Shown in a quick pick: an id that would need cleaning is not offered (`protocol/acp/agent_text.py`).
            if not isinstance(item, dict) or not is_shown_as_is(item.get("sessionId")) or not isinstance(item.get("cwd"), str):
                continue
            listed.append(
                {
                    "sessionId": item["sessionId"],
                    "cwd": shown(item["cwd"]),  # to show; the token keeps the real one
                    "title": shown_or_none(item.get("title")),
                    "updatedAt": shown_or_none(item.get("updatedAt")),
                    "token": self.catalog.continue_token(key, item["sessionId"], item["cwd"]),
                }
            )
        answer: dict[str, Any] = {"supported": True, "sessions": listed}
        if isinstance(result, dict) and isinstance(result.get("nextCursor"), str):
            answer["nextCursor"] = result["nextCursor"]
        return answer

    async def provide_response(self, params: Any, request_id: Any) -> dict[str, Any]:
        # An lm/cancel read right after the request (in the same chunk, say) runs before this
        # handler does; this checkpoint is where that cancel takes effect, before any turn starts.
        await trio.lowlevel.checkpoint()
        chat = _params(params, ChatParams)
        if chat.cwd is not None and not os.path.isdir(chat.cwd):
            problem = "not a folder" if os.path.exists(chat.cwd) else "no such folder"
            raise RpcError(INVALID_PARAMS, f"Invalid params: cwd: {problem}: {chat.cwd}")
        chat = self._with_chosen(chat)
        await self.ready()
        try:
            return await self._respond(chat, request_id)
        finally:
            if self.spares is not None:
                self.spares.settled(chat.agent, chat.cwd)

    def _with_chosen(self, chat: ChatParams) -> ChatParams:
        """The request's agent options with what the user chose in the model's controls over its
        settings (`protocol/acp/model_configuration.py`), read against what the agent offers."""
        chosen = chat.model_configuration if isinstance(chat.model_configuration, dict) else {}
        if not chosen or self.catalog is None:
            return chat
        settings = dict(chat.agent_options.items)
        model = settings.get("model")  # a model entry's (`<agent id>/<model>`)
        choices = self.catalog.get(agent_key(chat.agent)).choices_for(model if isinstance(model, str) else None)
        wanted = model_configuration.wanted_options(settings, chosen, choices)
        return attrs.evolve(chat, agent_options=AgentOptions(tuple(sorted(wanted.items()))))

    async def _respond(self, chat: ChatParams, request_id: Any) -> dict[str, Any]:
        from actors.conversation.history import ChatRequest, shutting_down
        # Unbounded in items, bounded in text: the Session waits while `window` is full.
        send, replies = trio.open_memory_channel["Reply"](math.inf)
        request = ChatRequest(request_id, chat, send)
        try:
            self.history.mailbox.send_nowait(request)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            # Read before the input ended, handled after History stopped: still answered.
            raise rpc_error(shutting_down()) from None
        self._submitted.add(id_key(request_id))
        try:
            return await self._stream(request_id, replies, request.window)
        finally:
            self._submitted.discard(id_key(request_id))
            request.window.close()  # nothing more is written for it: its Session never waits on it again

    async def _stream(self, request_id: Any, replies: trio.MemoryReceiveChannel[Reply], window: Window) -> dict[str, Any]:
        from protocol.turn.rendering import merge_parts  # a chat's: loaded with the actors

        async for reply in replies:
            batch = [reply, *_waiting(replies)]  # what queued up meanwhile goes out in one write
            written = [r.part for r in batch if r.part is not None]
            parts = merge_parts(written, PART_MAX)  # split too: never one huge line (docs/DESIGN.md, "Reliability")
            notifications = [(METHOD_PART, {"requestId": request_id, "part": part_to_wire(p)}) for p in parts]
            end = batch[-1]
            if end.complete:
                notifications.append((METHOD_COMPLETE, {"requestId": request_id}))
            await self.peer.notify_many(notifications)  # waits while VS Code does not read
            window.refund(sum(map(part_cost, written)))
            if end.complete:
                return {}
            if end.error is not None:
                raise rpc_error(end.error)
        raise RpcError(INTERNAL_ERROR, "Internal error: the request ended without an answer")

    async def cancel(self, params: Any) -> None:
        try:
            request_id = parse(params, CancelParams).request_id
        except WireError as exc:
            log.warning("ignored lm/cancel with bad params: %s", exc)
            return
        if id_key(request_id) in self._submitted:
            from actors.conversation.history import CancelRequest  # handed to History: its modules are loaded

            try:
                self.history.mailbox.send_nowait(CancelRequest(request_id))  # History answers it -32800
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass  # History has stopped: it answered the request already
        else:
            self.peer.cancel_inbound(request_id)  # not started yet: it never will, and is answered -32800


def _shown_auth_methods(process: AgentProcess) -> list[dict[str, Any]]:
    """The agent's sign-in methods as Add Agent shows and records them: only what it shows (id, name,
    kind, description), each bounded (protocol/acp/auth.py), never the agent's whole entry (its `_meta`)."""
    return [{key: wire[key] for key in ("id", "name", "kind", "description")} for wire in map(auth.to_wire, process.auth_methods)]


def _sign_in(process: AgentProcess) -> dict[str, Any]:
    """An agent's sign-in, as the extension offers it: its methods (protocol/acp/auth.py), the one it
    signed in with on this run (none: it may have signed in before, or need no sign-in), who it
    says it is signed in as (where it pushes that), whether it can log out."""
    return {
        "methods": [auth.to_wire(m) for m in process.auth_methods],
        "authenticated": process.authenticated,
        "status": process.auth_status,
        "canLogOut": process.capabilities.logout,
    }


def _shown_agent_info(info: AgentInfo | None) -> dict[str, str] | None:
    """The agent's `agentInfo` (name, title, version), cleaned; None when it sent none."""
    if info is None:
        return None
    return {key: shown(value) for key, value in attrs.asdict(info).items() if value is not None}


async def _tell_model_changes(peer: Peer, catalog: AgentCatalog) -> None:
    """`lm/modelsChanged` whenever an agent's models, context window or bytes per token change."""
    while True:
        await catalog.wait_changed()
        try:
            await peer.notify(METHOD_MODELS_CHANGED, {})
        except ConnectionClosed:
            return


async def serve(
    stream: trio.abc.Stream,
    *,
    cwd: str,
    settings: Settings | None = None,
    recorder: Recorder | None = None,
    connector: Connector | None = None,
    markers: MarkerCodec | None = None,
    learn: bool = True,
    secrets: Redactor | None = None,
) -> None:
    """Serve one VS Code connection until its input ends, then shut down gracefully.

    At EOF every pending request is answered, every agent is stopped (bounded), and only
    then does this return. `connector`: how agents are started (`symposium/launch.py`'s, by
    default). `learn`: keep what agents offer and cost (`actors/store/catalog.py`);
    replay does not, so that what it compares does not depend on earlier runs. `secrets`: the
    redactor the log handler uses; every agent's env values are added to it.
    """
    # A chat request repeats the conversation and the tools of the one before: read only what is new.
    decoder = Decoder([("params", "messages"), ("params", "options", "tools")])
    settings = settings or Settings()
    peer = Peer(stream, name="vscode", tracer=recorder.channel("vscode") if recorder else None, decode=decoder.decode)
    stores: list[Any] = []  # what `build` opened, closed at the end
    async with trio.open_nursery() as nursery:
        key = load_secret(state_dir())
        catalog = AgentCatalog(state_dir() / "agents.sqlite3", key) if learn else None

        async def build() -> Actors:
            # Their modules are most of the backend's own code: loaded in a thread, while the
            # loop answers what needs none of them (the model list).
            await threads.run_sync(lambda: [importlib.import_module(name) for name in ACTOR_MODULES])
            from actors.agent.pool import AgentPool
            from actors.bridge.listener import BridgeListener
            from actors.conversation.history import HistoryActor
            from actors.conversation.spares import Spares
            from actors.store.sessions import SessionStore
            from protocol.history.markers import MarkerCodec
            from symposium import launch
            from symposium.agent_facts import load_agent_facts

            facts = load_agent_facts()
            pool = AgentPool(
                nursery,
                cwd=cwd,
                idle=settings.agent_idle,
                request_timeout=settings.agent_timeout,
                recorder=recorder,
                # What an agent needs at start is given to it however it was configured (agent facts).
                connector=launch.with_start_facts(connector or launch.connect, facts),
                secrets=secrets if secrets is not None else Redactor(),
                facts=facts,
            )
            store = SessionStore(state_dir() / "sessions.sqlite3", key)
            stores.append(store)
            bridges = BridgeListener(nursery, launch.RELAY)  # every conversation's vscode_tools, on one loopback port
            spares = Spares(pool, nursery, bridges, cwd=cwd, recorder=recorder, catalog=catalog)
            history = HistoryActor(pool, settings, markers or MarkerCodec(key), bridges=bridges, store=store, spares=spares, catalog=catalog, recorder=recorder)
            nursery.start_soon(history.run, name="history")
            return Actors(history, bridges, spares, pool)

        if catalog is not None:
            nursery.start_soon(_tell_model_changes, peer, catalog, name="model changes")
        backend = Backend(peer, build, catalog=catalog)
        async with trio.open_nursery() as serving:
            serving.start_soon(peer.serve, name="vscode reader")
            await peer.eof.wait()
            log.info("input closed; shutting down")
            if backend.started:
                with contextlib.suppress(RpcError):
                    await backend.ready()
                    await backend.history.shutdown()
                if backend.pool is not None:
                    await backend.pool.shutdown()
        nursery.cancel_scope.cancel()
    # Saves queued to the stores' writer threads land before the process ends (bounded).
    for store in stores:
        store.close()
    if catalog is not None:
        catalog.close()
