"""The backend's version, as its package's metadata says: pyproject.toml is the one place it is
written (the extension's package.json repeats it; tests/test_version.py keeps the two equal)."""

from __future__ import annotations

import functools
import importlib.metadata


@functools.cache
def version() -> str:
    """Read once, on first use: importing the metadata machinery costs a few milliseconds."""
    return importlib.metadata.version("symposium")
