"""The real agents as fixtures: each with its fake model API serving for the test, skipped (saying
why) only when its adapter cannot be installed from npm. `agent` runs a test once per agent."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from tests.support.claude import ClaudeCode, installed_claude
from tests.support.codex import Codex, installed_codex
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_openai import FakeOpenAI
from tests.support.real_agent import RealAgent


async def serving(nursery: trio.Nursery, installed, api):  # type: ignore[no-untyped-def]
    """`api` serving in the test's nursery, once the agent is known to be installed."""
    found = await trio.to_thread.run_sync(installed)
    if isinstance(found, str):
        pytest.skip(found)
    await nursery.start(api.serve)
    return api


@pytest.fixture
async def claude_api(nursery: trio.Nursery) -> FakeAnthropic:
    return await serving(nursery, installed_claude, FakeAnthropic())


@pytest.fixture
async def codex_api(nursery: trio.Nursery) -> FakeOpenAI:
    return await serving(nursery, installed_codex, FakeOpenAI())


@pytest.fixture
def claude(claude_api: FakeAnthropic, tmp_path: Path) -> ClaudeCode:
    return ClaudeCode(claude_api, tmp_path)


@pytest.fixture
def codex(codex_api: FakeOpenAI, tmp_path: Path) -> Codex:
    return Codex(codex_api, tmp_path)


@pytest.fixture
def cautious_codex(codex_api: FakeOpenAI, tmp_path: Path) -> Codex:
    """Codex in its read-only mode, which asks before a command or an edit its sandbox would stop."""
    return Codex(codex_api, tmp_path, mode="read-only")


@pytest.fixture(params=["claude", "codex"])
def agent(request: pytest.FixtureRequest) -> RealAgent:
    """Each real agent in turn, as it starts by default."""
    return request.getfixturevalue(request.param)


@pytest.fixture(params=["claude", "cautious_codex"], ids=["claude", "codex"])
def cautious_agent(request: pytest.FixtureRequest) -> RealAgent:
    """Each real agent in turn, asking before it runs a command (Claude Code does by default)."""
    return request.getfixturevalue(request.param)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """docs/agents.md from the conformance suite's rows, when it ran (tests/support/agents_doc.py)."""
    from tests.support import agents_doc, catalogue_agents

    agents_doc.write([a.id for a in catalogue_agents.load()])
