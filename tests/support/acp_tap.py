"""The built-in Eliza as an external ACP agent that records its traffic: a test's window on ACP.

    python tests/support/acp_tap.py LOG [--deterministic]

Serves Eliza on stdio (as `symposium eliza` does) and appends every JSON-RPC message to
LOG as JSONL: `{"dir": "c2a" | "a2c", "msg": {...}}`, after a first line `{"pid": N}`.
"""

from __future__ import annotations

import json
import os
import sys

import trio

from symposium.cli import stdio_stream
from symposium.eliza.agent import serve_eliza


def main() -> None:
    log_path = sys.argv[1]
    deterministic = "--deterministic" in sys.argv[2:]
    log = open(log_path, "a", buffering=1)  # noqa: SIM115 - open for the process's life, flushed per line
    log.write(json.dumps({"pid": os.getpid()}) + "\n")

    def tracer(direction: str, msg: dict, raw: bytes | None = None) -> None:
        log.write(json.dumps({"dir": "c2a" if direction == "recv" else "a2c", "msg": msg}) + "\n")

    trio.run(serve_eliza, stdio_stream(), deterministic, tracer)


if __name__ == "__main__":
    main()
