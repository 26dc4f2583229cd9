"""An agent's answers are read into typed values: a field of the ACP schema answered as null or as
another type is taken as absent (docs/reliability.md, "What an agent declares"). The chat may fail
with a message; the backend never stops, and serves the next request.

Over the real wire against `tests/support/hostile_agent.py odd=...`, one backend for every case, so
that a case that stopped it fails every case after it too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import trio

from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, process_agent, user

HOSTILE = str(Path(__file__).parents[1] / "support" / "hostile_agent.py")
GUARD = 30
CLEAN = process_agent("clean", sys.executable, [HOSTILE])

# The fields of the ACP schema the backend reads, per message (the hostile agent's "odd" family).
FIELDS: dict[str, tuple[str, ...]] = {
    "initialize": (
        "protocolVersion",
        "agentCapabilities",
        "agentCapabilities.loadSession",
        "agentCapabilities.promptCapabilities",
        "agentCapabilities.promptCapabilities.image",
        "agentCapabilities.promptCapabilities.embeddedContext",
        "agentCapabilities.mcpCapabilities",
        "agentCapabilities.mcpCapabilities.http",
        "agentCapabilities.sessionCapabilities",
        "agentCapabilities.sessionCapabilities.fork",
        "agentCapabilities.sessionCapabilities.resume",
        "agentCapabilities.sessionCapabilities.list",
        "agentCapabilities.sessionCapabilities.close",
        "agentCapabilities.auth",
        "agentCapabilities.auth.logout",
        "agentInfo",
        "agentInfo.name",
        "agentInfo.version",
        "authMethods",
    ),
    "session/new": (
        "sessionId",
        "models",
        "models.availableModels",
        "models.currentModelId",
        "modes",
        "modes.availableModes",
        "modes.currentModeId",
        "configOptions",
        "_meta",
    ),
    "update": (
        "sessionUpdate",
        "content",
        "content.type",
        "content.text",
        "toolCallId",
        "title",
        "kind",
        "status",
        "locations",
        "rawInput",
        "entries",
        "used",
        "size",
        "currentModeId",
        "availableCommands",
    ),
    "session/prompt": ("stopReason", "usage", "usage.inputTokens", "_meta"),
}
# null, and a value of another type than the schema's for every field: a list (the schema has no
# field that may be a list or a scalar) and a string (where a list is expected, a number).
ODD_VALUES = (None, [1, "x"], 7)
CASES = [(message, path, value) for message, paths in FIELDS.items() for path in paths for value in ODD_VALUES]
AT_ONCE = 8  # chats with odd agents in flight together


def odd_agent(message: str, path: str, value: Any) -> dict[str, Any]:
    flag = f"odd={message}:{path}:{json.dumps(value)}"
    return process_agent("odd", sys.executable, [HOSTILE, flag])


async def test_the_done_when_cases_prompt_capabilities_null_a_string_and_a_list(backend: BackendClient) -> None:
    for value in (None, "image", ["image"]):
        agent = odd_agent("initialize", "agentCapabilities.promptCapabilities", value)
        with trio.fail_after(GUARD):
            answer = await backend.chat([user("hello")], agent=agent, model_id="odd")
            assert answer.error is None, answer.error
            assert answer.text() == "echo: hello"
            after = await backend.chat([user("still there?")], agent=CLEAN, model_id="clean")
        assert after.error is None and after.text() == "echo: still there?"


async def test_every_field_answered_null_or_as_another_type_fails_at_most_its_chat(backend: BackendClient) -> None:
    failed: dict[str, str] = {}
    limit = trio.CapacityLimiter(AT_ONCE)

    async def chat(message: str, path: str, value: Any) -> None:
        async with limit:
            answer = await backend.chat([user("busy")], agent=odd_agent(message, path, value), model_id="odd", tools=[AGENT_ACTION_TOOL_DEF])
        case = f"{message} {path}={json.dumps(value)}"
        if answer.error is not None:
            assert answer.error.message, case  # a chat may fail, with a message a user can read
            failed[case] = answer.error.message
        else:
            assert answer.completed, case  # answered, whatever the agent's odd update left of it

    with trio.fail_after(GUARD * 4):
        async with trio.open_nursery() as nursery:
            for case in CASES:
                nursery.start_soon(chat, *case)
        after = await backend.chat([user("still there?")], agent=CLEAN, model_id="clean")
    assert after.error is None and after.text() == "echo: still there?"
    # Only a session with no id leaves nothing to go on.
    assert {case.split("=")[0] for case in failed} <= {"session/new sessionId"}, failed
