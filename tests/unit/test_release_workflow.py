"""The release workflow as a careful project's would be (docs/development.md, "Releasing"): read from the YAML
itself, with no YAML library (the block subset GitHub workflows use), and each rule shown to catch what it
is about on a workflow that breaks it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

WORKFLOWS = sorted((Path(__file__).parents[2] / ".github" / "workflows").glob("*.y*ml"))
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")
TAG_COMMENT = re.compile(r"#\s*v?\d[\w.-]*")
EXPANDED_SECRET = re.compile(r"\$\{\{\s*(secrets\.|github\.token)")
NPX_YES = re.compile(r"\bnpx\s+(?:\S+\s+)*?(?:--yes|-y)\b")
NPM_INSTALL = re.compile(r"\bnpm\s+(?:ci|install|i)\b[^\n;&|]*")


# A reader of the block YAML workflows are written in --------------------------------------------------

def parse(text: str) -> Any:
    """Mappings, sequences and scalars (plain, quoted, `|`/`>` blocks) by indentation. A scalar keeps its
    comment, so that a pin's tag can be read: `value()` takes it off."""
    lines = [(len(line) - len(line.lstrip(" ")), line.strip()) for line in text.splitlines()]
    node, _ = _block(lines, _next(lines, 0), 0)
    return node


def _next(lines: list[tuple[int, str]], i: int) -> int:
    while i < len(lines) and (not lines[i][1] or lines[i][1].startswith("#")):
        i += 1
    return i


def _block(lines: list[tuple[int, str]], i: int, indent: int) -> tuple[Any, int]:
    if i < len(lines) and lines[i][1].startswith("- "):
        items: list[Any] = []
        while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
            inner = indent + 2
            lines[i] = (inner, lines[i][1][2:].lstrip())
            if ":" in lines[i][1] and not lines[i][1].startswith(("'", '"')):
                mapping, i = _mapping(lines, i, inner)
                items.append(mapping)
            else:
                items.append(lines[i][1])
                i = _next(lines, i + 1)
        return items, i
    return _mapping(lines, i, indent)


def _mapping(lines: list[tuple[int, str]], i: int, indent: int) -> tuple[dict[str, Any], int]:
    mapping: dict[str, Any] = {}
    while i < len(lines) and lines[i][0] == indent and not lines[i][1].startswith("- "):
        key, _, rest = lines[i][1].partition(":")
        rest = rest.strip()
        if rest.split("#")[0].strip() in ("|", ">", "|-", ">-"):
            block, i = [], i + 1
            while i < len(lines) and (not lines[i][1] or lines[i][0] > indent):
                block.append(lines[i][1])
                i += 1
            mapping[key.strip()] = "\n".join(block).strip()
            i = _next(lines, i)
        elif rest and not rest.startswith("#"):
            mapping[key.strip()] = rest
            i = _next(lines, i + 1)
        else:
            i = _next(lines, i + 1)
            if i < len(lines) and lines[i][0] > indent:
                mapping[key.strip()], i = _block(lines, i, lines[i][0])
            elif i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
                mapping[key.strip()], i = _block(lines, i, indent)
            else:
                mapping[key.strip()] = None
    return mapping, i


def value(raw: Any) -> str:
    """A scalar without its comment or quotes."""
    text = str(raw or "")
    if not text.startswith(("'", '"')):
        text = text.split(" #")[0]
    return text.strip().strip("'\"")


# The rules --------------------------------------------------------------------------------------------

def problems(text: str) -> list[str]:
    workflow = parse(text)
    found: list[str] = []
    top = workflow.get("permissions")
    if not isinstance(top, dict) or any(value(v) not in ("read", "none") for v in top.values()):
        found.append("the workflow's permissions are not read-only at the top (`permissions: contents: read`)")
    for name, job in (workflow.get("jobs") or {}).items():
        steps = job.get("steps") or []
        runs = [value(step.get("run")) if "\n" not in str(step.get("run")) else str(step.get("run")) for step in steps if step.get("run")]
        releases = any("gh release create" in run for run in runs)
        for scope, granted in (job.get("permissions") or {}).items():
            if value(granted) == "write" and not (releases and scope == "contents"):
                found.append(f"job {name}: {scope}: write, outside the job that makes the release")
        envs = [env for env in [job.get("env"), *(step.get("env") for step in steps)] if isinstance(env, dict)]
        holders = {key for env in envs for key, raw in env.items() if EXPANDED_SECRET.search(str(raw))}  # variables holding a secret
        secrets = bool(holders)
        for step in steps:
            uses = step.get("uses")
            if uses is not None:
                action = value(uses)
                if not action.startswith("./") and (not PINNED.fullmatch(action) or not TAG_COMMENT.search(str(uses))):
                    found.append(f"job {name}: `uses: {uses}` is not pinned by a full commit sha with its tag in a comment")
                if action.startswith("actions/checkout@") and value((step.get("with") or {}).get("persist-credentials")) != "false":
                    found.append(f"job {name}: a checkout without `persist-credentials: false` leaves its token in .git/config")
            run = str(step.get("run") or "")
            if EXPANDED_SECRET.search(run):
                found.append(f"job {name}: a secret expanded in a command line (`run:`): give it through `env:`")
            for holder in sorted(holders):
                if re.search(rf"\$\{{?{holder}\b", run):
                    found.append(f"job {name}: ${holder} on a command line: the tool reads it from its environment")
            if NPX_YES.search(run):
                found.append(f"job {name}: `npx --yes` runs whatever the registry serves now: use the extension's lock")
            if secrets:
                for install in NPM_INSTALL.findall(run):
                    if "--ignore-scripts" not in install:
                        found.append(f"job {name}: `{install.strip()}` runs install scripts in a job that holds secrets")
    return found


# The workflows ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_every_workflow_keeps_the_rules(path: Path) -> None:
    assert problems(path.read_text()) == []


def test_the_release_workflow_publishes_with_the_locked_tools() -> None:
    text = (Path(__file__).parents[2] / ".github" / "workflows" / "release.yml").read_text()
    jobs = parse(text)["jobs"]
    assert set(jobs) == {"test", "build", "publish", "release"}
    publish = "\n".join(str(step.get("run")) for step in jobs["publish"]["steps"] if step.get("run"))
    assert "node_modules/@vscode/vsce/vsce publish" in publish and "node_modules/ovsx/bin/ovsx publish" in publish
    assert "--pat" not in publish  # the tokens are read from the environment
    package = (Path(__file__).parents[2] / "extension" / "package.json").read_text()
    assert re.search(r'"ovsx": "\d+\.\d+\.\d+"', package) and '"@vscode/vsce"' in package
    assert value(jobs["release"]["permissions"]["contents"]) == "write"


# Each rule catches what it is about -------------------------------------------------------------------

GOOD = """\
name: release
on:
  push:
    tags: ["v*"]
permissions:
  contents: read
jobs:
  publish:
    runs-on: ubuntu-24.04
    environment: release
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          persist-credentials: false
      - name: tools
        run: npm ci --ignore-scripts
      - name: publish
        env:
          VSCE_PAT: ${{ secrets.VSCE_PAT }}
        run: |
          node node_modules/@vscode/vsce/vsce publish
  release:
    runs-on: ubuntu-24.04
    permissions:
      contents: write
    steps:
      - name: GitHub release
        env:
          GH_TOKEN: ${{ github.token }}
        run: gh release create "$GITHUB_REF_NAME"
"""


def test_a_workflow_that_keeps_the_rules_passes() -> None:
    assert problems(GOOD) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (("actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2", "actions/checkout@v4"), "not pinned by a full commit sha"),
        (("@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2", "@11bd71901bbe5b1630ceea73d27597364c9af683"), "with its tag in a comment"),
        (("permissions:\n  contents: read", "permissions:\n  contents: write"), "not read-only at the top"),
        (("    environment: release\n", "    environment: release\n    permissions:\n      packages: write\n"), "job publish: packages: write"),
        (("          persist-credentials: false\n", "          fetch-depth: 0\n"), "persist-credentials: false"),
        (("run: npm ci --ignore-scripts", "run: npx --yes ovsx@1.4.0 publish"), "`npx --yes`"),
        (("run: npm ci --ignore-scripts", "run: npm ci"), "`npm ci` runs install scripts in a job that holds secrets"),
        (("node node_modules/@vscode/vsce/vsce publish", "node node_modules/@vscode/vsce/vsce publish --pat ${{ secrets.VSCE_PAT }}"), "secret expanded in a command line"),
        (('run: gh release create "$GITHUB_REF_NAME"', 'run: GH_TOKEN=${{ github.token }} gh release create "$GITHUB_REF_NAME"'), "secret expanded in a command line"),
        (("node node_modules/@vscode/vsce/vsce publish", 'node node_modules/@vscode/vsce/vsce publish --pat "$VSCE_PAT"'), "$VSCE_PAT on a command line"),
    ],
)
def test_each_rule_catches_a_workflow_that_breaks_it(change: tuple[str, str], problem: str) -> None:
    old, new = change
    assert old in GOOD
    found = problems(GOOD.replace(old, new, 1))
    assert any(problem in p for p in found), found
