"""Enter -> first text in code-server's real Copilot Chat view, for a new chat with Claude Code
(its real ACP adapter, against the tests' fake Anthropic API) prepared: the extension's test runner
(extension/src/test/runner.ts, `--first-text`) in one code-server and one window, which it prints.

It needs what `bash extension/scripts/test.sh` installs (Node 24, code-server, Chromium, the
extension's npm packages): it runs the same tools script first.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GUARD = 600  # a hang guard for the whole run, not a budget


def measure() -> dict[str, Any]:
    script = 'source extension/scripts/tools.sh && ensure_node && ensure_chromium && ensure_code_server && ensure_npm_deps && compile && cd extension && node out/test/runner.js --first-text'
    env = {**os.environ, "SYMPOSIUM_BACKEND": str(ROOT / ".venv" / "bin" / "symposium")}
    done = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=GUARD, check=False)
    found = re.search(r"^first text: (\d+) ms$", done.stdout, re.M)
    if found is None:
        raise RuntimeError(f"the chat view run printed no first-text time (exit {done.returncode}): {(done.stdout + done.stderr)[-400:]}")
    return {"first_text_ms": float(found.group(1))}


if __name__ == "__main__":
    print(measure(), file=sys.stderr)
