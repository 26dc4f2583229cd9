"""The backend's version, as its package's metadata says: pyproject.toml is the one place it is
written (the extension's package.json repeats it; tests/actors/test_version.py keeps the two equal).

It is part of the first model list, so it is read the cheap way: the `Version:` line of the first
`symposium-*.dist-info/METADATA` on `sys.path`, the one `importlib.metadata` would find there too.
`importlib.metadata` builds an index of every path entry and parses the file as an e-mail, which
costs a cold start about 20 ms (`make bench`, "cold start"); it remains the fallback for a package
installed some other way (an egg, a zip).
"""

from __future__ import annotations

import functools
import os
import sys


def _from_dist_info() -> str | None:
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in sorted(n for n in names if n.startswith("symposium-") and n.endswith(".dist-info")):
            if (found := _version_header(os.path.join(folder, name, "METADATA"))) is not None:
                return found
    return None


def _version_header(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as metadata:
            for line in metadata:
                if not line.strip():
                    return None  # the headers end at the first empty line
                if line.startswith("Version:"):
                    return line.removeprefix("Version:").strip()
    except OSError:
        pass
    return None


@functools.cache
def version() -> str:
    """Read once, on first use. Run from a checkout that was never installed (`PYTHONPATH=.`),
    there is no metadata: the backend still serves, and says it does not know its version."""
    found = _from_dist_info()
    if found is not None:
        return found
    import importlib.metadata

    try:
        return importlib.metadata.version("symposium")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"
