"""The backend's version, as its package's metadata says: pyproject.toml is the one place it is
written (the extension's package.json repeats it; tests/actors/test_version.py keeps the two equal)."""

from __future__ import annotations

import functools
import importlib.metadata


@functools.cache
def version() -> str:
    """Read once, on first use: importing the metadata machinery costs a few milliseconds.
    Run from a checkout that was never installed (`PYTHONPATH=.`), there is no metadata: the
    backend still serves, and says it does not know its version."""
    try:
        return importlib.metadata.version("symposium")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"
