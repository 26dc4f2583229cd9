"""Cold start: spawn `symposium vscodelm` to its first model list, against importing trio/attrs/cattrs."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

RUNS = 7
INFO = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "lm/provideLanguageModelChatInformation", "params": {"silent": True}}) + "\n"


def _backend_once() -> float:
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "symposium", "vscodelm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin and process.stdout
    process.stdin.write(INFO)
    process.stdin.flush()
    line = process.stdout.readline()
    elapsed = time.perf_counter() - start
    assert '"models"' in line, line
    process.stdin.close()
    process.wait(timeout=10)
    return elapsed


def _imports_once() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import trio, attrs, cattrs"], check=True)
    return time.perf_counter() - start


def measure() -> dict[str, float]:
    _backend_once(), _imports_once()  # warm the file cache
    backend = statistics.median(_backend_once() for _ in range(RUNS))
    imports = statistics.median(_imports_once() for _ in range(RUNS))
    return {"backend_s": backend, "imports_s": imports, "ratio": backend / imports}
