"""The documentation a user meets first stays short, and its links lead somewhere.

The README is what a VS Code user reads before anything else: it must stay under 12 KB (the manual lives
in docs/), and every relative link of it and of the pages it leads to (docs/, the CHANGELOG, the
extension's README, which the Marketplace shows) must name a file that exists and, after `#`, a heading
of that file. The license is one SPDX expression, the same in pyproject.toml and the extension's manifest,
and the text the vsix carries (extension/LICENSE) holds both licenses word for word.
"""

from __future__ import annotations

import json
import re
import struct
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_BUDGET = 12 * 1024
LICENSE = "MIT OR Apache-2.0"

# [text](target) and ![alt](target); a target ends at whitespace or the closing parenthesis.
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def pages() -> list[Path]:
    """Every Markdown page a user or a contributor is pointed to."""
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "extension" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose(text: str) -> str:
    """The text without code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    result = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """The relative links of a page that name no file, or no heading of their file (named from `root`)."""
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # https:, mailto:, ...: not ours to check offline
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file.relative_to(root) if file.is_relative_to(root) else file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(root)}")
    return broken


def test_readme_is_short() -> None:
    size = (ROOT / "README.md").stat().st_size
    assert size < README_BUDGET, f"README.md is {size} bytes; move the detail into docs/ (budget {README_BUDGET})"


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


def test_readme_leads_to_every_page_of_docs() -> None:
    """A page of docs/ that neither the README nor another page links to is a page nobody finds."""
    linked = set()
    for page in pages():
        for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
            path = target.partition("#")[0]
            if path and not re.match(r"[a-z][a-z0-9+.-]*:", path):
                linked.add((page.parent / path).resolve())
    orphans = [page.name for page in sorted((ROOT / "docs").glob("*.md")) if page.resolve() not in linked]
    assert orphans == []


def test_link_checker_sees_a_broken_link(tmp_path: Path) -> None:
    """The checker itself: a missing file and a missing heading are both reported; code is not read."""
    (tmp_path / "there.md").write_text("# A heading, with punctuation!\n## Twice\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md#a-heading-with-punctuation) [ok](there.md#twice-1) [ok](#local) ![ok](there.md)\n"
        "[gone](missing.md) [bad anchor](there.md#nowhere) `[code](missing.md)` [web](https://example.com)\n"
        "```\n[fenced](missing.md)\n```\n# Local\n"
    )
    root = tmp_path.resolve()
    assert broken_links(page, root) == ["missing.md: no file missing.md", "there.md#nowhere: no heading #nowhere in there.md"]


def test_license_is_one_expression_everywhere() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    manifest = json.loads((ROOT / "extension" / "package.json").read_text(encoding="utf-8"))
    assert pyproject["license"] == manifest["license"] == LICENSE
    for name in pyproject["license-files"]:
        assert (ROOT / name).is_file()
    carried = (ROOT / "extension" / "LICENSE").read_text(encoding="utf-8")
    for name in ("LICENSE-MIT", "LICENSE-APACHE"):
        assert (ROOT / name).read_text(encoding="utf-8").strip() in carried, f"extension/LICENSE lacks {name}"


def test_manifest_names_what_the_marketplace_shows() -> None:
    """`vsce package` warns without these; extension/scripts/tools.sh fails the build on a warning."""
    manifest = json.loads((ROOT / "extension" / "package.json").read_text(encoding="utf-8"))
    assert manifest["repository"]["url"].startswith("https://")
    assert manifest["keywords"]
    icon = (ROOT / "extension" / manifest["icon"]).read_bytes()
    assert icon[:8] == b"\x89PNG\r\n\x1a\n" and icon[12:16] == b"IHDR"
    assert struct.unpack(">II", icon[16:24]) == (128, 128)


def test_every_failure_kind_is_documented_with_what_the_user_sees() -> None:
    """The one enumeration of failure kinds (`protocol/shared/failures.py`) and docs/DESIGN.md's
    "Failures" table name the same kinds: `data.kind` is part of the wire."""
    from protocol.shared.failures import FailureKind

    design = (ROOT / "docs" / "DESIGN.md").read_text()
    table = design[design.index("## Failures") :].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(\w+)`", table, re.M))
    assert listed == {kind.value for kind in FailureKind}
