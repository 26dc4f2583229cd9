"""What the tests of real ACP agents (Claude Code, Codex) share: the agent behind
`tests/support/acp_tee.py` with a home of its own and a fake model API, and the vocabulary the
shared scenarios (`tests/agents/test_scenarios.py`) drive each one with.

Each agent's driver (`tests/support/claude.py`, `tests/support/codex.py`) says how its fake API
scripts a text, a thought, a shell command, a call of a VS Code tool, and what the agent does
that the other does not (`hangs_up_on_cancel`, ...), so one scenario runs against both.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from symposium.client import BackendClient, ChatResult, process_agent
from tests.conftest import Tap

JSON = Any


class RealAgent(Tap):
    """One real agent definition for one test: its fake API, its home, its working folder, its ACP log."""

    name: ClassVar[str]
    # The option the backend selects when it approves one call (the agents name it differently).
    allow_once: ClassVar[str]
    # The header and value the fake API sees the agent's key in.
    key_header: ClassVar[tuple[str, str]]
    # Whether the agent hangs up on its model's stream when its turn is cancelled.
    hangs_up_on_cancel: ClassVar[bool]
    # Whether the text it had streamed before a cancel is in its next model request.
    keeps_cancelled_text: ClassVar[bool]

    def __init__(self, api: Any, root: Path, node: str, entry: str, env: dict[str, str]) -> None:
        super().__init__(root / "acp.jsonl")
        self.api = api
        self.home = root / "home"
        self.cwd = root / "work"
        self.home.mkdir()
        self.cwd.mkdir()
        self.agent = process_agent(self.name, sys.executable, [str(Path(__file__).with_name("acp_tee.py")), str(self.log), "--", node, entry], env=env)

    async def chat(self, backend: BackendClient, history: list[Any], **options: Any) -> ChatResult:
        """One request of the conversation `history` to this agent, in its working folder."""
        return await backend.chat(history, agent=self.agent, cwd=str(self.cwd), **options)

    def agent_pids(self) -> list[int]:
        """The pid of every adapter process started (one per agent start), in order."""
        return [r["agent_pid"] for r in self.records() if "agent_pid" in r]

    # The scenarios' vocabulary, in the agent's fake API's terms ---------------------------------

    # Its fake API's builders: `reply(*parts, **how)`, `text(*chunks)`, `thinking(*chunks)`.
    reply: Callable[..., Any]
    text: Callable[..., Any]
    thinking: Callable[..., Any]

    def shell(self, command: str) -> Any:
        """The model asking the agent to run `command` in its shell."""
        raise NotImplementedError

    def command_of(self, raw_input: JSON) -> str:
        """The command line in the agent's permission request for a shell command."""
        raise NotImplementedError

    def vscode_tool(self, name: str, arguments: dict[str, JSON]) -> Any:
        """The model calling VS Code's tool `name`, which the agent knows from the backend's MCP server."""
        raise NotImplementedError

    # The request the agent asks approval of a call of a VS Code tool with (an MCP tool call): a
    # permission request, or an ACP form elicitation (Codex, of a client that declares it).
    vscode_tool_approval: ClassVar[str] = "session/request_permission"

    def assert_asks_for_vscode_tool(self, params: JSON, name: str) -> None:
        """The agent's approval request (its params) names the bridged tool `name` (each says it its own way)."""
        raise NotImplementedError

    def assert_approved(self, result: JSON) -> None:
        """The backend's answer to that request approved the call."""
        assert result["outcome"]["outcome"] == "selected"


# What the tests of real agents assert with -----------------------------------------------------

GUARD = 60  # a hang guard, not a timing budget: the tests wait on events

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def assert_well_formed(result: ChatResult) -> None:
    assert result.error is None, result.error and (result.error.message, result.error.data)
    assert result.completed
    assert any(p["type"] in ("text", "tool_call") for p in result.parts)


def answer_to(agent: Tap, request: JSON) -> JSON:
    """What the backend answered to one of the agent's requests."""
    [answer] = [m for m in agent.messages("c2a") if m.get("id") == request["id"] and "method" not in m]
    return answer
