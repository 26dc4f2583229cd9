"""A client of `symposium vscodelm` that speaks the wire protocol as the extension does.

Used by `symposium chat` and by the wire-level tests, so both exercise the real backend
subprocess exactly the way VS Code will: the whole history on every request, assistant
messages rebuilt by the consumer (all text first, then the tool calls).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio

from actors.shared.peer import ConnectionClosed, Peer
from protocol.shared.jsonrpc import RpcError
from protocol.vscode import lm

JSON = Any

AGENT_ACTION_TOOL_DEF = {
    "name": lm.AGENT_ACTION_TOOL,
    "description": "Request permission for an agent to execute an internal tool",
    "inputSchema": {
        "type": "object",
        "properties": {"kind": {"type": "string"}, "title": {"type": "string"}, "raw_input": {"type": "object"}, "diff": {"type": "string"}},
    },
}


@attrs.define
class ChatResult:
    """Everything one chat request produced, in order."""

    request_id: int
    parts: list[dict[str, JSON]] = attrs.Factory(list)
    completed: bool = False  # lm/responseComplete arrived
    error: RpcError | None = None
    done: trio.Event = attrs.Factory(trio.Event)
    first_part: trio.Event = attrs.Factory(trio.Event)

    def text(self) -> str:
        return "".join(p["value"] for p in self.parts if p.get("type") == "text")

    def thinking(self) -> str:
        return "".join(p["value"] for p in self.parts if p.get("type") == "thinking")

    def tool_calls(self) -> list[dict[str, JSON]]:
        return [p for p in self.parts if p.get("type") == "tool_call"]

    def assistant_message(self) -> dict[str, JSON]:
        """The assistant message as VS Code consumers rebuild it: one text part, then tool calls."""
        content: list[dict[str, JSON]] = []
        text = self.text()
        if text:
            content.append({"type": "text", "value": text})
        content.extend(self.tool_calls())
        return {"role": "assistant", "content": content}


PartCallback = Callable[[dict[str, JSON]], None]

# Sets the open-file limit, then becomes the command: the process keeps its pid, and no
# preexec_fn runs in a process that may have threads.
_WITH_NOFILE = "import os, resource, sys; n = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)); os.execv(sys.argv[2], sys.argv[2:])"


class BackendClient:
    def __init__(self, peer: Peer, process: trio.Process | None, nursery: trio.Nursery) -> None:
        self.peer = peer
        self.process = process
        self._nursery = nursery
        self._streams: dict[int, tuple[ChatResult, PartCallback | None]] = {}
        self.stray_parts: list[dict[str, JSON]] = []  # parts for requests we do not know
        self.models_changes = 0  # lm/modelsChanged notifications received
        self._models_changed = trio.Event()
        peer.on_notification(lm.METHOD_PART, self._on_part)
        peer.on_notification(lm.METHOD_COMPLETE, self._on_complete)
        peer.on_notification(lm.METHOD_MODELS_CHANGED, self._on_models_changed)

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls,
        args: Sequence[str] = ("vscodelm",),
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | None = None,
        nofile: int | None = None,
        wrapper: Sequence[str] = (),
        launcher: Sequence[str] = (sys.executable, "-I", "-m", "symposium"),
    ) -> AsyncIterator[BackendClient]:
        """Run `python -m symposium <args>` (the backend) and connect to it; stops it on exit.

        `nofile` runs it with that open-file limit (soft and hard), as `ulimit -n` would.
        `wrapper`: a command run first, given the backend's command line as its last arguments,
        which it becomes (`exec`), so that it knows the backend's pid.
        `launcher` is what runs the backend's `symposium` command (default: as the extension starts it).
        """
        argv = [*launcher, *args]
        if nofile is not None:
            argv = [sys.executable, "-c", _WITH_NOFILE, str(nofile), *argv]
        argv = [*wrapper, *argv]
        process = await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            start_new_session=True,
        )
        assert process.stdin is not None and process.stdout is not None
        async with trio.open_nursery() as nursery:
            peer = Peer(trio.StapledStream(process.stdin, process.stdout), name="backend")
            nursery.start_soon(peer.serve)
            client = cls(peer, process, nursery)
            try:
                yield client
            finally:
                with trio.CancelScope(shield=True):
                    await client.close()
                nursery.cancel_scope.cancel()

    async def close(self, timeout: float = 10) -> int | None:
        """Close the backend's stdin and wait for it to exit (killing it if it will not)."""
        if self.process is None:
            return None
        try:
            await self.process.stdin.aclose()  # type: ignore[union-attr]
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        with trio.move_on_after(timeout):
            return await self.process.wait()
        self.process.kill()
        return await self.process.wait()

    # Notifications ------------------------------------------------------------------------------

    async def _on_part(self, params: JSON) -> None:
        entry = self._streams.get(params.get("requestId"))
        if entry is None:
            self.stray_parts.append(params)
            return
        result, callback = entry
        result.parts.append(params["part"])
        result.first_part.set()
        if callback is not None:
            callback(params["part"])

    async def _on_complete(self, params: JSON) -> None:
        entry = self._streams.get(params.get("requestId"))
        if entry is not None:
            entry[0].completed = True

    async def _on_models_changed(self, _params: JSON) -> None:
        self.models_changes += 1
        self._models_changed.set()

    async def models_changed(self) -> None:
        """Returns once the backend has said its models changed (since the last call)."""
        await self._models_changed.wait()
        self._models_changed = trio.Event()

    # Requests -----------------------------------------------------------------------------------

    async def models(self, agents: Sequence[dict[str, JSON]] = ()) -> list[dict[str, JSON]]:
        params: dict[str, JSON] = {"silent": True}
        if agents:
            params["agents"] = list(agents)
        return (await self.peer.request(lm.METHOD_INFO, params))["models"]

    async def prepare(self, agent: dict[str, JSON], *, model_id: str = "symposium-eliza", cwd: str | None = None) -> dict[str, JSON]:
        """`lm/prepareModel`: the agent started and a session ready for the next new conversation."""
        params: dict[str, JSON] = {"modelId": model_id, "agent": agent}
        if cwd is not None:
            params["cwd"] = cwd
        return await self.peer.request(lm.METHOD_PREPARE, params)

    async def stats(self) -> dict[str, int]:
        """The backend's own counts (`symposium/stats`): conversations (and the most it holds), bridges, trio tasks."""
        return await self.peer.request("symposium/stats", {})

    async def agent_options(self, agent: dict[str, JSON]) -> dict[str, JSON]:
        return await self.peer.request(lm.METHOD_AGENT_OPTIONS, {"agent": agent})

    async def agent_commands(self, agent: dict[str, JSON]) -> dict[str, JSON]:
        return await self.peer.request(lm.METHOD_AGENT_COMMANDS, {"agent": agent})

    async def list_sessions(self, agent: dict[str, JSON], cwd: str | None = None) -> dict[str, JSON]:
        params: dict[str, JSON] = {"agent": agent}
        if cwd is not None:
            params["cwd"] = cwd
        return await self.peer.request(lm.METHOD_LIST_SESSIONS, params)

    async def authenticate(self, agent: dict[str, JSON], method_id: str) -> dict[str, JSON]:
        """`lm/authenticate`: the user chose this sign-in method of the agent's."""
        return await self.peer.request(lm.METHOD_AUTHENTICATE, {"agent": agent, "methodId": method_id})

    async def logout(self, agent: dict[str, JSON]) -> dict[str, JSON]:
        return await self.peer.request(lm.METHOD_LOGOUT, {"agent": agent})

    def start_chat(
        self,
        messages: Sequence[dict[str, JSON]],
        *,
        agent: dict[str, JSON],
        tools: Sequence[dict[str, JSON]] = (),
        model_id: str = "symposium-eliza",
        cwd: str | None = None,
        on_part: PartCallback | None = None,
        agent_options: dict[str, str | bool] | None = None,
        bridged_tools: str | list[str] | None = None,
        model_configuration: dict[str, JSON] | None = None,
        folders: Sequence[str] = (),
    ) -> ChatResult:
        """Send a chat request; the returned result fills in as parts arrive (await `.done`).
        `folders`: every folder of a multi-root workspace (`cwd` the first)."""
        request_id = self.peer.new_id()
        result = ChatResult(request_id)
        self._streams[request_id] = (result, on_part)
        params: dict[str, JSON] = {
            "modelId": model_id,
            "messages": list(messages),
            "agent": agent,
            "options": {"tools": list(tools), "toolMode": "auto"},
        }
        if cwd is not None:
            params["cwd"] = cwd
        if agent_options:
            params["agentOptions"] = agent_options
        if bridged_tools is not None:
            params["bridgedTools"] = bridged_tools
        if model_configuration is not None:
            params["modelConfiguration"] = model_configuration
        if folders:
            params["folders"] = list(folders)

        async def run() -> None:
            try:
                await self.peer.request(lm.METHOD_CHAT, params, id=request_id)
            except RpcError as exc:
                result.error = exc
            except ConnectionClosed as exc:
                result.error = RpcError(-32000, str(exc))
            finally:
                self._streams.pop(request_id, None)
                result.done.set()

        self._nursery.start_soon(run)
        return result

    async def chat(self, messages: Sequence[dict[str, JSON]], **kwargs: Any) -> ChatResult:
        result = self.start_chat(messages, **kwargs)
        await result.done.wait()
        return result

    async def cancel(self, request_id: JSON) -> None:
        await self.peer.notify(lm.METHOD_CANCEL, {"requestId": request_id})


def user(text: str) -> dict[str, JSON]:
    return {"role": "user", "content": [{"type": "text", "value": text}]}


def assistant(text: str) -> dict[str, JSON]:
    return {"role": "assistant", "content": [{"type": "text", "value": text}]}


def tool_result(call_id: str, text: str) -> dict[str, JSON]:
    return {"role": "user", "content": [{"type": "tool_result", "toolCallId": call_id, "content": [{"type": "text", "value": text}]}]}


ELIZA = {"eliza": {"deterministic": True}}


def process_agent(name: str, command: str, args: Sequence[str] = (), env: dict[str, str] | None = None) -> dict[str, JSON]:
    return {
        "mcp_server": {
            "name": name,
            "command": command,
            "args": list(args),
            "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
        }
    }

