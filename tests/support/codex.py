"""Codex (the `@zed-industries/codex-acp` adapter) as a test agent, fully offline.

`scripts/install-agents.sh` installs the pinned adapter into a cache outside the repo (`make test`
runs it; `installed_codex()` runs it too, so pytest alone works); its native binary comes from the
per-platform registry package the adapter lists as an optional dependency. The agent runs behind
`tests/support/acp_tee.py`, which records its ACP traffic, with a HOME and a CODEX_HOME of the test's own
(nothing of the user's is read or written) whose config.toml makes a `FakeOpenAI` server the model
provider: a custom provider speaking the Responses API, its key in an environment variable.
"""

from __future__ import annotations

import sys
from pathlib import Path

from symposium.client import process_agent
from tests.conftest import Tap, installed_adapter, pinned
from tests.support.fake_openai import FakeOpenAI

VERSION = pinned("CODEX_ACP_VERSION")
PACKAGE = "@zed-industries/codex-acp"
MODEL = "gpt-5.4-mini"  # a model Codex knows (its metadata is bundled), served by the fake
PROVIDER = "symposium_fake"
KEY_VARIABLE = "SYMPOSIUM_FAKE_OPENAI_KEY"


def installed_codex() -> tuple[str, str] | str:
    """(node, the adapter's entry point), installing it if need be; or why it cannot be had."""
    return installed_adapter("codex", PACKAGE, VERSION, "bin", "codex-acp.js")


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


class Codex(Tap):
    """One Codex agent definition for one test: its fake API, its homes, its ACP log.

    `approval_policy` is Codex's own default, "on-request" (it still asks before an MCP tool
    call); "untrusted" makes it ask before running any command it does not know to be harmless.
    Commands run without Codex's sandbox, which the tests do not depend on; with another
    `sandbox_mode` ("workspace-write") Codex also offers its approval presets as modes.
    """

    def __init__(self, api: FakeOpenAI, root: Path, *, approval_policy: str = "on-request", sandbox_mode: str = "danger-full-access") -> None:
        super().__init__(root / "acp.jsonl")
        found = installed_codex()
        assert not isinstance(found, str), found
        node, entry = found
        self.api = api
        self.home = root / "home"
        self.codex_home = root / "codex-home"
        self.cwd = root / "work"
        for folder in (self.home, self.codex_home, self.cwd):
            folder.mkdir()
        (self.codex_home / "config.toml").write_text(config_toml(api, approval_policy=approval_policy, sandbox_mode=sandbox_mode))
        env = {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            KEY_VARIABLE: "sk-fake-codex-key",
            "RUST_LOG": "error",  # its warnings (MCP start-up events it does not route) are noise here
        }
        self.agent = process_agent("codex", sys.executable, [str(Path(__file__).with_name("acp_tee.py")), str(self.log), "--", node, entry], env=env)

    def agent_pids(self) -> list[int]:
        """The pid of every adapter process started (one per agent start), in order."""
        return [r["agent_pid"] for r in self.records() if "agent_pid" in r]
