"""Run an ACP agent and record its traffic: a test's window on what any external agent was sent.

    python tests/support/acp_tee.py LOG -- COMMAND [ARGS...]

Starts COMMAND with our stdin/stdout piped through, line by line, and appends every line to LOG
as JSONL (`{"dir": "c2a" | "a2c", "msg": {...}}`), after a first line `{"pid": N, "agent_pid": M}`.
Stderr is inherited. Exits with the agent's exit status (128+N for signal N) when the agent's stdout closes; closing
our stdin closes the agent's. Stdlib only, so it starts fast.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading


def main() -> int:
    log_path, separator, *command = sys.argv[1:]
    assert separator == "--" and command, __doc__
    log = open(log_path, "a", buffering=1)  # noqa: SIM115 - open for the process's life, flushed per line
    lock = threading.Lock()
    agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    with lock:
        log.write(json.dumps({"pid": os.getpid(), "agent_pid": agent.pid}) + "\n")

    def record(direction: str, line: bytes) -> None:
        try:
            entry = {"dir": direction, "msg": json.loads(line)}
        except ValueError:
            entry = {"dir": direction, "raw": line.decode(errors="replace")}
        with lock:
            log.write(json.dumps(entry) + "\n")

    def client_to_agent() -> None:
        try:
            for line in sys.stdin.buffer:
                record("c2a", line)
                agent.stdin.write(line)  # type: ignore[union-attr]
                agent.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError):
            pass
        try:
            agent.stdin.close()  # type: ignore[union-attr]
        except BrokenPipeError:
            pass

    threading.Thread(target=client_to_agent, daemon=True).start()
    out = sys.stdout.buffer
    try:
        for line in agent.stdout:
            record("a2c", line)
            out.write(line)
            out.flush()
    except BrokenPipeError:
        pass
    code = agent.wait()
    with lock:
        log.write(json.dumps({"exit": code}) + "\n")
    log.close()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    # os._exit: the stdin thread may be blocked in a read, which a normal exit would abort on.
    os._exit(main())
