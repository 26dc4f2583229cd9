"""docs/agents.md, written from a run of the conformance suite (tests/agents/test_conformance.py): one row
per npm/PyPI agent of the catalogue, one column per flow, with the version the run installed.

The suite records a `Row` per agent as it goes; at the end of the run (tests/agents/conftest.py,
`pytest_sessionfinish`) `write` rewrites the table. An agent the run did not reach (`-k`, a partial run)
keeps its row from the page as it was; an agent no longer in the catalogue loses its row. The page's
text outside the table is kept as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "agents.md"
BEGIN = "<!-- agents table: written by the conformance suite (tests/agents/test_conformance.py) -->"
END = "<!-- end of agents table -->"
COLUMNS = ("Agent", "Version", "Installs", "Initialize", "Sign-in methods", "Sign-in with no credentials", "Prompt against a fake", "VS Code's tools", "Permission", "Cancel")

INTRO = f"""# Agents, tested

Every agent of the catalogue that is distributed on npm or PyPI, installed at its catalogue version the way
Add Agent installs it and driven through the backend by the conformance suite
(`tests/agents/test_conformance.py`, run by `make test`), against fake model APIs on this machine. The table is
written by that run: a row per agent, a column per flow. "Prompt against a fake" says what went in the agent's
entry for it (an API key, a base URL, a model) and which fake answered. "VS Code's tools" says whether a tool
the request offered (through Symposium's `vscode_tools` MCP server) reached the agent's model: declared among
its tools, or named to it and declared when the model asks (agents that defer MCP tools behind a tool search of
their own), or not, and then why (measured). A cell starting with – is a flow the agent cannot be taken through
here, and why. A flow that failed was run 4 more times, afresh, and its cell says in how many of the 5 runs it
failed ("flaky" when not in all of them): a failure is never retried away. What the suite knows of each agent
is data in `tests/support/agents.toml`.

{BEGIN}
{END}
"""


@attrs.define
class Row:
    id: str
    name: str
    spec: str  # the package and version installed
    kind: str  # npm or pypi
    install: str = ""
    initialize: str = "–"
    methods: str = "–"
    signin: str = "–"
    prompt: str = "–"
    tools: str = "–"  # whether a tool VS Code offered was among those the agent's model was given
    permission: str = "–"
    cancel: str = "–"

    def cells(self) -> list[str]:
        return [f"{self.name} (`{self.id}`)", f"{self.kind} `{self.spec}`", self.install, self.initialize, self.methods, self.signin,
                self.prompt, self.tools, self.permission, self.cancel]


_rows: dict[str, Row] = {}


def record(row: Row) -> None:
    """The row of one agent in this run (filled in as its flows go)."""
    _rows[row.id] = row


def recorded() -> dict[str, Row]:
    return dict(_rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def line(cells: list[str]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def existing_rows(page: str) -> dict[str, str]:
    """The table lines of a page, by agent id (the id in the first cell's backticks)."""
    found = {}
    for text in page.splitlines():
        match = re.match(r"^\| [^|]*\(`([^`]+)`\) \|", text)
        if match:
            found[match.group(1)] = text
    return found


def _tools_given(text: str) -> bool:
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", text)[1:-1]]
    return len(cells) == len(COLUMNS) and cells[COLUMNS.index("VS Code's tools")].startswith("✓")


def render(page: str, rows: dict[str, Row], order: list[str]) -> str:
    """`page` with its table rebuilt: this run's rows, the page's own for agents the run did not reach."""
    if BEGIN not in page or END not in page:
        page = INTRO
    kept = existing_rows(page)
    lines = [line(list(COLUMNS)), "|" + "---|" * len(COLUMNS)]
    for agent_id in order:
        if agent_id in rows:
            lines.append(line(rows[agent_id].cells()))
        elif agent_id in kept:
            lines.append(kept[agent_id])
    answered = sum(1 for text in lines[2:] if "| ✓ " in text and re.search(r"\| ✓ [a-z]+ fake", text))
    tools = sum(1 for text in lines[2:] if _tools_given(text))
    summary = (f"{answered} of {len(order)} agents answered a prompt against a fake model API; "
               f"VS Code's tools reached the models of {tools} of them.")
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{summary}\n\n" + "\n".join(lines) + f"\n{END}{tail}"


def write(order: list[str], page_path: Path = PAGE) -> None:
    """Rewrite the page's table from this run's rows (nothing if the run recorded none)."""
    rows = recorded()
    if not rows:
        return
    page = page_path.read_text() if page_path.exists() else INTRO
    page_path.write_text(render(page, rows, order))
