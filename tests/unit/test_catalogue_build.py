"""The catalogue build (extension/scripts/catalogue.py): how a pin the npm/PyPI registry lacks is
resolved, how versions order, and that our overrides apply as the extension applies them
(docs/usage.md, "The catalogue"). Pure parts only: no registry is asked."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("catalogue_build", ROOT / "extension" / "scripts" / "catalogue.py")
catalogue = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalogue)


def test_a_missing_pin_resolves_to_the_nearest_published_version_of_its_line():
    # Versions as the npm registry reachable here lists them (2026-11).
    cline = ["0.8.2", "1.0.6", "2.18.0", "3.0.57", "3.0.61", "3.0.65"]
    assert catalogue.nearest("3.0.56", cline) == "3.0.57"  # the nearest newer of the same major
    assert catalogue.nearest("0.2.14", ["0.2.4", "0.2.5", "1.0.12", "1.1.52"]) == "0.2.5"  # 0.x: same minor, older
    assert catalogue.nearest("0.22.0", ["0.21.0", "0.23.1", "0.24.4", "0.25.0-preview.1"]) == "0.24.4"  # no 0.22.x: the newest release
    assert catalogue.nearest("0.218.0", ["0.200.0", "0.215.0"]) == "0.215.0"


def test_versions_order_as_semver():
    ordered = ["0.9.2", "0.10.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0", "2026.10.01"]
    assert sorted(ordered, key=catalogue.semver) == ordered
    assert catalogue.semver("2698.3") == catalogue.semver("2698.3.0")


def test_overrides_replace_while_the_registry_is_not_newer_remove_and_patch():
    registry = [
        {"id": "claude-acp", "name": "Claude", "version": "0.85.1", "distribution": {"npx": {"package": "c@0.85.1"}}},
        {"id": "codex-acp", "name": "Codex", "version": "2.0.0", "distribution": {"npx": {"package": "x@2.0.0"}}},
        {"id": "old", "name": "Old", "version": "1.0.0", "distribution": {"npx": {"package": "o@1.0.0"}}},
        {"id": "gemini", "name": "Gemini", "version": "1.0.0", "distribution": {"npx": {"package": "g@1.0.0", "args": ["--experimental-acp"]}}},
    ]
    overrides = {
        "remove": ["old"],
        "agents": [
            {"id": "claude-acp", "name": "Claude Code", "version": "0.100.0", "distribution": {"npx": {"package": "c@0.100.0"}}},
            {"id": "codex-acp", "name": "Codex", "version": "1.0.0", "distribution": {"npx": {"package": "x@1.0.0"}}},
        ],
        "patch": {"gemini": {"args": ["--acp"], "env": {"X": "1"}}},
    }
    by_id = {a["id"]: a for a in catalogue.apply_overrides(registry, overrides)}
    assert sorted(by_id) == ["claude-acp", "codex-acp", "gemini"]
    assert by_id["claude-acp"]["version"] == "0.100.0"
    assert by_id["codex-acp"]["version"] == "2.0.0"
    assert by_id["gemini"]["distribution"]["npx"] == {"package": "g@1.0.0", "args": ["--acp"], "env": {"X": "1"}}
    assert by_id["codex-acp"]["distribution"]["npx"] == {"package": "x@2.0.0"}


def test_the_shipped_catalogue_is_built_with_the_shipped_overrides():
    shipped = json.loads((ROOT / "extension" / "catalogue" / "registry.json").read_text())
    overrides = json.loads((ROOT / "extension" / "catalogue" / "overrides.json").read_text())
    assert catalogue.apply_overrides(shipped["agents"], overrides) == sorted(shipped["agents"], key=lambda a: a["name"].lower())
    assert all(reason for reason in overrides["npmScripts"].values())
    assert shipped["built"]["notes"], "the build says what it resolved or could not check"


def test_a_registry_listing_an_older_version_than_was_shipped_is_not_followed_unless_it_marks_a_downgrade():
    shipped = [{"id": "tool", "name": "Tool", "version": "2.0.0", "distribution": {"npx": {"package": "tool@2.0.0"}}}]
    older = {"id": "tool", "name": "Tool", "version": "1.0.0", "distribution": {"npx": {"package": "tool@1.0.0"}}}
    newer = {**older, "version": "2.1.0", "distribution": {"npx": {"package": "tool@2.1.0"}}}
    catalogue.notes.clear()
    assert catalogue.never_older([older], shipped) == shipped
    assert catalogue.notes == ["tool: the registry lists 1.0.0, older than 2.0.0 (shipped before): 2.0.0 kept"]
    assert catalogue.never_older([newer], shipped) == [newer]
    assert catalogue.never_older([{**older, "downgrade": True}], shipped)[0]["version"] == "1.0.0"
    assert "marks 1.0.0 as a downgrade" in catalogue.notes[-1]


def test_a_package_or_download_that_installs_another_version_than_its_entry_says_is_dropped():
    agents = [
        {"id": "liar", "version": "9.9.9", "distribution": {"npx": {"package": "liar@0.0.1"}}},
        {"id": "tagged", "version": "1.0.0", "distribution": {"npx": {"package": "@s/tagged@latest"}}},
        {"id": "py", "version": "0.5.0", "distribution": {"uvx": {"package": "py[acp]==0.5.0"}}},
        {"id": "mixed", "version": "7.5.6", "distribution": {
            "npx": {"package": "@kilocode/cli@7.5.6"},
            "binary": {
                "linux-x86_64": {"archive": "https://github.com/x/releases/download/v7.5.5/kilo-linux-x64.tar.gz", "cmd": "./kilo"},
                "linux-aarch64": {"archive": "https://x.example/latest/kilo.tar.gz", "cmd": "./kilo"},
            },
        }},
        {"id": "junie", "version": "2698.3.0", "distribution": {"binary": {
            "linux-x86_64": {"archive": "https://github.com/J/r/releases/download/2698.3/junie-release-2698.3-linux-amd64.zip", "cmd": "junie"},
        }}},
    ]
    catalogue.notes.clear()
    kept = catalogue.agreeing(agents)
    assert [a["id"] for a in kept] == ["py", "mixed", "junie"]
    assert list(kept[1]["distribution"]["binary"]) == ["linux-aarch64"]  # names no version: its sha256 checks it
    assert catalogue.notes == [
        "liar: it says version 9.9.9, but its npm package liar@0.0.1 installs 0.0.1: dropped",
        "liar: no distribution that installs 9.9.9: dropped",
        "tagged: its npm package @s/tagged@latest is not pinned to one version: dropped",
        "tagged: no distribution that installs 1.0.0: dropped",
        "mixed: it says version 7.5.6, but its linux-x86_64 download https://github.com/x/releases/download/v7.5.5/kilo-linux-x64.tar.gz installs 7.5.5: dropped",
    ]


def test_every_entry_of_the_shipped_catalogue_installs_its_version():
    shipped = json.loads((ROOT / "extension" / "catalogue" / "registry.json").read_text())
    catalogue.notes.clear()
    assert catalogue.agreeing(json.loads(json.dumps(shipped["agents"]))) == shipped["agents"]
    assert catalogue.notes == []
