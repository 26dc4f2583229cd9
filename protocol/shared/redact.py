"""Keeping secrets out of what the backend writes down: error data, logs, transcripts.

Two kinds of secret are recognised. Known values: the environment values given to an
agent, which are secrets by position whatever they look like. And shapes: text that looks
like a credential (vendor key prefixes, bearer tokens, JWTs, `api_key=...`), which catches
keys the agent inherited or made up and printed anyway. Pure functions, no I/O.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable

REDACTED = "<redacted>"
# Shorter values are settings (`1`, `true`, `info`): replacing them everywhere would garble
# the text and protect nothing. They are still redacted where they are given (an env entry).
MIN_SECRET = 8

# Credentials by shape: vendor prefixes (OpenAI/Anthropic `sk-`, GitHub, GitLab, Slack, AWS,
# Google, Hugging Face, npm), JWTs, bearer tokens.
KEY_SHAPE = re.compile(
    r"\b(?:sk|rk|pk)-[A-Za-z0-9_-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bglpat-[A-Za-z0-9_-]{20,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bAIza[0-9A-Za-z_-]{30,}"
    r"|\bhf_[A-Za-z0-9]{30,}|\bnpm_[A-Za-z0-9]{30,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"
    r"|(?<=[Bb]earer )[A-Za-z0-9._~+/-]{8,}=*"
)
# What every shape above starts with: a quick scan (sre searches it by its first characters)
# that decides whether the precise, slower KEY_SHAPE needs to run at all.
KEY_HINT = re.compile(r"sk-|rk-|pk-|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|AKIA|ASIA|AIza|hf_|npm_|eyJ|[Bb]earer ")
KEY_HINT_BYTES = re.compile(KEY_HINT.pattern.encode())

# `NAME=value`, `NAME: value`, `"name": "value"` where the name says it holds a secret.
# Only for free text (stderr, log lines): in structured messages the key decides instead.
_ASSIGNED = re.compile(
    r"""(?i)\b([A-Za-z0-9_.-]*(?:api[_-]?key|access[_-]?key|secret|token|passw(?:or)?d|credential|auth)[A-Za-z0-9_.-]*"?\s*[:=]\s*"?)"""
    r"""([^\s"',;]{8,})"""
)


def escaped_forms(value: str) -> set[str]:
    """The value as it appears in JSON text: raw, and escaped both ways JSON writers escape."""
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


class Redactor:
    """Replaces known secret values, and credential-shaped text, by `<redacted>`."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        for value in values:
            self.add(value)

    def add(self, value: str) -> None:
        """A value to redact wherever it appears (if it is long enough to be a secret)."""
        if len(value) < MIN_SECRET or value in self._values:
            return
        self._values |= escaped_forms(value)
        self._pattern = re.compile("|".join(re.escape(v) for v in sorted(self._values, key=len, reverse=True)))

    def __len__(self) -> int:
        """How many forms of known values it redacts: grows when it learns one."""
        return len(self._values)

    def known(self, text: str) -> bool:
        """Whether a known value appears in `text`."""
        return self._pattern is not None and self._pattern.search(text) is not None

    def values(self, text: str) -> str:
        """Known values and credential shapes redacted: for text inside structured messages."""
        if self._pattern is not None:
            text = self._pattern.sub(REDACTED, text)
        return KEY_SHAPE.sub(REDACTED, text) if KEY_HINT.search(text) else text

    def free_text(self, text: str) -> str:
        """`values`, and `secret=...` assignments: for stderr lines and log messages."""
        return _ASSIGNED.sub(lambda m: m[1] + REDACTED, self.values(text))


class RedactingFilter(logging.Filter):
    """Redacts every log record (its message and its traceback) with a redactor: installed on the
    backend's log handler, so that no line holds an agent's env value or a key, whichever
    module wrote it and whatever text of an agent it quotes."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = self._redactor.values(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._redactor.values(logging.Formatter().formatException(record.exc_info))
        return True


def excerpt(line: bytes, limit: int = 200) -> str:
    """The start of a line that failed to parse, for a log message, with secrets cut out.

    Nothing is known about such a line, so everything from an `"env"` member on is left out
    (agent definitions carry their environment there), and credential shapes are redacted.
    """
    text = line[:limit].decode(errors="replace")
    env = text.find('"env"')
    if env >= 0:
        text = text[:env] + '"env"' + REDACTED
    return Redactor().free_text(text) + ("..." if len(line) > limit else "")
