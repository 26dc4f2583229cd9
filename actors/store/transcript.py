"""Transcripts: every JSON-RPC message on every channel of a backend run, as JSONL (docs/DESIGN.md, "Wire protocol").

A line is `{"t": seconds since start (monotonic), "ch": channel, "dir": "in" | "out", "msg": {...}}`
(`in`: received by the backend), or `{"t", "ch", "stderr": line}` for an agent's stderr.
Channels: `vscode`; `agent <n> <name>` for the n-th agent connection; `mcp <n> <m>` for the
m-th connection to the n-th conversation's tool bridge.

Secrets never reach the file: environment values given to agents, bridge tokens,
authorization headers and anything shaped like a credential are replaced by `<redacted>`,
wherever they appear. The file is readable by its owner only (0600; a folder it creates is
0700), is new (`O_EXCL`), and its name has a random part: nothing another user put in the
folder is written to or through. A folder another user owns or can write in (without the
sticky bit) is refused: nothing is recorded, and the log says why (`actors/store/private.py`).
Recording never stops the backend: a write that fails logs one warning and recording ends.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from actors.shared.peer import Tracer
from actors.store.private import NotPrivate, open_private, private_folder
from protocol.shared.redact import KEY_HINT_BYTES, REDACTED, Redactor

log = logging.getLogger(__name__)

_STREAMED = frozenset({"session/update", "lm/responsePart"})
_SENSITIVE = re.compile(rb'"(env|headers|authorization|api_?key|token|password|secret)"', re.IGNORECASE)
_SECRET_KEYS = frozenset({"authorization", "api_key", "apikey", "token", "password", "secret"})
NAME_BYTES = 8  # random bytes in a transcript's name (as hex)


class Recorder:
    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._start = time.monotonic()
        self._redactor = Redactor()
        self._counters: dict[str, int] = {}
        self._file: TextIO | None = None
        self.path: Path | None = None
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
        try:
            folder = private_folder(directory, tighten=False)
            # The random part: no one can guess the name and put something there first.
            path = folder / f"symposium-{stamp}-{os.getpid()}-{secrets.token_hex(NAME_BYTES)}.jsonl"
            self._file = open_private(path, "a", new=True, buffering=65536, encoding="utf-8")  # type: ignore[assignment]  # text mode: a TextIO
            self.path = path
        except NotPrivate as exc:
            log.warning("not recording a transcript: %s; choose a folder of your own for traces", exc)
        except OSError as exc:
            log.warning("not recording a transcript: cannot write to %s: %s", directory, exc)

    def next_index(self, kind: str) -> int:
        """1, 2, 3... per kind of channel, in the order channels open."""
        self._counters[kind] = self._counters.get(kind, 0) + 1
        return self._counters[kind]

    def secret(self, value: str) -> None:
        """A value to redact wherever it appears from now on.

        Short values (`1`, `true`) are redacted where they are given, not hunted everywhere:
        they are settings, and replacing every `1` would garble the transcript.
        """
        self._redactor.add(value)

    def channel(self, name: str) -> Tracer:
        prefix = f',"ch":{json.dumps(name)},"dir":'

        def trace(direction: str, msg: dict[str, Any], raw: bytes | None = None) -> None:
            where = "in" if direction == "recv" else "out"
            if raw is not None and self._file is not None and self._plainly_safe(raw):
                # The hot path (a stream of agent updates): the line as it came, not re-encoded.
                line = f'{{"t":{time.monotonic() - self._start:.6f}{prefix}"{where}","msg":{raw.decode()}}}'
                self._write_line(line, flush=msg.get("method") not in _STREAMED)
            else:
                self.write({"ch": name, "dir": where, "msg": msg})

        return trace

    def _plainly_safe(self, raw: bytes) -> bool:
        """Nothing in the line could need redacting (and it is one line of JSON)."""
        if _SENSITIVE.search(raw) or b"\n" in raw or KEY_HINT_BYTES.search(raw):
            return False
        return not self._redactor.known(raw.decode())

    def stderr(self, channel: str, line: str) -> None:
        self.write({"ch": channel, "stderr": line})

    def write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        record = {"t": round(time.monotonic() - self._start, 6), **{k: self._redacted(v) if k in ("msg", "stderr") else v for k, v in record.items()}}
        # Streamed chunks wait in the buffer for the next message of any other kind, which is
        # written through at once: a flood costs no syscall per chunk, and a crash loses at
        # most the tail of a stream.
        self._write_line(json.dumps(record, ensure_ascii=False, separators=(",", ":")), flush=record.get("msg", {}).get("method") not in _STREAMED)

    def _write_line(self, line: str, *, flush: bool) -> None:
        if self._file is None:
            return
        try:
            self._file.write(line + "\n")
            if flush:
                self._file.flush()
        except (OSError, ValueError) as exc:
            log.warning("transcript recording stopped: %s", exc)
            self.close()

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None

    def _redacted(self, value: Any) -> Any:
        """`value` with every secret redacted, those it names itself included: a request's
        messages come before its agent's env, and may already quote the env's values."""
        known = len(self._redactor)
        redacted = self._redact(value)
        return redacted if len(self._redactor) == known else self._redact(value)

    def _redact(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            if "name" in value and "value" in value and key in ("env", "headers"):
                if isinstance(value["value"], str):
                    self.secret(value["value"])
                return {**value, "value": REDACTED}
            return {k: REDACTED if k.lower() in _SECRET_KEYS and isinstance(v, str) else self._redact(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._redact(item, key) for item in value]
        if isinstance(value, str):
            return self._redactor.values(value)
        return value


def read(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as file:
        for line in file:
            if line.strip():
                yield json.loads(line)
