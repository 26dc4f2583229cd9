"""Whether the backend takes Windows' ways (docs/windows.md).

On Windows, always. On Linux, when $SYMPOSIUM_TEST_WINDOWS is 1: the tests ask so to run the
Windows code paths that can run there (the thread-backed stdio, the private-file policy, the
state folder under %LOCALAPPDATA%), end to end through a real backend. Nothing else sets it.
"""

from __future__ import annotations

import os
import sys

TEST_ENV = "SYMPOSIUM_TEST_WINDOWS"


def windows() -> bool:
    return sys.platform == "win32" or os.environ.get(TEST_ENV) == "1"
