"""The lock the extension's private venv installs (requirements.txt; docs/reliability.md, "What the extension
installs") agrees with pyproject.toml: every dependency pinned inside its range, every pin hashed, one
version of a package per platform, and platform-only packages marked so one file serves every platform.
Offline; `make lock` (scripts/lock.py) checks the hashes against PyPI's files when it writes the lock."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("symposium_lock", ROOT / "scripts" / "lock.py")
assert spec and spec.loader
lock = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = lock  # its dataclass looks itself up there
spec.loader.exec_module(lock)


@pytest.fixture(scope="module")
def pins():
    return lock.parse((ROOT / "requirements.txt").read_text())


def test_the_checked_in_lock_agrees_with_pyproject(pins):
    assert lock.check_direct(pins) == []
    assert {"trio", "attrs", "cattrs", "mcp"} <= {pin.name for pin in pins}
    assert all(pin.hashes and all(len(h) == 64 for h in pin.hashes) for pin in pins)


def test_a_windows_only_package_is_marked_so(pins):
    (pywin32,) = [pin for pin in pins if pin.name == "pywin32"]
    environments = {name: env for name, env, _ in lock.environments()}
    assert pywin32.marker is not None
    assert pywin32.marker.evaluate(environments["cp312-windows-amd64"])
    assert not pywin32.marker.evaluate(environments["cp312-linux-x86_64"])
    assert not pywin32.marker.evaluate(environments["cp312-macos-arm64"])


def test_what_the_check_refuses():
    text = "trio==0.35.0 \\\n    --hash=sha256:" + "a" * 64 + "\nattrs==26.1.0\ncattrs==1.0 \\\n    --hash=sha256:" + "b" * 64 + "\n"
    problems = lock.check_direct(lock.parse(text))
    assert "attrs 26.1.0 has no hash" in problems
    assert "mcp is not in requirements.txt" in problems
    assert any(p.startswith("cattrs 1.0 is outside") for p in problems)
    doubled = text + "trio==0.30.0 ; sys_platform == 'linux' \\\n    --hash=sha256:" + "c" * 64 + "\n"
    assert "trio is pinned more than once for cp311-linux-x86_64" in lock.check_direct(lock.parse(doubled))
    assert not any("more than once" in p and "windows" in p for p in lock.check_direct(lock.parse(doubled)))
    with pytest.raises(ValueError, match="not an exact pin"):
        lock.parse("trio>=0.27\n")
