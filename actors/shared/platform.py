"""Which platform's ways the backend takes: the one place a platform is told apart (docs/windows.md).

`ON_WINDOWS` is the host itself, for what exists only there (msvcrt's binary mode, Job Objects,
pywin32); `windows()` is whether the backend takes Windows' ways, which the tests can also ask for
on Linux ($SYMPOSIUM_TEST_WINDOWS=1) to run the Windows code paths that can run there (the
thread-backed stdio, the private-file policy, the state folder under %LOCALAPPDATA%), end to end
through a real backend. Nothing else sets it. Where the two ways are whole modules, they are paired
(`actors/store/private.py` / `actors/store/private_windows.py`, `symposium/process_posix.py` /
`symposium/process_windows.py`) and chosen once, as trio chooses `_unix_pipes` / `_windows_pipes`.
"""

from __future__ import annotations

import os
import sys

TEST_ENV = "SYMPOSIUM_TEST_WINDOWS"
ON_WINDOWS = sys.platform == "win32"


def windows() -> bool:
    return ON_WINDOWS or os.environ.get(TEST_ENV) == "1"
