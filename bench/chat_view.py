"""Enter -> first text in code-server's real Copilot Chat view, for a new chat with Claude Code
(its real ACP adapter, against the tests' fake Anthropic API) prepared: the extension's test runner
(extension/src/test/runner.ts, `--first-text`) in one code-server and one window, which it prints.

`edit_cost`: the same runner with `--edit-cost` (extension/src/test/editCost.ts): a routed edit
against Claude Code's own, and our share of each round of Copilot's tool loop, in one run.

It needs what `bash extension/scripts/test.sh` installs (Node 24, code-server, Chromium, the
extension's npm packages): it runs the same tools script first.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GUARD = 600  # a hang guard for the whole run, not a budget
EDITS = 10  # edits per turn in --edit-cost (extension/src/test/editCost.ts's EDITS)


def _runner(flag: str) -> subprocess.CompletedProcess[str]:
    script = f"source extension/scripts/tools.sh && ensure_node && ensure_chromium && ensure_code_server && ensure_npm_deps && compile && cd extension && node out/test/runner.js {flag}"
    env = {**os.environ, "SYMPOSIUM_BACKEND": str(ROOT / ".venv" / "bin" / "symposium")}
    return subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=GUARD, check=False)


def edit_cost() -> dict[str, Any]:
    """Per edit, Enter -> on disk, routed through Copilot / Claude Code's own Edit (medians of the
    runs); Enter -> the answer complete, the same; our share of a round of Copilot's tool loop."""
    done = _runner("--edit-cost")
    found = re.search(r"^edit cost: (\{.*\})$", done.stdout, re.M)
    if found is None:
        raise RuntimeError(f"the chat view run printed no edit cost (exit {done.returncode}): {(done.stdout + done.stderr)[-400:]}")
    cost = json.loads(found.group(1))
    rounds = cost["rounds"]
    if not rounds:
        raise RuntimeError("the backend's trace held no round of a routed turn")
    edits = EDITS
    result = {
        "edits": edits,
        "runs": len(cost["routedMs"]),
        "routed_ms": statistics.median(cost["routedMs"]) / edits,
        "own_ms": statistics.median(cost["ownMs"]) / edits,
        "routed_done_ms": statistics.median(cost["routedDoneMs"]) / edits,
        "own_done_ms": statistics.median(cost["ownDoneMs"]) / edits,
        "rounds": len(rounds),
        "ours_ms": statistics.median(r["ours"] for r in rounds) * 1000,
        "round_ms": statistics.median(r["whole"] for r in rounds) * 1000,
        "share": sum(r["ours"] for r in rounds) / sum(r["whole"] for r in rounds),
    }
    result["ratio"] = result["routed_ms"] / result["own_ms"]
    result["done_ratio"] = result["routed_done_ms"] / result["own_done_ms"]
    return result


def measure() -> dict[str, Any]:
    done = _runner("--first-text")
    found = re.search(r"^first text: (\d+) ms$", done.stdout, re.M)
    if found is None:
        raise RuntimeError(f"the chat view run printed no first-text time (exit {done.returncode}): {(done.stdout + done.stderr)[-400:]}")
    return {"first_text_ms": float(found.group(1))}


if __name__ == "__main__":
    print(measure(), file=sys.stderr)
