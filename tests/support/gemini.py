"""Gemini CLI as a test agent, offline: the catalogue's version, started as Add Agent starts it, against `FakeGemini`.

It is installed by `make agents` with the rest of the catalogue (tests/support/catalogue_agents.py);
`installed_gemini()` installs it if need be, so a test run alone (or the VS Code tests, through
tests/support/serve_fake_agent.py) finds it on a clean machine too. What goes in its entry (an API key,
the fake's URL, a model) is the conformance table's (tests/support/agents.toml, `[gemini]`): what a
user would put there. It runs behind tests/support/acp_tee.py, with a HOME of the test's own.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

from symposium.client import process_agent
from tests.support import catalogue_agents
from tests.support.fake_gemini import FakeGemini

ID = "gemini"
TEE = Path(__file__).resolve().parent / "acp_tee.py"


def installed_gemini() -> catalogue_agents.CatalogueAgent | str:
    """The catalogue's Gemini CLI, installing it if need be; or why it cannot be had."""
    return catalogue_agents.installed(ID)


def known() -> dict[str, Any]:
    return tomllib.loads(catalogue_agents.TABLE.read_text())[ID]


class Gemini:
    """One Gemini CLI definition for one test: its HOME and working folder under `root`, its ACP log."""

    def __init__(self, api: FakeGemini, root: Path) -> None:
        found = installed_gemini()
        assert not isinstance(found, str), found
        self.api = api
        self.home = root / "home"
        self.cwd = root / "work"
        self.log = root / "acp.jsonl"
        self.home.mkdir(parents=True, exist_ok=True)
        self.cwd.mkdir(parents=True, exist_ok=True)
        table = known()
        env = {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            **found.env,
            **catalogue_agents.fill(table.get("always_env", {}) | table.get("env", {}), api=api.url, home=str(self.home)),
        }
        self.env = env
        self.command = [sys.executable, str(TEE), str(self.log), "--", *found.command()]
        self.agent = process_agent(ID, self.command[0], self.command[1:], env=env)
