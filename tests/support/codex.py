"""Codex as a test agent, fully offline: the catalogue's adapter, `@agentclientprotocol/codex-acp`, at the
catalogue's version (extension/catalogue/registry.json), which is what Add Agent installs for users.

`scripts/install-agents.sh` installs it with the extension's installer into a cache outside the repo (`make
agents` runs it; `installed_codex()` runs it too, so pytest alone works). The adapter starts the Codex app
server of the `@openai/codex` package it depends on (its native binary from the per-platform package that one
lists as an optional dependency). The agent runs behind `tests/support/acp_tee.py`, which records its ACP
traffic, with a HOME and a CODEX_HOME of the test's own (nothing of the user's is read or written) whose
config.toml makes a `FakeOpenAI` server the model provider: a custom provider speaking the Responses API, its
key in an environment variable.

The adapter sets Codex's approval policy and sandbox itself, from its mode (`read-only`, `agent`, the default,
or `agent-full-access`): a config.toml's `approval_policy` and `sandbox_mode` do not reach Codex. A user picks
the mode in the session, or the first one with `INITIAL_AGENT_MODE` in the agent's entry (the adapter's
README), which is what `Codex(mode=...)` sets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import catalogue_agents, fake_openai
from tests.support.fake_openai import FakeOpenAI
from tests.support.real_agent import RealAgent

ID = "codex-acp"  # the catalogue's id: its package and version are the catalogue's
MODEL = "gpt-5.4-mini"  # a model Codex knows (its metadata is bundled), served by the fake
PROVIDER = "symposium_fake"
KEY_VARIABLE = "SYMPOSIUM_FAKE_OPENAI_KEY"
KEY = "sk-fake-codex-key"


def installed_codex() -> tuple[str, str] | str:
    """(node, the adapter's entry point) as Add Agent installs it, installing it if need be; or why it cannot be had."""
    return catalogue_agents.installed_script(ID)


def config_toml(api: FakeOpenAI) -> str:
    """Codex's configuration: the fake as its only model provider, no network besides it."""
    return f"""\
model = "{MODEL}"
model_provider = "{PROVIDER}"

[model_providers.{PROVIDER}]
name = "Symposium's fake OpenAI"
base_url = "{api.url}/v1"
env_key = "{KEY_VARIABLE}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


class Codex(RealAgent):
    """One Codex agent definition for one test: its fake API, its homes, its ACP log.

    `mode` is the adapter's first mode (`INITIAL_AGENT_MODE`): by default its own, "agent" (Codex's
    "on-request" approvals in a workspace-write sandbox: it still asks before an MCP tool call, and before
    a command its model wants run outside the sandbox); "read-only" is the mode that "requires approval
    to edit files and run commands".
    """

    name = "codex"
    allow_once = "allow_once"
    key_header = ("authorization", f"Bearer {KEY}")
    hangs_up_on_cancel = False  # it ends its turn at once, but leaves the model's stream open
    keeps_cancelled_text = False

    def __init__(self, api: FakeOpenAI, root: Path, *, mode: str | None = None) -> None:
        found = installed_codex()
        assert not isinstance(found, str), found
        self.codex_home = root / "codex-home"
        self.codex_home.mkdir()
        (self.codex_home / "config.toml").write_text(config_toml(api))
        env = {
            "HOME": str(root / "home"),
            "CODEX_HOME": str(self.codex_home),
            KEY_VARIABLE: KEY,
            "RUST_LOG": "error",  # its warnings (MCP start-up events it does not route) are noise here
        }
        if mode is not None:
            env["INITIAL_AGENT_MODE"] = mode
        super().__init__(api, root, *found, env)

    reply = staticmethod(fake_openai.reply)
    text = staticmethod(fake_openai.text)
    thinking = staticmethod(fake_openai.reasoning)

    def shell(self, command: str) -> Any:
        # As Codex's model asks for a command its sandbox would stop (a write in "read-only"): to run it
        # outside the sandbox, which Codex asks the user about in every mode but full access.
        return fake_openai.function_call("exec_command", {"cmd": command, "sandbox_permissions": "require_escalated", "justification": "It needs to write"})

    def command_of(self, raw_input: Any) -> str:
        return raw_input["command"]  # the command line, without the shell the adapter runs it with

    def vscode_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        # Codex offers each MCP server's tools to the model in a namespace `mcp__<server>`.
        return fake_openai.function_call(name, arguments, namespace="mcp__vscode_tools")

    # It asks before any MCP tool call, in every mode but full access; of a client that declares ACP form
    # elicitation (as the backend does), as a question whose one field is how long the approval holds.
    vscode_tool_approval = "elicitation/create"

    def assert_asks_for_vscode_tool(self, params: Any, name: str) -> None:
        assert params["mode"] == "form" and params["_meta"]["codex_approval_kind"] == "mcp_tool_call"
        assert params["message"] == f'Allow the vscode_tools MCP server to run tool "{name}"?'  # the tool named only here
        assert params["requestedSchema"]["required"] == ["persist"]

    def assert_approved(self, result: Any) -> None:
        assert result == {"action": "accept", "content": {"persist": "once"}}  # the narrowest grant: this call only


def planning(body: dict[str, Any]) -> bool:
    """Whether Codex told its model it is in Plan mode (its collaboration mode): the later of its
    developer texts `You are in **Plan Mode**` and `You are now in Default mode`, which it says on leaving."""
    said = json.dumps(body)
    return said.rfind("You are in **Plan Mode**") > said.rfind("You are now in Default mode")
