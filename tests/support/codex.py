"""Codex (Zed's `@zed-industries/codex-acp` adapter) as a test agent, fully offline.

`scripts/install-agents.sh` installs the adapter tests/support/agents.toml names (`[zed-codex-acp]`) with the
extension's installer into a cache outside the repo (`make test` runs it; `installed_codex()` runs it too,
so pytest alone works); its native binary comes from the per-platform registry package the adapter lists
as an optional dependency. The agent runs behind
`tests/support/acp_tee.py`, which records its ACP traffic, with a HOME and a CODEX_HOME of the test's own
(nothing of the user's is read or written) whose config.toml makes a `FakeOpenAI` server the model
provider: a custom provider speaking the Responses API, its key in an environment variable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support import catalogue_agents, fake_openai
from tests.support.fake_openai import FakeOpenAI
from tests.support.real_agent import RealAgent

ID = "zed-codex-acp"  # its package and version: tests/support/agents.toml (the catalogue's `codex-acp` is another adapter)
MODEL = "gpt-5.4-mini"  # a model Codex knows (its metadata is bundled), served by the fake
PROVIDER = "symposium_fake"
KEY_VARIABLE = "SYMPOSIUM_FAKE_OPENAI_KEY"
KEY = "sk-fake-codex-key"


def installed_codex() -> tuple[str, str] | str:
    """(node, the adapter's entry point) as Add Agent installs it, installing it if need be; or why it cannot be had."""
    return catalogue_agents.installed_script(ID)


def config_toml(api: FakeOpenAI, *, approval_policy: str, sandbox_mode: str = "danger-full-access") -> str:
    """Codex's configuration: the fake as its only model provider, no network besides it."""
    return f"""\
model = "{MODEL}"
model_provider = "{PROVIDER}"
approval_policy = "{approval_policy}"
sandbox_mode = "{sandbox_mode}"

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

    `approval_policy` is Codex's own default, "on-request" (it still asks before an MCP tool
    call); "untrusted" makes it ask before running any command it does not know to be harmless.
    Commands run without Codex's sandbox, which the tests do not depend on; with another
    `sandbox_mode` ("workspace-write") Codex also offers its approval presets as modes.
    """

    name = "codex"
    allow_once = "approved"
    key_header = ("authorization", f"Bearer {KEY}")
    hangs_up_on_cancel = False  # it ends its turn at once, but leaves the model's stream open
    keeps_cancelled_text = False
    reports_completion_tokens = False

    def __init__(self, api: FakeOpenAI, root: Path, *, approval_policy: str = "on-request", sandbox_mode: str = "danger-full-access") -> None:
        found = installed_codex()
        assert not isinstance(found, str), found
        self.codex_home = root / "codex-home"
        self.codex_home.mkdir()
        (self.codex_home / "config.toml").write_text(config_toml(api, approval_policy=approval_policy, sandbox_mode=sandbox_mode))
        env = {
            "HOME": str(root / "home"),
            "CODEX_HOME": str(self.codex_home),
            KEY_VARIABLE: KEY,
            "RUST_LOG": "error",  # its warnings (MCP start-up events it does not route) are noise here
        }
        super().__init__(api, root, *found, env)

    reply = staticmethod(fake_openai.reply)
    text = staticmethod(fake_openai.text)
    thinking = staticmethod(fake_openai.reasoning)

    def shell(self, command: str) -> Any:
        return fake_openai.function_call("exec_command", {"cmd": command})

    def command_of(self, raw_input: Any) -> str:
        return raw_input["command"][-1]  # the argv of a shell running it

    def vscode_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        # Codex offers each MCP server's tools to the model in a namespace `mcp__<server>`.
        return fake_openai.function_call(name, arguments, namespace="mcp__vscode_tools")

    def assert_asks_for_vscode_tool(self, tool_call: Any, name: str) -> None:
        # Even with its default approval policy; the tool named only in the message.
        assert tool_call["title"] == "Approve MCP tool call"
        assert tool_call["rawInput"]["server_name"] == "vscode_tools"
        assert tool_call["rawInput"]["request"]["_meta"]["codex_approval_kind"] == "mcp_tool_call"
        assert tool_call["rawInput"]["request"]["message"] == f'Allow the vscode_tools MCP server to run tool "{name}"?'
