"""Claude Code (the `@agentclientprotocol/claude-agent-acp` adapter) as a test agent, fully offline.

`scripts/install-agents.sh` installs the catalogue's adapter (extension/catalogue/registry.json, `claude-acp`)
with the extension's installer into a cache outside the repo (`make test` runs it; `installed_claude()` runs
it too, so pytest alone works). The agent runs behind
`tests/support/acp_tee.py`, which records its ACP traffic, with an isolated HOME and its model calls going
to a `FakeAnthropic` server the test scripts.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.support import catalogue_agents, fake_anthropic
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.real_agent import RealAgent

ID = "claude-acp"  # the catalogue's: its version and package are the catalogue's
PACKAGE, _, VERSION = next(a.spec for a in catalogue_agents.load() if a.id == ID).rpartition("@")


def installed_claude() -> tuple[str, str] | str:
    """(node, the adapter's entry point) as Add Agent installs it, installing it if need be; or why it cannot be had."""
    return catalogue_agents.installed_script(ID)


def claude_env(api_url: str, home: Path) -> dict[str, str]:
    """Claude Code's environment: the fake API, a home of its own, nothing sent elsewhere."""
    env = {
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "sk-ant-fake",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # otherwise the CLI refuses to run as root
    return env


class ClaudeCode(RealAgent):
    """One Claude Code agent definition for one test: its fake API, its home, its ACP log."""

    name = "claude"
    allow_once = "allow-once"
    key_header = ("x-api-key", "sk-ant-fake")
    hangs_up_on_cancel = True
    keeps_cancelled_text = True

    def __init__(self, api: FakeAnthropic, root: Path) -> None:
        found = installed_claude()
        assert not isinstance(found, str), found
        super().__init__(api, root, *found, claude_env(api.url, root / "home"))

    reply = staticmethod(fake_anthropic.reply)
    text = staticmethod(fake_anthropic.text)
    thinking = staticmethod(fake_anthropic.thinking)

    def shell(self, command: str) -> Any:
        return fake_anthropic.tool_use("Bash", {"command": command, "description": "Run it"})

    def command_of(self, raw_input: Any) -> str:
        return raw_input["command"]

    def vscode_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return fake_anthropic.tool_use(f"mcp__vscode_tools__{name}", arguments)

    def assert_asks_for_vscode_tool(self, params: Any, name: str) -> None:
        # By the tool's qualified name (MCP server, then tool).
        assert params["toolCall"]["title"] == f"mcp__vscode_tools__{name}"
