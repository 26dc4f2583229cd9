"""Every npm and PyPI agent of the catalogue, through the real backend, one test per agent: the flows a user
meets, each recorded as a cell of docs/agents.md (tests/support/agents_doc.py writes it at the end of the run).

The agents are the catalogue's (extension/catalogue/registry.json), installed at their catalogue versions
by `make agents` (tests/support/catalogue_agents.py) and started as Add Agent starts them, behind
tests/support/acp_tee.py so the test reads their ACP traffic, each with a HOME of the test's own. What the
suite knows of an agent (the fake model API it can be pointed at, what goes in its entry for that, the
call that has it run a command, the programs it runs and does not bring: `requires`, installed beside it and
put on its PATH) is data in tests/support/agents.toml. The flows:

- initialize: what the agent declares (its version, sign-in methods, capabilities);
- sign-in: a chat with no credentials anywhere: how it ends (a session, or the failure and its methods);
- prompt: with what a user puts in the entry (an API key, a base URL, a model), a chat the fake answers;
- permission: the model asks for a shell command; the agent's permission request reaches the chat as a
  confirmation, and approving it runs the command;
- cancel: a chat cancelled mid-stream ends cancelled, and the next one is answered.

An agent that cannot be installed here is skipped with the install's reason (its row says it). A flow the
agent cannot do (no fake known, an agent that runs commands without asking) is recorded, not failed; a
flow that breaks for an agent the table says answers fails the test, after every flow has been recorded,
and after the flows have run `RERUNS` more times to say in how many of the runs it failed (its cell and the
failure say "failed in k of 5 runs", flaky when not in all): never passed on a second try.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.shared.failures import FailureKind
from protocol.vscode.lm import AGENT_ACTION_APPROVED, AGENT_ACTION_TOOL
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, ChatResult, process_agent, tool_result, user
from tests.conftest import Tap
from tests.support import agents_doc, catalogue_agents, fake_anthropic, fake_chat, fake_gemini, fake_openai

TABLE = tomllib.loads((Path(__file__).resolve().parents[1] / "support" / "agents.toml").read_text())
AGENTS = catalogue_agents.load()
TEE = Path(__file__).resolve().parents[1] / "support" / "acp_tee.py"

FLOW_GUARD = 90  # a hang guard per flow, not a timing budget: an agent's first start can take long
SIGNIN_GUARD = 45  # an agent with no credentials may retry its API for long: past this, the flow says so

# The failure kind of "sign in first", where the backend has it (docs/DESIGN.md, Sign-in).
SIGNIN_KIND = getattr(FailureKind, "AUTH_REQUIRED", None)

FAKES: dict[str, Any] = {
    "anthropic": (fake_anthropic.FakeAnthropic, fake_anthropic.reply, fake_anthropic.text, fake_anthropic.tool_use),
    "openai": (fake_openai.FakeOpenAI, fake_openai.reply, fake_openai.text, fake_openai.function_call),
    "chat": (fake_chat.FakeChat, fake_chat.reply, fake_chat.text, fake_chat.tool_call),
    "gemini": (fake_gemini.FakeGemini, fake_gemini.reply, fake_gemini.text, fake_gemini.function_call),
}


class Run(Tap):
    """One start of the agent: its definition (command, arguments, entry env), its HOME, its ACP log."""

    def __init__(self, agent: catalogue_agents.CatalogueAgent, root: Path, env: dict[str, str]) -> None:
        super().__init__(root / "acp.jsonl")
        self.home = root / "home"
        self.cwd = root / "work"
        self.home.mkdir(parents=True)
        self.cwd.mkdir()
        full = {"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / ".config"), "XDG_DATA_HOME": str(self.home / ".local/share"),
                "XDG_CACHE_HOME": str(self.home / ".cache"), "XDG_STATE_HOME": str(self.home / ".local/state"), **agent.env, **env}
        command = agent.command()
        self.agent = process_agent(agent.id, sys.executable, [str(TEE), str(self.log), "--", *command], env=full)

    async def chat(self, backend: BackendClient, history: list[Any], **options: Any) -> ChatResult:
        return await backend.chat(history, agent=self.agent, cwd=str(self.cwd), **options)

    def result_of(self, method: str) -> Any:
        """The agent's answer to the first request of `method` it was sent (its result or its error)."""
        asked = [m for m in self.messages("c2a") if m.get("method") == method]
        if not asked:
            return None
        answers = [m for m in self.messages("a2c") if m.get("id") == asked[0].get("id") and "method" not in m]
        return answers[0] if answers else None


def short(text: Any, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_cell(result: ChatResult) -> str:
    error = result.error
    assert error is not None
    data = error.data if isinstance(error.data, dict) else {}
    kind = data.get("kind", error.code)
    methods = data.get("methods") or data.get("authMethods") or []
    named = ", ".join(m.get("name") or m.get("id", "?") if isinstance(m, dict) else str(m) for m in methods)
    return f"`{kind}`: {short(error.message)}" + (f" — methods: {named}" if named else "")


def describe_initialize(answer: Any) -> tuple[bool, str, list[str]]:
    """(initialized, the cell, the sign-in methods it declares as `id (type)`)."""
    if answer is None:
        return False, "no answer", []
    if "error" in answer:
        return False, f"refused: {short(answer['error'].get('message'))}", []
    result = answer.get("result") or {}
    methods = []
    for method in result.get("authMethods") or []:
        meta = method.get("_meta") or {}
        kind = method.get("type") or ("terminal" if "terminal-auth" in meta or meta.get("type") == "terminal" else "agent")
        methods.append(f"{method.get('id')} ({kind}{' ' + ','.join(method['vars']) if method.get('vars') else ''})")
    caps = result.get("agentCapabilities") or {}
    sessions = caps.get("sessionCapabilities") or {}
    declared = [name for name, present in (("load", caps.get("loadSession")), ("list", "list" in sessions), ("resume", "resume" in sessions),
                                           ("close", "close" in sessions), ("image", (caps.get("promptCapabilities") or {}).get("image"))) if present]
    cell = f"✓ protocol {result.get('protocolVersion')}" + (f"; {', '.join(declared)}" if declared else "")
    return True, cell, methods


@pytest.fixture(params=[a.id for a in AGENTS] or ["none"])
def catalogue_agent(request: pytest.FixtureRequest) -> catalogue_agents.CatalogueAgent:
    agent = next((a for a in AGENTS if a.id == request.param), None)
    if agent is None:
        pytest.skip("the catalogue has no npm or PyPI agent")
    return agent


async def test_conformance(catalogue_agent: catalogue_agents.CatalogueAgent, tmp_path: Path, nursery: trio.Nursery) -> None:
    agent = catalogue_agent
    known = TABLE.get(agent.id, {})
    row = agents_doc.Row(agent.id, agent.name, agent.spec, agent.kind)
    agents_doc.record(row)
    if not agent.installed():
        failed = agent.failure()
        row.install = f"✗ {failed['reason']}" if failed else "not installed (run `make agents`)"
        pytest.skip(f"{agent.id} is not installed: {failed['reason'] if failed else 'run make agents'}")
    for need in catalogue_agents.requires(agent):
        if not need.installed():
            failed = need.failure()
            why = failed["reason"] if failed else "not installed (run `make agents`)"
            row.install = f"✗ it needs `{need.cmd}` ({need.spec}): {why}"
            pytest.skip(f"{agent.id} needs {need.spec}: {why}")
    # What `{requires}` and `{PATH}` stand for in its entry (tests/support/agents.toml).
    paths = {"requires": os.pathsep.join(str(need.bin_folder) for need in catalogue_agents.requires(agent)), "PATH": os.environ.get("PATH", "")}
    row.install = "✓" + (f" (with what it runs, on its PATH: {', '.join(f'`{need.cmd}` from npm `{need.spec}`' for need in catalogue_agents.requires(agent))})"
                         if paths["requires"] else "")
    problems: list[str] = []

    async with BackendClient.spawn(["--log-level", "info", "vscodelm"]) as backend:
        # Initialize and sign-in: no credentials anywhere.
        bare = Run(agent, tmp_path / "bare", catalogue_agents.fill(known.get("always_env", {}), home=str(tmp_path / "bare" / "home"), **paths))
        with trio.move_on_after(SIGNIN_GUARD) as guard:
            signin = await bare.chat(backend, [user("Hello")])
        initialized, row.initialize, methods = describe_initialize(bare.result_of("initialize"))
        row.methods = ", ".join(methods) or "none"
        if not initialized:
            problems.append(f"initialize: {row.initialize}")
        if guard.cancelled_caught:
            row.signin = f"no answer in {SIGNIN_GUARD} s (it retries its own service)"
        elif signin.error is not None:
            row.signin = failure_cell(signin)
        else:
            row.signin = "answered with no credentials" if signin.text() else "a session, then an empty turn"

        # An agent taken no further here must at least end in a sign-in the user can act on (where the
        # backend names that failure: protocol/shared/failures.py), unless the table says why it cannot.
        if "api" not in known and SIGNIN_KIND and "signin" not in known and not row.signin.startswith(f"`{SIGNIN_KIND}`"):
            problems.append(f"sign-in: {row.signin}")
        if known.get("signin"):
            row.signin += f" ({known['signin']})"
        if "api" not in known:
            why = known.get("blocked", "no fake model API known for it (tests/support/agents.toml)")
            row.prompt = f"– {why}"
            row.permission = row.cancel = "–"
        else:
            flows: list[str] = []
            await answered_flows(agent, known, tmp_path / "first", nursery, backend, row, flows, paths)
            if flows:
                problems += await failure_rates(agent, known, tmp_path, nursery, backend, row, flows, paths)
    if problems:
        pytest.fail(f"{agent.id}: " + "; ".join(problems))


# After a flow fails, the flows run this many more times, afresh: not to pass on a later try (the test fails
# all the same), but to say how often it fails, so that a flaky agent is reported as flaky, with its rate, and a
# broken one as broken. Five runs in all tell one failure in five from every time; a hanging flow makes the
# reruns as long (FLOW_GUARD each), which only a failing agent pays.
RERUNS = 4

# The cell of docs/agents.md each flow's problems are about, by the name they start with.
FLOW_CELLS = {"prompt": "prompt", "permission": "permission", "cancel": "cancel", "VS Code's tools": "tools"}


async def failure_rates(agent: catalogue_agents.CatalogueAgent, known: dict[str, Any], tmp_path: Path, nursery: trio.Nursery,
                        backend: BackendClient, row: agents_doc.Row, first: list[str], paths: dict[str, str]) -> list[str]:
    """The first run's problems, each with how many of the runs its flow failed in (`RERUNS` more runs), and the
    same said in its cell of `row` (which keeps the first run's cells); a flow that failed only in a rerun too."""
    runs = RERUNS + 1
    failed = collections.Counter(p.split(":")[0] for p in set(first))
    said = {p.split(":")[0]: p for p in first}
    for n in range(RERUNS):
        again: list[str] = []
        await answered_flows(agent, known, tmp_path / f"rerun-{n + 1}", nursery, backend, agents_doc.Row(agent.id, agent.name, agent.spec, agent.kind), again, paths)
        failed.update({p.split(":")[0] for p in again})
        said.update({p.split(":")[0]: p for p in again if p.split(":")[0] not in said})
    problems = []
    for flow, count in failed.items():
        rate = f"failed in {count} of {runs} runs" + (" (flaky)" if count < runs else "")
        problems.append(f"{said[flow]} — {rate}")
        if (cell := FLOW_CELLS.get(flow)) is not None:
            text = getattr(row, cell)
            setattr(row, cell, f"{text}; {rate}" if text.startswith("✗") else f"✗ {rate}: {said[flow].partition(': ')[2].removeprefix('✗ ')}")
    return problems


async def answered_flows(agent: catalogue_agents.CatalogueAgent, known: dict[str, Any], tmp_path: Path, nursery: trio.Nursery,
                         backend: BackendClient, row: agents_doc.Row, problems: list[str], paths: dict[str, str]) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    server_class, reply, text, call = FAKES[known["api"]]
    api = server_class()
    await nursery.start(api.serve)
    try:
        await _flows(agent, known, tmp_path, api, backend, row, problems, reply, text, call, paths)
    finally:
        # What the fake was asked, for whoever reads a failure (the test's own folder).
        with open(tmp_path / "api.jsonl", "w") as log:
            for r in api.requests:
                log.write(json.dumps({"method": r.method, "path": r.path, "main": r.main, "scripted": r.reply is not None, "body": r.body}) + "\n")


# What `vscode_tools` tells an agent of itself (its MCP `instructions`, actors/bridge/tool_bridge.py): an agent that
# defers MCP tools behind a search of its own may describe the server to its model with it.
BRIDGE_INSTRUCTIONS = "Tools of the VS Code window this conversation runs in."

# A VS Code tool offered with every request: the agent's model must be given it (through `vscode_tools`).
PROBE = {"name": "symposium_probe", "description": "Look up a project note by key", "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}}}


def declared_tools(body: Any) -> list[str]:
    """The names of the tools a model request declares, in any of the fakes' APIs (Anthropic's and the
    Responses API's `tools[].name`, Chat Completions' `tools[].function.name`, Gemini's
    `tools[].functionDeclarations[].name`)."""
    names: list[str] = []
    for tool in (body.get("tools") or []) if isinstance(body, dict) else []:
        if isinstance(tool, dict):
            names += [str(tool.get("name") or (tool.get("function") or {}).get("name") or "")]
            names += [str(d.get("name")) for d in tool.get("functionDeclarations") or [] if isinstance(d, dict)]
    return names


def tools_cell(bodies: list[Any]) -> str:
    """Whether the agent's model was given the tool VS Code offered (`PROBE`, under the agent's own name for it,
    which contains ours): declared among its tools; or named to it and declared on demand (an agent that defers
    MCP tools behind a tool search of its own, naming them in its prompt); or its server named, the tools found by
    that search; or not at all."""
    if any(PROBE["name"] in name for body in bodies for name in declared_tools(body)):
        return "✓ given to its model"
    if any(PROBE["name"] in json.dumps(body) for body in bodies):
        return "✓ named to its model, declared when the model asks (the agent's own tool search)"
    if any(BRIDGE_INSTRUCTIONS in json.dumps(body) for body in bodies):
        return "✓ `vscode_tools` described to its model, its tools found through the agent's own tool search"
    return "✗ not among the tools its model was given"


async def _flows(agent: catalogue_agents.CatalogueAgent, known: dict[str, Any], tmp_path: Path, api: Any, backend: BackendClient,
                 row: agents_doc.Row, problems: list[str], reply: Any, text: Any, call: Any, paths: dict[str, str]) -> None:
    root = tmp_path / "keyed"
    home = root / "home"
    names = {"api": api.url, "home": str(home), **paths}
    run = Run(agent, root, catalogue_agents.fill(known.get("always_env", {}) | known.get("env", {}), **names))
    for path, content in catalogue_agents.fill(known.get("files", {}), **names).items():
        target = home / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)

    # Prompt: the fake's scripted answer comes out as the chat's text.
    api.script(reply(text("Hello ", "from the fake model.")))
    with trio.move_on_after(FLOW_GUARD):
        prompt = await run.chat(backend, [user("Say hello")], tools=[PROBE])
    if prompt.error is None and prompt.completed and prompt.text().endswith("Hello from the fake model."):
        row.prompt = f"✓ {known['api']} fake: {', '.join(sorted(set(known.get('env', {})) - set(known.get('always_env', {}))))}" \
            + (f"; in its HOME, its own configuration: {', '.join(known.get('files', {}))}" if known.get("files") else "")
        first_turn = len(api.main)  # the model requests of the first turn, for the tools cell
    else:
        row.tools = "– (no answer)"
        row.prompt = f"✗ {failure_cell(prompt) if prompt.error else short(prompt.text() or 'no answer') }"
        problems.append(f"prompt: {row.prompt}")
        row.permission = row.cancel = "– (no answer)"
        return
    history = [user("Say hello"), prompt.assistant_message()]

    # Permission: a shell command, confirmed in the chat, then run.
    shell = known.get("shell")
    if shell:
        out = run.cwd / "out.txt"
        api.script(reply(text("I will write it."), call(shell["tool"], catalogue_agents.fill(shell["args"], command=f"echo hi > {out}"))),
                   reply(text("Done: the file is written.")))
        tools = [AGENT_ACTION_TOOL_DEF, PROBE]
        history.append(user("Write hi to out.txt"))
        with trio.move_on_after(FLOW_GUARD):
            ask = await run.chat(backend, history, tools=tools)
            calls = [c for c in ask.tool_calls() if c["toolName"] == AGENT_ACTION_TOOL]
            if ask.error is None and calls:
                history += [ask.assistant_message(), tool_result(calls[0]["toolCallId"], AGENT_ACTION_APPROVED)]
                done = await run.chat(backend, history, tools=tools)
                if done.error is None and out.exists() and "Done: the file is written." in done.text():
                    row.permission = f"✓ asked ({calls[0]['parameters'].get('kind', '?')}), approved, ran"
                    history.append(done.assistant_message())
                else:
                    row.permission = f"✗ approved, then {failure_cell(done) if done.error else 'the command did not run'}"
            elif ask.error is None and out.exists():
                row.permission = "ran the command without asking (" + known.get("permission", "its default mode") + ")"
                history.append(ask.assistant_message())
            elif ask.error is not None:
                row.permission = f"✗ {failure_cell(ask)}"
            else:
                row.permission = f"✗ neither asked nor ran it: {short(ask.text())}"
        if not row.permission:
            row.permission = f"✗ no answer in {FLOW_GUARD} s"
        if row.permission.startswith("✗"):
            problems.append(f"permission: {row.permission}")
    else:
        row.permission = "– (no shell tool known)"

    # Cancel: mid-stream, then the next chat is answered.
    # Each for its own prompt: an agent's side request between turns (Grok Build's dashboard line) takes neither.
    api.script(reply(text("one ", "two ", "three"), stall_after=1, answers="Count to three"), reply(text("Fresh ", "answer."), answers="Say something else"))
    history.append(user("Count to three"))
    with trio.move_on_after(FLOW_GUARD):
        pending = backend.start_chat(history, agent=run.agent, cwd=str(run.cwd), tools=[PROBE])
        await pending.first_part.wait()
        await backend.cancel(pending.request_id)
        await pending.done.wait()
        cancelled = pending.error is not None and pending.error.code == -32800
        history += [pending.assistant_message(), user("Say something else")]
        after = await run.chat(backend, history, tools=[PROBE])
        if cancelled and after.error is None and after.text().endswith("Fresh answer."):
            row.cancel = "✓ cancelled, next turn answered"
        else:
            row.cancel = f"✗ {'cancelled' if cancelled else 'not cancelled'}; next turn: {failure_cell(after) if after.error else short(after.text())}"
    if not row.cancel:
        row.cancel = f"✗ no answer in {FLOW_GUARD} s"
    if row.cancel.startswith("✗"):
        problems.append(f"cancel: {row.cancel}")

    # VS Code's tools reach the agent only if it starts our MCP server and gives its model the tools. VS Code
    # offers them with every request, as the flows above did: on the first turn already, or only later.
    bodies = [r.body for r in api.main]
    row.tools = tools_cell(bodies[:first_turn])
    if not row.tools.startswith("✓") and (later := tools_cell(bodies[first_turn:])).startswith("✓"):
        row.tools = f"{later}, from a later turn on (not on the first)"
    if known.get("tools"):
        if row.tools.startswith("✓"):
            problems.append(f"VS Code's tools: {row.tools}, yet tests/support/agents.toml says it cannot ({known['tools']})")
        row.tools += f": {known['tools']}"
    elif not row.tools.startswith("✓"):
        problems.append(f"VS Code's tools: {row.tools}")
