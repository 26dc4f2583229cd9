"""Claude Code, Codex or Gemini CLI against its fake model API, for a test outside pytest (the VS Code tests).

    python -m tests.support.serve_fake_agent claude|codex|gemini ROOT [--session-in FOLDER PROMPT] [--sandbox MODE]

Serves the fake API on 127.0.0.1 and prints, as JSON lines on stdout: first the agent's entry for
`symposium.agents` (`{"agent": {"command", "args", "env"}}`, or `{"error": ...}` when the agent
cannot be installed); with `--session-in`, then `{"session": ID}` once the agent, run as another
client would run it, has had a session in FOLDER take PROMPT; then `{"model": ..., "userTexts":
[...], "toolResults": [...], "toolCalls": [...], "assistantTexts": [...], "images": [...]}` for each model
request of an agent's own turn, as the API received it (`toolResults`: the text of each tool result it
carries; `toolCalls`: the name of each tool call of the model's it carries; `images`: each image of the
user's messages, `{"mediaType", "data"}` with the data in base64), and what the agent's options made of
the request (`options`: `effort`, the reasoning effort it asks for; Claude Code's `planMode`, whether
what the request adds since the model's last answer says plan mode is active, as Claude Code says once
as it enters plan mode; Codex's `sandbox`, the sandbox mode it was last
told of, and its `planMode`, whether it last told its model it is in Plan mode). Its stdin takes JSON lines `{"script": [REPLY, ...]}` that queue
scripted replies (shared with the Python tests' fakes): REPLY is `{"answers": TEXT?, "text": [CHUNK,
...]?, "calls": [{"name", "input", "namespace"?} | {"name", "patch"}]?, "stallAfter": N?, "usage": [IN, OUT]?}`; a turn no
reply fits is answered with a short text. Ends when its stdin closes. `--sandbox` (Codex only): its
`sandbox_mode`; `workspace-write` makes it offer its approval presets.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import trio

from tests.support import codex, fake_anthropic, fake_gemini, fake_openai
from tests.support.acp_direct import run_outside
from tests.support.claude import ClaudeCode, installed_claude
from tests.support.codex import Codex, installed_codex
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_openai import FakeOpenAI
from tests.support.gemini import Gemini, installed_gemini


def scripted(kind: str, spec: dict[str, Any]) -> fake_anthropic.Reply | fake_openai.Reply | fake_gemini.Reply:
    """One reply of a `{"script": [...]}` line, built with the fake API's own builders."""
    options = {"answers": spec.get("answers"), "stall_after": spec.get("stallAfter"), "usage": tuple(spec.get("usage", (10, 5)))}
    chunks = spec.get("text") or []
    calls = spec.get("calls") or []
    if kind == "claude":
        blocks = ([fake_anthropic.text(*chunks)] if chunks else []) + [fake_anthropic.tool_use(c["name"], c["input"]) for c in calls]
        return fake_anthropic.reply(*blocks, **options)
    if kind == "gemini":
        parts = ([fake_gemini.text(*chunks)] if chunks else []) + [fake_gemini.function_call(c["name"], c["input"]) for c in calls]
        return fake_gemini.reply(*parts, **options)
    items = ([fake_openai.text(*chunks)] if chunks else []) + [
        fake_openai.custom_tool_call(c["name"], c["patch"]) if "patch" in c else fake_openai.function_call(c["name"], c["input"], namespace=c.get("namespace"))
        for c in calls
    ]
    return fake_openai.reply(*items, **options)


CODEX_MODES = {"read-only": "read-only", "workspace-write": "agent", "danger-full-access": "agent-full-access"}
SANDBOX = re.compile(r"`sandbox_mode` is `([\w-]+)`")


def options_seen(request: fake_anthropic.Request | fake_openai.Request | fake_gemini.Request) -> dict[str, Any]:
    """What the agent's options made of a model request (its mode, its effort), as far as the request shows it."""
    body = request.body or {}
    if isinstance(request, fake_anthropic.Request):
        messages = body.get("messages") or []
        answered = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        # Claude Code tells its model as it enters plan mode, in a system message after the prompt.
        return {"effort": (body.get("output_config") or {}).get("effort"), "planMode": "Plan mode is active" in json.dumps(messages[answered + 1 :])}
    if isinstance(request, fake_openai.Request):
        told = SANDBOX.findall(json.dumps(body))
        return {"effort": (body.get("reasoning") or {}).get("effort"), "sandbox": told[-1] if told else None, "planMode": codex.planning(body)}
    return {}


def say(line: dict) -> None:
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


async def main(kind: str, root: Path, outside: tuple[str, str] | None, sandbox: str | None = None) -> int:
    found = await trio.to_thread.run_sync({"claude": installed_claude, "codex": installed_codex, "gemini": installed_gemini}[kind])
    if isinstance(found, str):
        say({"error": found})
        return 1
    async with trio.open_nursery() as nursery:
        api: FakeAnthropic | FakeOpenAI | FakeGemini = {"claude": FakeAnthropic, "codex": FakeOpenAI, "gemini": FakeGemini}[kind]()
        await nursery.start(api.serve)
        root.mkdir(parents=True, exist_ok=True)
        maker = {"claude": ClaudeCode, "codex": Codex, "gemini": Gemini}[kind]
        # The catalogue's adapter takes its sandbox as its first mode (`INITIAL_AGENT_MODE`), not from config.toml.
        made = Codex(api, root, mode=CODEX_MODES[sandbox]) if kind == "codex" and sandbox else maker(api, root)  # type: ignore[arg-type]
        definition = made.agent
        agent = definition["mcp_server"]
        say({"agent": {"command": agent["command"], "args": agent["args"], "env": {v["name"]: v["value"] for v in agent["env"]}}})
        if outside is not None:
            say({"session": await run_outside(definition, outside[0], [outside[1]])})

        async def report_models() -> None:
            seen = 0
            while True:
                await api.wait_for(lambda _, seen=seen: len(api.main) > seen)
                for request in api.main[seen:]:
                    say({
                        "model": (request.body or {}).get("model"),
                        "userTexts": request.user_texts(),
                        "toolResults": [output["text"] for output in request.tool_outputs()],
                        "toolCalls": [u["name"] for u in request.tool_uses()] if isinstance(request, fake_anthropic.Request) else [c.get("name") for c in request.function_calls()],
                        "assistantTexts": request.assistant_texts(),
                        "images": [{"mediaType": media, "data": data} for media, data in request.images()],
                        **({"tools": request.tool_names()} if isinstance(request, fake_gemini.Request) else {}),
                        "options": options_seen(request),
                    })
                seen = len(api.main)

        nursery.start_soon(report_models)
        stdin = trio.lowlevel.FdStream(0)
        buffer = b""
        while data := await stdin.receive_some():
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in filter(None, lines):
                api.script(*(scripted(kind, spec) for spec in json.loads(line)["script"]))
        nursery.cancel_scope.cancel()
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sandbox = None
    if "--sandbox" in args:
        at = args.index("--sandbox")
        sandbox, args = args[at + 1], args[:at] + args[at + 2 :]
    session_in = (args[3], args[4]) if len(args) == 5 and args[2] == "--session-in" else None
    sys.exit(trio.run(main, args[0], Path(args[1]), session_in, sandbox))
