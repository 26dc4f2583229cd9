"""Shared fixtures: a real `symposium vscodelm` subprocess, and Eliza as a recording external agent."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from symposium.client import BackendClient, process_agent

HERE = Path(__file__).parent
# Fakes, drivers and the agents the tests run as subprocesses (the tiers: tests/__init__.py).
SUPPORT = HERE / "support"


@pytest.fixture(autouse=True, scope="session")
def _private_state_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Backends the tests start keep their marker secret in a folder of the test run's own."""
    os.environ["SYMPOSIUM_STATE_DIR"] = str(tmp_path_factory.mktemp("state"))


@pytest.fixture
async def backend() -> AsyncIterator[BackendClient]:
    async with BackendClient.spawn(["--log-level", "info", "vscodelm"]) as client:
        yield client


class Tap:
    """Eliza as an external agent (`tests/support/acp_tap.py`), with its ACP traffic readable."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.agent = process_agent("eliza-tap", sys.executable, [str(SUPPORT / "acp_tap.py"), str(log), "--deterministic"])

    def records(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        # Only whole lines: the agent may be writing one (a long message takes several writes)
        # while the test reads.
        text = self.log.read_text()
        return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]

    def messages(self, direction: str | None = None) -> list[dict[str, Any]]:
        return [r["msg"] for r in self.records() if "msg" in r and (direction is None or r["dir"] == direction)]

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.messages() if m.get("method") == method]

    def prompts(self) -> list[str]:
        """The text of every session/prompt the agent received."""
        return [" ".join(b.get("text", "") for b in m["params"]["prompt"]) for m in self.requests("session/prompt")]

    def pids(self) -> list[int]:
        return [r["pid"] for r in self.records() if "pid" in r]


@pytest.fixture
def tap(tmp_path: Path) -> Tap:
    return Tap(tmp_path / "acp.jsonl")
