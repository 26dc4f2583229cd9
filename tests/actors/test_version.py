"""The version is written once, in pyproject.toml; the backend reads it from its package's metadata.

The extension's package.json must carry one too (VS Code reads it), so it is kept equal here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from actors.shared.version import version

ROOT = Path(__file__).resolve().parents[2]


def test_the_extension_carries_the_backends_version() -> None:
    package = json.loads((ROOT / "extension" / "package.json").read_text())
    assert package["version"] == version()


def test_the_installed_metadata_is_pyprojects() -> None:
    """A stale editable install (pyproject changed, `make setup` not run again) would report the old one."""
    written = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert written is not None and written[1] == version()


def test_no_module_restates_the_version() -> None:
    literal = re.compile(r"""["']""" + re.escape(version()) + r"""["']""")
    restated = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("protocol", "actors", "symposium")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert restated == []
