"""The documentation a user meets first stays short, and its links lead somewhere.

The README is what a VS Code user reads before anything else: it must stay under 12 KB (the manual lives
in docs/), and every relative link of it and of the pages it leads to (docs/, the CHANGELOG, the
extension's README, which the Marketplace shows) must name a file that exists and, after `#`, a heading
of that file. Every repository path the docs and the sources' comments and docstrings name (`protocol/turn/
machine.py`, `actors.conversation.spares`) must exist: files move, and what points at them must follow. The
license is one SPDX expression, the same in pyproject.toml and the extension's manifest, and the text the
vsix carries (extension/LICENSE) holds both licenses word for word.
"""

from __future__ import annotations

import ast
import fnmatch
import io
import json
import re
import struct
import tokenize
import tomllib
from collections.abc import Iterator
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


# Repository paths named in prose -----------------------------------------------------------------

TOP_FOLDERS = ("protocol", "actors", "symposium", "tests", "bench", "scripts", "extension", "docs")
# `protocol/turn/machine.py`, `tests/unit/`: a top folder, then path characters. Not part of a longer path
# (`../x`, a URL, `~/.cache/x`); one followed by a placeholder (`extension/symposium-<version>.vsix`, a glob) is
# a pattern, not a path.
SLASHED = re.compile(r"(?<![\w./@~-])((?:" + "|".join(TOP_FOLDERS) + r")/[\w./-]*+)(?![<{*$\[(])")
# `protocol.turn.machine`, `actors.conversation.spares.Spares`: a module, then perhaps its attributes.
DOTTED = re.compile(r"(?<![\w./@~-])((?:protocol|actors|symposium|tests|bench)(?:\.[A-Za-z_]\w*)+)")
TS_COMMENT = re.compile(r"/\*.*?\*/|(?<![:\w'\"])//[^\n]*", re.DOTALL)
# docs/agents.md's table, written by the conformance suite, quotes the agents' own files (their docs/, scripts/).
AGENTS_TABLE = re.compile(r"<!-- agents table:.*?<!-- end of agents table -->", re.DOTALL)


def python_prose(source: str) -> str:
    """A Python file's comments and docstrings."""
    said = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and (doc := ast.get_docstring(node, clean=False)):
            said.append(doc)
    return "\n".join(said)


def prose_of(path: Path) -> str:
    """What of a file is prose: a page whole (the CHANGELOG is history, not checked), the comments of a source."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return AGENTS_TABLE.sub("", text)
    if path.suffix == ".py":
        return python_prose(text)
    if path.suffix == ".ts":
        return "\n".join(TS_COMMENT.findall(text))
    return "\n".join(line[line.index("#"):] for line in text.splitlines() if "#" in line)  # a shell script's comments


def prose_files(root: Path = ROOT) -> list[Path]:
    found = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    for folder in ("protocol", "actors", "symposium", "tests", "bench", "scripts", "extension/scripts"):
        found += sorted(p for p in (root / folder).rglob("*") if p.suffix in (".py", ".sh") and "__pycache__" not in p.parts)
    return found + sorted((root / "extension" / "src").rglob("*.ts"))


def named_paths(text: str) -> Iterator[str]:
    """The repository paths and dotted module names `text` names."""
    for match in SLASHED.finditer(text):
        yield match.group(1).rstrip(".,-/")
    for match in DOTTED.finditer(text):
        yield match.group(1).rstrip(".")


def generated(path: str, root: Path = ROOT) -> bool:
    """Whether .gitignore leaves `path` out: a build's output (extension/out/, a vsix), never in the repository."""
    parts = path.split("/")
    for pattern in (root / ".gitignore").read_text().split():
        folder = pattern.endswith("/")
        pattern = pattern.strip("/")
        if "/" in pattern:  # anchored: the path, or a folder it is in
            if any(fnmatch.fnmatch("/".join(parts[:n]), pattern) for n in range(1, len(parts) + 1 - folder)) or (
                    folder and fnmatch.fnmatch(path, pattern)):
                return True
        elif any(fnmatch.fnmatch(part, pattern) for part in parts):
            return True
    return False


def not_paths(root: Path = ROOT) -> set[str]:
    """Names that look like paths and are not: the backend's own JSON-RPC methods (`symposium/stats`) and the
    extension's settings (`symposium.logLevel`)."""
    methods = {m for p in (*(root / "protocol").rglob("*.py"), *(root / "symposium").glob("*.py")) for m in re.findall(r'^METHOD_\w+ = "([^"]+)"', p.read_text(), re.MULTILINE)}
    manifest = json.loads((root / "extension" / "package.json").read_text(encoding="utf-8"))
    configuration = manifest["contributes"]["configuration"]
    settings = {name for section in (configuration if isinstance(configuration, list) else [configuration]) for name in section.get("properties", {})}
    return methods | settings


def exists(name: str, root: Path = ROOT) -> bool:
    """A path that exists (a file, or a folder); a module (`.py` file or package) and perhaps attributes of it; or
    a module's attribute named by path (`protocol/acp/client_methods.SERVED`)."""
    if (root / name).exists():
        return True
    if "/" in name:
        folder, _, last = name.rpartition("/")
        return (root / folder / (last.partition(".")[0] + ".py")).is_file() or generated(name, root)
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        module = root.joinpath(*parts[:n])
        if module.with_suffix(".py").is_file():
            return True  # what follows is the module's attributes
        if (module / "__init__.py").is_file():
            # a package: what follows is one of its modules (not found above), or a name its __init__ defines
            return n == len(parts) or re.search(rf"\b{re.escape(parts[n])}\b", (module / "__init__.py").read_text()) is not None
    return False


def stale_paths(root: Path = ROOT) -> list[str]:
    """`file: name` for every name of a repository path, in the docs or a source's comments, that names nothing."""
    known = not_paths(root)
    return [f"{file.relative_to(root)}: {name}" for file in prose_files(root) for name in sorted(set(named_paths(prose_of(file))))
            if name not in known and not exists(name, root)]


def test_every_repository_path_named_in_the_docs_and_the_comments_exists() -> None:
    assert stale_paths() == []


def test_the_path_checker_sees_a_path_that_moved() -> None:
    text = (
        "See protocol/turn.py and `actors.warm`, tests/unit/test_gone.py; "  # moved or gone
        "protocol/turn/machine.py, protocol.turn.rules.REFUSED_NOTE, `protocol/acp/client_methods.SERVED`, tests/unit/, "
        "extension/out/test/runner.js, extension/symposium-<version>.vsix, `symposium/stats`, `symposium.logLevel`, "
        "https://example.com/protocol/x.py, ../shared/reference/x.md"
    )
    known = not_paths()
    named = [name for name in named_paths(text) if name not in known and not exists(name)]
    assert sorted(named) == ["actors.warm", "protocol/turn.py", "tests/unit/test_gone.py"]
    comments = python_prose('"""Doc: protocol/a.py."""\nx = "protocol/b.py"  # protocol/c.py\n')
    assert list(named_paths(comments)) == ["protocol/c.py", "protocol/a.py"], "a string in the code is not prose"


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
