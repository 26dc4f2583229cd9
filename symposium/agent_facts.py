"""Reads the agent facts (protocol/acp/agent_facts.py): the `agentInfo` section of
`extension/catalogue/overrides.json` (docs/DESIGN.md, "Agent facts").

Run from the repository (tests, `make chat`, an editable install) the file is read where it is;
installed from the vsix, from the copy the backend's wheel carries (`symposium/agent_facts.json`, a
link to that file in the repository, copied as a file when the wheel is built: pyproject.toml). A
file that cannot be read or parsed leaves the backend without facts (every agent treated as
unknown: its own editing stays on, edits of history are primed, `vscode_tools` goes over stdio),
with the reason logged: never a crash.
"""

from __future__ import annotations

import json
import logging
from importlib import resources
from pathlib import Path

from protocol.acp.agent_facts import AgentFactsTable, parse_agent_facts

log = logging.getLogger(__name__)

REPOSITORY_FILE = Path(__file__).resolve().parents[1] / "extension" / "catalogue" / "overrides.json"
PACKAGED = "agent_facts.json"
MAX_BYTES = 1 << 20  # the file is a few kB; a larger one is not ours


def load_agent_facts(path: Path | None = None) -> AgentFactsTable:
    """The facts in `path`, else in the repository's overrides.json, else in the packaged copy."""
    try:
        if path is not None:
            where, text = str(path), _read(path)
        elif REPOSITORY_FILE.is_file():
            where, text = str(REPOSITORY_FILE), _read(REPOSITORY_FILE)
        else:
            packaged = resources.files("symposium") / PACKAGED
            where, text = f"symposium/{PACKAGED}", packaged.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        log.error("agent facts not read (%s): every agent is treated as unknown", exc)
        return {}
    try:
        document = json.loads(text)
    except ValueError as exc:
        log.error("agent facts in %s are not JSON (%s): every agent is treated as unknown", where, exc)
        return {}
    table, problems = parse_agent_facts(document)
    for problem in problems:
        log.error("agent facts in %s: %s", where, problem)
    return table


def _read(path: Path) -> str:
    with path.open("rb") as file:
        data = file.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path} is larger than {MAX_BYTES} bytes")
    return data.decode("utf-8")
