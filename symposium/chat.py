"""`symposium chat`: a terminal chat through the real backend, as the extension would drive it.

It spawns `symposium vscodelm`, sends the whole history with every request, prints text
as it streams (thinking dimmed), asks y/n when the agent wants permission
(`symposium-agent-action`), and Ctrl-C cancels the turn in flight with `lm/cancel`.
When stdin is not a terminal it reads one prompt (or y/n answer) per line.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

import trio

from actors.shared.platform import ON_WINDOWS
from protocol.host.windows import split_command
from protocol.vscode.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, ChatResult, process_agent, tool_result, user

DIM, RESET, RED = "\033[2m", "\033[0m", "\033[31m"


class Terminal:
    """Input lines and styled output; plain text when not talking to a terminal."""

    def __init__(self) -> None:
        self.interactive = sys.stdin.isatty()
        self.styled = sys.stdout.isatty()

    async def read_line(self, prompt: str) -> str | None:
        if self.interactive:
            self.write(prompt)
        line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        return line.rstrip("\n") if line else None

    def write(self, text: str, style: str = "") -> None:
        if style and self.styled:
            text = f"{style}{text}{RESET}"
        sys.stdout.write(text)
        sys.stdout.flush()

    def show_part(self, part: dict[str, Any]) -> None:
        match part.get("type"):
            case "text":
                self.write(part["value"])
            case "thinking":
                self.write(part["value"], DIM)


def agent_from_args(args: argparse.Namespace) -> dict[str, Any]:
    if not args.agent_command:
        return {"eliza": {"deterministic": bool(args.deterministic)}}
    argv = split_command(args.agent_command, windows=ON_WINDOWS)
    env = {}
    for item in args.agent_env:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--agent-env expects NAME=VALUE, got {item!r}")
        env[name] = value
    return process_agent(os.path.basename(argv[0]), argv[0], argv[1:], env)


class ChatSession:
    def __init__(self, client: BackendClient, terminal: Terminal, agent: dict[str, Any]) -> None:
        self.client = client
        self.terminal = terminal
        self.agent = agent
        self.history: list[dict[str, Any]] = []
        self.in_flight: ChatResult | None = None

    async def turn(self, text: str) -> bool:
        """One user prompt, through any permission round trips. False if the backend is gone."""
        self.history.append(user(text))
        while True:
            result = await self._send()
            if result.error is not None:
                if result.error.code == -32800:
                    self.terminal.write("\n[cancelled]\n", DIM)
                    self.history.append(result.assistant_message())  # as VS Code keeps a stopped reply
                    return True
                self.terminal.write(f"\nerror: {result.error.message}\n", RED)
                return self.client.process is None or self.client.process.returncode is None
            self.terminal.write("\n")
            calls = [c for c in result.tool_calls() if c.get("toolName") == AGENT_ACTION_TOOL_DEF["name"]]
            if not calls:
                self.history.append(result.assistant_message())
                return True
            call = calls[0]
            # As VS Code's card does: only an approval is the token; a "no" is a result too, and
            # the agent's turn goes on (it says what it does instead).
            approved = await self._approve(call.get("parameters") or {})
            self.history.append(result.assistant_message())
            self.history.append(tool_result(call["toolCallId"], AGENT_ACTION_APPROVED if approved else "The user did not allow it"))

    async def _send(self) -> ChatResult:
        result = self.client.start_chat(self.history, agent=self.agent, tools=[AGENT_ACTION_TOOL_DEF], on_part=self.terminal.show_part)
        self.in_flight = result
        try:
            await result.done.wait()
        finally:
            self.in_flight = None
        return result

    async def _approve(self, parameters: dict[str, Any]) -> bool:
        title = parameters.get("title") or parameters.get("kind") or "an action"
        answer = await self.terminal.read_line(f"Allow the agent to {title}? [y/N] ")
        if answer is not None and not self.terminal.interactive:
            self.terminal.write(f"Allow the agent to {title}? {answer}\n")
        return (answer or "").strip().lower() in ("y", "yes")


async def chat_main(args: argparse.Namespace) -> int:
    terminal = Terminal()
    agent = agent_from_args(args)
    backend_args = ["--log-level", args.log_level, "vscodelm"]
    if args.trace_dir:
        backend_args += ["--trace-dir", args.trace_dir]
    async with BackendClient.spawn(backend_args) as client:
        session = ChatSession(client, terminal, agent)
        with trio.open_signal_receiver(signal.SIGINT) as interrupts:
            async with trio.open_nursery() as nursery:

                async def on_interrupt() -> None:
                    async for _ in interrupts:
                        if session.in_flight is not None:
                            await client.cancel(session.in_flight.request_id)
                        else:
                            nursery.cancel_scope.cancel()

                nursery.start_soon(on_interrupt)
                if terminal.interactive:
                    terminal.write("Chatting with the agent through `symposium vscodelm`. Ctrl-C cancels a reply; Ctrl-D quits.\n", DIM)
                status = 0
                while True:
                    line = await terminal.read_line("> ")
                    if line is None:
                        break
                    if not line.strip():
                        continue
                    if not terminal.interactive:
                        terminal.write(f"> {line}\n")
                    if not await session.turn(line):
                        status = 1
                        break
                nursery.cancel_scope.cancel()
    return status


def run_chat(args: argparse.Namespace) -> int:
    try:
        return trio.run(chat_main, args)
    except KeyboardInterrupt:
        return 130
