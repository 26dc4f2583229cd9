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

_DIST_INFO = ("symposium-", ".dist-info")


def _from_dist_info() -> str | None:
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            if name.lower().startswith(_DIST_INFO[0]) and name.endswith(_DIST_INFO[1]):
                try:
                    with open(os.path.join(entry or ".", name, "METADATA"), encoding="utf-8") as metadata:
                        for line in metadata:
                            if line.startswith("Version:"):
                                return line.removeprefix("Version:").strip()
                            if not line.strip():
                                break  # the headers end at the first empty line
                except OSError:
                    continue
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
