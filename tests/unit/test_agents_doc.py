"""docs/agents.md is the conformance suite's last run over the catalogue as it is: a row for every npm/PyPI
agent of the catalogue, at its catalogue version, and for no other. It does not need the agents installed:
an agent that could not be installed has its row too (saying why), written by the run that tried.
"""

from __future__ import annotations

from tests.support import agents_doc, catalogue_agents


def test_docs_agents_has_a_row_per_catalogue_agent_at_its_version() -> None:
    page = agents_doc.PAGE.read_text()
    assert agents_doc.BEGIN in page and agents_doc.END in page
    rows = agents_doc.existing_rows(page)
    agents = catalogue_agents.load()
    stale = [f"{a.id} {a.spec}" for a in agents if a.id not in rows or f"`{a.spec}`" not in rows[a.id]]
    assert not stale, f"docs/agents.md is not the run of this catalogue (run pytest tests/agents/test_conformance.py): {stale}"
    assert sorted(rows) == sorted(a.id for a in agents)


def test_a_partial_run_keeps_the_other_rows_and_drops_agents_gone_from_the_catalogue() -> None:
    first = agents_doc.render(agents_doc.INTRO, {"a": agents_doc.Row("a", "A", "a@1", "npm", install="✓"), "gone": agents_doc.Row("gone", "G", "g@1", "npm")}, ["a", "gone", "b"])
    ran = agents_doc.Row("b", "B", "b@2", "npm", install="✓", prompt="✓ chat fake: KEY", tools="✓ given to its model")
    second = agents_doc.render(first, {"b": ran}, ["a", "b"])
    rows = agents_doc.existing_rows(second)
    assert sorted(rows) == ["a", "b"]
    assert rows["a"] == agents_doc.existing_rows(first)["a"]
    assert "`b@2`" in rows["b"] and "| ✓ chat fake: KEY |" in rows["b"]
    assert "1 of 2 agents answered a prompt against a fake model API; VS Code's tools reached the models of 1 of them." in second
    assert second.startswith("# Agents, tested")


def test_a_cell_with_a_bar_stays_one_cell() -> None:
    row = agents_doc.Row("a", "A", "a@1", "npm", install="✗ npm said a | b")
    text = agents_doc.render(agents_doc.INTRO, {"a": row}, ["a"])
    assert agents_doc.existing_rows(text)["a"].count(" | ") == len(agents_doc.COLUMNS) - 1
