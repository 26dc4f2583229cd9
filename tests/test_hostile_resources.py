"""No agent can starve another or the backend (issue 21, "no agent can starve another"), over the
real wire: a real `symposium vscodelm`, hostile agents from `tests/hostile_agent.py`, the real MCP SDK.

Each test has one agent attack a shared resource (descriptors, the event loop, the session
store) and checks that another conversation is still served, by an agent that was not running
yet, so that serving it needs what the attacker would have taken.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import trio

from actors.tool_bridge import MAX_CONNECTIONS
from symposium.client import ELIZA, BackendClient, process_agent, user

GUARD = 120
HOSTILE = Path(__file__).with_name("hostile_agent.py")


def hostile(name: str, *flags: str) -> dict[str, Any]:
    """A hostile agent; a different name is a different definition, hence its own process."""
    return process_agent(name, sys.executable, [str(HOSTILE), *flags, f"--name={name}"])


async def test_an_agent_opening_connections_with_its_own_token_cannot_exhaust_the_backends_descriptors() -> None:
    # Under this limit (the agent's too: it inherits it) the backend ran out of descriptors after
    # about 40 of the agent's connections, the next agent could not start, and Eliza's first
    # chat ended the process ("too many open files" from a lazy import).
    async with BackendClient.spawn(nofile=128, stderr=subprocess.DEVNULL) as backend:
        with trio.fail_after(GUARD):
            flood = await backend.chat([user("connect_flood 2000")], agent=hostile("flooder"))
            other = await backend.chat([user("hello")], agent=hostile("bystander"))
            eliza = await backend.chat([user("Hello")], agent=ELIZA)
            again = await backend.chat([user("connect_flood 2000")], agent=hostile("flooder"))
    assert flood.error is None, flood.error
    served, closed = (int(n) for n in flood.text().split()[1::2])
    assert served == MAX_CONNECTIONS and closed > 0, flood.text()
    assert other.completed and other.text() == "echo: hello", other.error
    assert eliza.completed and eliza.text() == "How do you do. Please state your problem.", eliza.error
    # A second conversation with the same agent has a token (and a bound) of its own.
    assert again.error is None and again.text().startswith(f"served {MAX_CONNECTIONS} "), again.text()
