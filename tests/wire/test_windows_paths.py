"""The backend without what Windows lacks (docs/windows.md, "What is verified, and how").

No Windows machine runs these tests. `tests/support/without_posix.py` takes away, in a real
backend process on Linux, the modules, functions and signals Windows does not have, and
$SYMPOSIUM_TEST_WINDOWS=1 has the backend take the Windows code paths that can run on Linux:
stdio through worker threads (trio has no async stdio on Windows), the Windows private-file
policy (no mode bits, no os.getuid) and the state folder under %LOCALAPPDATA%.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import trio

from symposium.client import ELIZA, BackendClient, user
from symposium.process_windows import JobProcess
from tests.support.proc import process_gone

WITHOUT_POSIX = str(Path(__file__).resolve().parents[1] / "support" / "without_posix.py")
HELLO_REPLY = "How do you do. Please state your problem."
GUARD = 30  # a hang guard, not a timing budget


def windows_env(tmp_path: Path) -> dict[str, str]:
    profile = tmp_path / "profile"
    profile.mkdir()
    return {
        "SYMPOSIUM_TEST_WINDOWS": "1",
        "USERPROFILE": str(profile),
        "LOCALAPPDATA": str(profile / "AppData" / "Local"),
        "SYMPOSIUM_STATE_DIR": "",  # the default folder: %LOCALAPPDATA%\symposium
    }


def test_every_backend_module_imports_and_starts_without_posix(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", WITHOUT_POSIX, "import-all"],
        env={**os.environ, **windows_env(tmp_path)},
        capture_output=True,
        text=True,
        timeout=GUARD,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("imported ")
    state = tmp_path / "profile" / "AppData" / "Local" / "symposium"
    assert (state / "marker-secret").is_file() and (state / "written").read_text() == "ok"


async def test_eliza_answers_over_the_wire_through_the_windows_code_paths(tmp_path: Path) -> None:
    env = windows_env(tmp_path)
    async with BackendClient.spawn(env=env, launcher=(sys.executable, "-I", WITHOUT_POSIX, "symposium")) as backend:
        with trio.fail_after(GUARD):
            first = await backend.chat([user("Hello")], agent=ELIZA)
            assert first.error is None, first.error and first.error.message
            assert first.text() == HELLO_REPLY
            # A second turn continues the conversation: its marker was made with the key the
            # Windows policy kept in %LOCALAPPDATA%\symposium.
            second = await backend.chat([user("Hello"), first.assistant_message(), user("I am sad")], agent=ELIZA)
            assert second.error is None and second.text()
            big = "x" * 300_000  # a long request, read through the worker threads in many pieces
            third = await backend.chat([user(big)], agent=ELIZA)
            assert third.error is None and third.text()
        code = await backend.close()
    assert code == 0
    assert (Path(env["LOCALAPPDATA"]) / "symposium" / "marker-secret").is_file()


# An agent's stop on Windows (`symposium/process_windows.py`): the sequence is the same code on Linux, with
# the Job Object played by the agent's process group (a job ends every process in it; so does
# SIGKILL to the group, for processes that stay in it).


class GroupJob:
    """A Job Object's part, played on Linux by a process group: what the stop sequence did to it."""

    def __init__(self) -> None:
        self.group: int | None = None
        self.done: list[str] = []

    def assign(self, pid: int) -> None:
        self.group = os.getpgid(pid)

    def terminate(self) -> None:
        self.done.append("terminate")
        try:
            os.killpg(self.group, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def close(self) -> None:  # KILL_ON_JOB_CLOSE
        self.done.append("close")
        try:
            os.killpg(self.group, signal.SIGKILL)
        except ProcessLookupError:
            pass


# Starts a child that would run for a minute, says its pid, then reads stdin to its end and
# exits, or (`ignore`) goes on as if nothing had happened.
AGENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(child.pid, flush=True)
sys.stdin.read()
if sys.argv[1] == "ignore":
    time.sleep(60)
"""


async def start(behaviour: str, job: GroupJob) -> tuple[JobProcess, int]:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", AGENT, behaviour], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    job.assign(process.pid)
    agent = JobProcess(process, job, "test", grace=0.5)
    line = b""
    while not line.endswith(b"\n"):
        line += await agent.stream.receive_some()
    return agent, int(line)


async def test_an_agent_that_ends_at_stdin_eof_is_only_asked_and_what_it_left_running_ends() -> None:
    job = GroupJob()
    agent, child = await start("exit", job)
    with trio.fail_after(GUARD):
        await agent.stop()
        await process_gone(child)
    assert agent.exit_code == 0  # it ended by itself, when its stdin closed
    assert job.done == ["terminate", "close"]  # then its job: the child it left
    await agent.aclose()


async def test_an_agent_that_ignores_stdin_eof_is_ended_with_its_job_after_the_grace() -> None:
    job = GroupJob()
    agent, child = await start("ignore", job)
    with trio.fail_after(GUARD):
        await agent.stop()
        await process_gone(child)
    assert agent.exit_code == -signal.SIGKILL  # ended by the job, not by itself
    assert job.done[0] == "terminate" and job.done[-1] == "close"
    await agent.aclose()
