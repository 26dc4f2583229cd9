"""Re-record the transcript corpus in tests/support/transcripts/ (`make transcripts`).

Each scenario runs against a fresh `symposium vscodelm --trace-dir`, with real agents:
the built-in Eliza, Claude Code against the tests' fake Anthropic API and Codex (the catalogue's adapters,
tests/support/claude.py and codex.py) against their fake OpenAI Responses API, when those are installed. tests/wire/test_replay.py replays every file offline.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from symposium.client import AGENT_ACTION_TOOL_DEF, ELIZA, BackendClient, tool_result, user
from tests.support.copilot import Copilot

HERE = Path(__file__).parent / "transcripts"
READ = {"name": "read_notes", "description": "Read a file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
SEARCH = {"name": "search", "description": "Search the workspace", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}}

Scenario = Callable[[BackendClient], Awaitable[None]]


async def eliza_plain(backend: BackendClient) -> None:
    await backend.chat([user("Hello")], agent=ELIZA)


async def eliza_multi_turn(backend: BackendClient) -> None:
    copilot = Copilot(backend, ELIZA)
    for text in ("Hello", "I feel sad", "My mother hates me"):
        await copilot.ask(text)


async def eliza_permission_approved(backend: BackendClient) -> None:
    copilot = Copilot(backend, ELIZA)
    await copilot.ask("run make test")
    await copilot.allow()


async def eliza_permission_rejected(backend: BackendClient) -> None:
    copilot = Copilot(backend, ELIZA)
    await copilot.ask("run rm -rf build")
    await copilot.skip()
    await copilot.ask("I feel sad")


async def eliza_cancel(backend: BackendClient) -> None:
    copilot = Copilot(backend, ELIZA)
    await copilot.ask_cancelled("count slowly to 40")
    await copilot.ask("Hello")


async def eliza_tool_single(backend: BackendClient) -> None:
    history = [user('use tool vscode_tools::read_notes with {"path": "README.md"}')]
    call = await backend.chat(history, agent=ELIZA, tools=[READ, AGENT_ACTION_TOOL_DEF])
    history += [call.assistant_message(), tool_result(call.tool_calls()[0]["toolCallId"], "# Symposium")]
    await backend.chat(history, agent=ELIZA, tools=[READ, AGENT_ACTION_TOOL_DEF])


async def eliza_tool_parallel(backend: BackendClient) -> None:
    history = [user('use tools vscode_tools::read_notes with {"path": "a.py"} and vscode_tools::search with {"query": "TODO"}')]
    calls = await backend.chat(history, agent=ELIZA, tools=[READ, SEARCH])
    outputs = {"read_notes": "print(1)", "search": "2 matches"}
    history += [calls.assistant_message(), *(tool_result(c["toolCallId"], outputs[c["toolName"]]) for c in calls.tool_calls())]
    await backend.chat(history, agent=ELIZA, tools=[READ, SEARCH])


# Claude Code, against the fake Anthropic API ----------------------------------------------------------

WEATHER = {"name": "get_weather", "description": "The weather in a city", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}


async def _with_claude(backend: BackendClient, play: Callable[[BackendClient, Any], Awaitable[None]]) -> None:
    from tests.support.claude import ClaudeCode
    from tests.support.fake_anthropic import FakeAnthropic

    api = FakeAnthropic()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as root:
        async with trio.open_nursery() as nursery:
            await nursery.start(api.serve)
            await play(backend, ClaudeCode(api, Path(root)))
            nursery.cancel_scope.cancel()


async def claude_plain(backend: BackendClient) -> None:
    from tests.support.fake_anthropic import reply, text

    async def play(backend: BackendClient, claude: Any) -> None:
        claude.api.script(reply(text("Hello! ", "How can I help?")), reply(text("Glad to.")))
        copilot = Copilot(backend, claude.agent)
        await copilot.ask("Hello")
        await copilot.ask("Thanks")

    await _with_claude(backend, play)


async def claude_permission(backend: BackendClient) -> None:
    from tests.support.fake_anthropic import reply, text, tool_use

    async def play(backend: BackendClient, claude: Any) -> None:
        target = claude.cwd / "out.txt"
        claude.api.script(reply(text("I will write it."), tool_use("Bash", {"command": f"echo hi > {target}", "description": "Write hi"})),
                          reply(text("Done.")))
        copilot = Copilot(backend, claude.agent)
        copilot.tools = [AGENT_ACTION_TOOL_DEF]
        await copilot.ask("Write hi to out.txt")
        await copilot.allow()

    await _with_claude(backend, play)


async def claude_tools(backend: BackendClient) -> None:
    from tests.support.fake_anthropic import reply, text, tool_use

    async def play(backend: BackendClient, claude: Any) -> None:
        claude.api.script(reply(text("Let me check."), tool_use("mcp__vscode_tools__get_weather", {"city": "Paris"})), reply(text("It is sunny.")))
        copilot = Copilot(backend, claude.agent, tools=[AGENT_ACTION_TOOL_DEF, WEATHER])
        await copilot.ask("Weather in Paris?")
        await copilot.answer_tools({"get_weather": "Sunny, 25 C"})

    await _with_claude(backend, play)


async def claude_cancel(backend: BackendClient) -> None:
    from tests.support.fake_anthropic import reply, text

    async def play(backend: BackendClient, claude: Any) -> None:
        claude.api.script(reply(text("one ", "two ", "three"), stall_after=1), reply(text("Fresh answer.")))
        copilot = Copilot(backend, claude.agent)
        await copilot.ask_cancelled("Count to three")
        await claude.api.wait_for(lambda r: r.main and (r.aborted or r.finished))
        await copilot.ask("Say something else")

    await _with_claude(backend, play)


# Codex, against the fake OpenAI Responses API ---------------------------------------------------------


async def _with_codex(backend: BackendClient, play: Callable[[BackendClient, Any], Awaitable[None]], **options: Any) -> None:
    from tests.support.codex import Codex
    from tests.support.fake_openai import FakeOpenAI

    api = FakeOpenAI()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as root:
        async with trio.open_nursery() as nursery:
            await nursery.start(api.serve)
            await play(backend, Codex(api, Path(root), **options))
            nursery.cancel_scope.cancel()


async def codex_plain(backend: BackendClient) -> None:
    from tests.support.fake_openai import reply, text

    async def play(backend: BackendClient, codex: Any) -> None:
        codex.api.script(reply(text("Hello! ", "How can I help?")), reply(text("Glad to.")))
        copilot = Copilot(backend, codex.agent)
        await copilot.ask("Hello")
        await copilot.ask("Thanks")

    await _with_codex(backend, play)


async def codex_permission(backend: BackendClient) -> None:
    from tests.support.fake_openai import reply, text

    async def play(backend: BackendClient, codex: Any) -> None:
        target = codex.cwd / "out.txt"
        codex.api.script(reply(text("I will write it."), codex.shell(f"echo hi > {target}")), reply(text("Done.")))
        copilot = Copilot(backend, codex.agent)
        copilot.tools = [AGENT_ACTION_TOOL_DEF]
        await copilot.ask("Write hi to out.txt")
        await copilot.allow()

    await _with_codex(backend, play, mode="read-only")


async def codex_permission_skipped(backend: BackendClient) -> None:
    from tests.support.fake_openai import reply, text

    async def play(backend: BackendClient, codex: Any) -> None:
        target = codex.cwd / "out.txt"
        codex.api.script(reply(text("I will write it."), codex.shell(f"echo hi > {target}")), reply(text("Then I will not write it.")),
                         reply(text("Hello instead."), answers="Never mind, say hello"))
        copilot = Copilot(backend, codex.agent)
        copilot.tools = [AGENT_ACTION_TOOL_DEF]
        await copilot.ask("Write hi to out.txt")
        await copilot.skip()
        await copilot.ask("Never mind, say hello")

    await _with_codex(backend, play, mode="read-only")


async def codex_tools(backend: BackendClient) -> None:
    from tests.support.fake_openai import function_call, reply, text

    async def play(backend: BackendClient, codex: Any) -> None:
        codex.api.script(reply(text("Let me check."), function_call("get_weather", {"city": "Paris"}, namespace="mcp__vscode_tools")),
                         reply(text("It is sunny.")))
        copilot = Copilot(backend, codex.agent, tools=[AGENT_ACTION_TOOL_DEF, WEATHER])
        await copilot.ask("Weather in Paris?")
        await copilot.answer_tools({"get_weather": "Sunny, 25 C"})

    await _with_codex(backend, play)


SCENARIOS: dict[str, Scenario] = {
    "eliza-plain": eliza_plain,
    "eliza-multi-turn": eliza_multi_turn,
    "eliza-permission-approved": eliza_permission_approved,
    "eliza-permission-rejected": eliza_permission_rejected,
    "eliza-cancel": eliza_cancel,
    "eliza-tool-single": eliza_tool_single,
    "eliza-tool-parallel": eliza_tool_parallel,
    "claude-plain": claude_plain,
    "claude-permission": claude_permission,
    "claude-tools": claude_tools,
    "claude-cancel": claude_cancel,
    "codex-plain": codex_plain,
    "codex-permission": codex_permission,
    "codex-permission-skipped": codex_permission_skipped,
    "codex-tools": codex_tools,
}


async def record(name: str, scenario: Scenario, out: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with BackendClient.spawn(["vscodelm", "--trace-dir", folder]) as backend:
            with trio.fail_after(120):
                await scenario(backend)
        [path] = Path(folder).iterdir()
        # Replay does not learn what agents offer (so that it compares the same whatever ran
        # before), hence never says that the models changed: those notifications are not kept.
        lines = [line for line in path.read_text().splitlines(keepends=True) if '"method":"lm/modelsChanged"' not in line]
        (out / f"{name}.jsonl").write_text("".join(lines))
    print(f"recorded {name}")


async def main(names: list[str]) -> None:
    HERE.mkdir(exist_ok=True)
    for name, scenario in SCENARIOS.items():
        if not names or name in names:
            await record(name, scenario, HERE)


if __name__ == "__main__":
    trio.run(main, sys.argv[1:])
