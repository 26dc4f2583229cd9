"""`symposium chat` with piped input: one prompt (or y/n answer) per line, as `make chat` runs it."""

from __future__ import annotations

import subprocess
import sys


def run_chat(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "symposium", "chat", "--deterministic", *args],
        input=stdin, capture_output=True, text=True, timeout=60,
    )


def test_piped_prompts_print_one_reply_each_and_exit_zero() -> None:
    done = run_chat("Hello\nI feel sad\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "> Hello\nHow do you do. Please state your problem.\n> I feel sad\nDo you often feel sad?\n"


def test_permission_is_asked_and_answered_from_the_next_line() -> None:
    done = run_chat("run ls\ny\nrun rm -rf /\nn\nHello\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Allow the agent to Run `ls`? y\n" in out and "I ran `ls`." in out
    assert "Allow the agent to Run `rm -rf /`? n\n" in out and "You did not let me run `rm -rf /`." in out
    assert out.endswith("> Hello\nHow do you do. Please state your problem.\n")


def test_an_agent_that_cannot_start_is_a_readable_error() -> None:
    done = run_chat("Hello\n", "--agent-command", "/nonexistent/agent --acp")
    assert done.returncode == 0
    assert "error: Cannot start agent 'agent': /nonexistent/agent" in done.stdout
