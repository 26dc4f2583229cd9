"""Run an ACP agent the way another client would (its own terminal UI, another editor): outside
Symposium, so a test has a session the backend did not create.

    session_id = await run_outside(agent_definition, cwd, ["Remember the number 42"])
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import Any

import trio

from actors.shared.peer import Peer
from actors.shared.version import version
from protocol.acp import schema as acp

GUARD = 60  # a hang guard, not a timing budget
STOP_GRACE = 5.0  # for the agent to exit after its stdin closed, then after SIGTERM


async def run_outside(agent: dict[str, Any], cwd: str, prompts: list[str]) -> str:
    """Starts the agent of a `process_agent` definition, has one session in `cwd` take the prompts
    (answering any permission request "cancelled"), ends the agent; returns the session id."""
    definition = agent["mcp_server"]
    env = dict(os.environ)
    env.update({var["name"]: var["value"] for var in definition["env"]})
    process = await trio.lowlevel.open_process(
        [definition["command"], *definition["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        with trio.fail_after(GUARD):
            async with trio.open_nursery() as nursery:
                peer = Peer(trio.StapledStream(process.stdin, process.stdout), name="outside")

                async def permission(_params: Any, _id: Any) -> dict[str, Any]:
                    return {"outcome": acp.CANCELLED_OUTCOME}

                async def update(_params: Any) -> None:
                    pass

                peer.on_request("session/request_permission", permission)
                peer.on_notification("session/update", update)
                nursery.start_soon(peer.serve)
                await peer.request("initialize", acp.initialize_params(version()))
                session_id = (await peer.request("session/new", acp.new_session_params(cwd, [])))["sessionId"]
                for text in prompts:
                    await peer.request("session/prompt", {"sessionId": session_id, "prompt": [acp.text_block(text)]})
                await process.stdin.aclose()  # as a client that is done: the agent may exit by itself
                with trio.move_on_after(STOP_GRACE):
                    await process.wait()
                nursery.cancel_scope.cancel()
    finally:
        if process.returncode is None:  # its group: the agent and what it started
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            with trio.move_on_after(STOP_GRACE):
                await process.wait()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    return session_id
