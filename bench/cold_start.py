"""Cold start: spawn `symposium vscodelm` to its first model list, against importing trio/attrs/cattrs.

Both run as an installed package does: from bytecode. pip compiles a package's modules when
it installs it; an editable install under `PYTHONDONTWRITEBYTECODE` (as on CI machines) never
does, and the backend would compile its ~8,000 lines on every start, which no user pays. So
both commands get a private bytecode cache (`PYTHONPYCACHEPREFIX`), filled by a first run. The
backend without bytecode is measured too, for information.

The two are measured in pairs, one right after the other, and the ratio is the median of
the pairs' ratios: on a shared 2-core machine the speed drifts between runs more than it
does within a pair.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = 11
INFO = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "lm/provideLanguageModelChatInformation", "params": {"silent": True}}) + "\n"


def _backend_once(env: dict[str, str]) -> float:
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "symposium", "vscodelm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert process.stdin and process.stdout
    process.stdin.write(INFO)
    process.stdin.flush()
    line = process.stdout.readline()
    elapsed = time.perf_counter() - start
    assert '"models"' in line, line
    process.stdin.close()
    process.wait(timeout=10)
    return elapsed


def _imports_once(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import trio, attrs, cattrs"], check=True, env=env)
    return time.perf_counter() - start


def measure() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="symposium-bench-pyc-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        compiling = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        _backend_once(env), _imports_once(env)  # fill the bytecode cache and the file cache
        runs = [(_backend_once(env), _imports_once(env), _backend_once(compiling)) for _ in range(RUNS)]
    return {
        "backend_s": statistics.median(b for b, _, _ in runs),
        "imports_s": statistics.median(i for _, i, _ in runs),
        "ratio": statistics.median(b / i for b, i, _ in runs),
        "compiling_s": statistics.median(c for _, _, c in runs),
        "compiling_ratio": statistics.median(c / i for _, i, c in runs),
    }
