"""Replay: the recorded corpus passes offline, and an altered transcript fails where it was altered."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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
