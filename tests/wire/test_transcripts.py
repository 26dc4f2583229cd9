"""Recording: `symposium vscodelm --trace-dir` keeps every channel, with secrets redacted."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import trio

from actors.store.transcript import Recorder, read
from symposium.client import AGENT_ACTION_TOOL_DEF, ELIZA, BackendClient, process_agent, tool_result, user

GUARD = 60
READ = {"name": "read_notes", "description": "Read a file", "inputSchema": {"type": "object"}}


async def test_every_channel_is_recorded_and_secrets_are_not(tmp_path: Path) -> None:
    secret = "sk-ant-very-secret-value"
    external = process_agent("eliza-ext", sys.executable, ["-m", "symposium", "eliza", "--deterministic"], env={"ANTHROPIC_API_KEY": secret})
    async with BackendClient.spawn(["vscodelm", "--trace-dir", str(tmp_path)]) as backend:
        with trio.fail_after(GUARD):
            await backend.chat([user("Hello")], agent=ELIZA)
            history = [user('use tool vscode_tools::read_notes with {"path": "a"}')]
            call = await backend.chat(history, agent=ELIZA, tools=[READ, AGENT_ACTION_TOOL_DEF])
            history += [call.assistant_message(), tool_result(call.tool_calls()[0]["toolCallId"], "contents")]
            await backend.chat(history, agent=ELIZA, tools=[READ, AGENT_ACTION_TOOL_DEF])
            await backend.chat([user("Hello")], agent=external)
    [path] = tmp_path.iterdir()
    text = path.read_text()
    records = list(read(path))
    channels = {r["ch"] for r in records}
    assert {"vscode", "agent 1 Eliza", "agent 2 eliza-ext", "mcp 2 1"} <= channels  # bridge 2: the second conversation
    methods = {(r["ch"].split()[0], r["dir"], r["msg"].get("method")) for r in records if "msg" in r}
    assert ("vscode", "in", "lm/provideLanguageModelChatResponse") in methods
    assert ("vscode", "out", "lm/responsePart") in methods
    assert ("agent", "out", "session/prompt") in methods and ("agent", "in", "session/update") in methods
    assert ("mcp", "in", "tools/call") in methods
    assert all(b["t"] >= a["t"] for a, b in itertools.pairwise(records))  # one monotonic clock
    assert secret not in text and "<redacted>" in text
    new_sessions = [r["msg"] for r in records if r.get("msg", {}).get("method") == "session/new"]
    servers = [s for m in new_sessions for s in m["params"]["mcpServers"]]
    # The bridge's secret is in a private file the entry names, never in the entry (docs/DESIGN.md, "Tool bridge").
    assert servers and all(s["env"] == [] and "--key" in s["args"] for s in servers)


async def test_an_unwritable_trace_dir_warns_once_and_the_backend_carries_on(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    async with BackendClient.spawn(["vscodelm", "--trace-dir", str(blocker / "traces")]) as backend:
        with trio.fail_after(GUARD):
            result = await backend.chat([user("Hello")], agent=ELIZA)
    assert result.completed


def test_a_failing_write_stops_recording_without_raising(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path)
    recorder._file.close()  # type: ignore[union-attr]  # as if the disk went away
    recorder.write({"ch": "vscode", "dir": "in", "msg": {}})  # logs, does not raise
    recorder.write({"ch": "vscode", "dir": "in", "msg": {}})
    assert recorder._file is None
