"""Replay: the recorded corpus passes offline, and an altered transcript fails where it was altered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from symposium.replay import replay

CORPUS = sorted((Path(__file__).parents[1] / "support" / "transcripts").glob("*.jsonl"))


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def save(records: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_the_corpus_replays(path: Path) -> None:
    failure = replay(path)
    assert failure is None, failure.report()


def test_the_corpus_covers_the_flows() -> None:
    names = {p.stem for p in CORPUS}
    assert {"eliza-plain", "eliza-multi-turn", "eliza-permission-approved", "eliza-permission-rejected", "eliza-cancel",
            "eliza-tool-single", "eliza-tool-parallel", "claude-plain", "claude-permission", "claude-tools", "claude-cancel",
            "codex-plain", "codex-permission", "codex-permission-skipped", "codex-tools"} <= names


def index_of(records: list[dict[str, Any]], predicate: Any) -> int:
    return next(i for i, r in enumerate(records) if "msg" in r and predicate(r))


def test_a_changed_part_is_caught_with_a_diff(tmp_path: Path) -> None:
    records = load(Path(__file__).parents[1] / "support" / "transcripts" / "eliza-plain.jsonl")
    i = index_of(records, lambda r: r["msg"].get("method") == "lm/responsePart" and r["msg"]["params"]["part"]["type"] == "text")
    records[i]["msg"]["params"]["part"]["value"] = "Something Eliza never said"
    failure = replay(save(records, tmp_path / "changed.jsonl"))
    assert failure is not None and failure.channel == "vscode"
    report = failure.report()
    # Text is compared as what was said, however the stream was cut into parts.
    assert '-      "value": "Something Eliza never said' in report
    assert '+      "value": "How do you ' in report


def test_a_missing_response_complete_is_caught(tmp_path: Path) -> None:
    records = load(Path(__file__).parents[1] / "support" / "transcripts" / "eliza-multi-turn.jsonl")
    del records[index_of(records, lambda r: r["msg"].get("method") == "lm/responseComplete")]
    failure = replay(save(records, tmp_path / "missing.jsonl"))
    assert failure is not None and failure.channel == "vscode"
    assert failure.actual["method"] == "lm/responseComplete"  # the backend sent what the transcript lost
    assert "lm/responseComplete" in failure.report()


def test_a_swapped_order_is_caught(tmp_path: Path) -> None:
    records = load(Path(__file__).parents[1] / "support" / "transcripts" / "eliza-plain.jsonl")
    parts = [i for i, r in enumerate(records) if r.get("msg", {}).get("method") == "lm/responsePart"]
    a, b = parts[0], parts[1]
    records[a], records[b] = records[b], records[a]
    failure = replay(save(records, tmp_path / "swapped.jsonl"))
    assert failure is not None and failure.channel == "vscode"
    swapped = records[a]["msg"]["params"]["part"]["value"] + records[b]["msg"]["params"]["part"]["value"]
    assert failure.expected["params"]["part"]["value"].startswith(swapped)


def test_replay_command_prints_pass_or_the_divergence(tmp_path: Path) -> None:
    plain = Path(__file__).parents[1] / "support" / "transcripts" / "eliza-plain.jsonl"
    ok = subprocess.run([sys.executable, "-m", "symposium", "replay", str(plain)], capture_output=True, text=True, timeout=120)
    assert (ok.returncode, ok.stdout) == (0, "PASS\n")
    records = load(plain)
    del records[index_of(records, lambda r: r["msg"].get("method") == "lm/responsePart")]
    bad = subprocess.run([sys.executable, "-m", "symposium", "replay", str(save(records, tmp_path / "bad.jsonl"))], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and bad.stdout.startswith("DIVERGED on vscode at message")


SLOW_THREAD = 0.3  # real seconds each worker thread takes more: a machine loaded by other work


def test_the_corpus_replays_when_worker_threads_are_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Virtual time waits for the backend's worker threads (its imports, its database): a thread
    slower than the replay's look at the clock used to let a 120 s timeout fire mid-replay."""
    run_sync = trio.to_thread.run_sync

    async def slow(fn: Any, *args: Any, **kwargs: Any) -> Any:
        def late(*a: Any) -> Any:
            time.sleep(SLOW_THREAD)  # on the worker thread: the work itself takes longer
            return fn(*a)

        return await run_sync(late, *args, **kwargs)

    monkeypatch.setattr(trio.to_thread, "run_sync", slow)
    failures = {path.stem: failure.report() for path in CORPUS if (failure := replay(path)) is not None}
    assert failures == {}


def test_the_corpus_replays_while_every_core_is_busy() -> None:
    """The replay follows causality, not the machine's speed: the corpus passes while busy loops
    (as many as there are cores) compete with it."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        failures = {path.stem: failure.report() for path in CORPUS if (failure := replay(path)) is not None}
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert failures == {}
