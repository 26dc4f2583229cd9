"""The backend without what Windows lacks (docs/windows.md, "What is verified, and how").

No Windows machine runs these tests. `tests/support/without_posix.py` takes away, in a real
backend process on Linux, the modules, functions and signals Windows does not have, and
$SYMPOSIUM_TEST_WINDOWS=1 has the backend take the Windows code paths that can run on Linux:
stdio through worker threads (trio has no async stdio on Windows), the Windows private-file
policy (no mode bits, no os.getuid) and the state folder under %LOCALAPPDATA%.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import trio

from symposium.client import ELIZA, BackendClient, user

WITHOUT_POSIX = str(Path(__file__).resolve().parents[1] / "support" / "without_posix.py")
HELLO_REPLY = "How do you do. Please state your problem."
GUARD = 30  # a hang guard, not a timing budget


def windows_env(tmp_path: Path) -> dict[str, str]:
    profile = tmp_path / "profile"
    profile.mkdir()
    return {
        "SYMPOSIUM_TEST_WINDOWS": "1",
        "USERPROFILE": str(profile),
        "LOCALAPPDATA": str(profile / "AppData" / "Local"),
        "SYMPOSIUM_STATE_DIR": "",  # the default folder: %LOCALAPPDATA%\symposium
    }


def test_every_backend_module_imports_and_starts_without_posix(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", WITHOUT_POSIX, "import-all"],
        env={**os.environ, **windows_env(tmp_path)},
        capture_output=True,
        text=True,
        timeout=GUARD,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("imported ")
    state = tmp_path / "profile" / "AppData" / "Local" / "symposium"
    assert (state / "marker-secret").is_file() and (state / "written").read_text() == "ok"


async def test_eliza_answers_over_the_wire_through_the_windows_code_paths(tmp_path: Path) -> None:
    env = windows_env(tmp_path)
    async with BackendClient.spawn(env=env, launcher=(sys.executable, "-I", WITHOUT_POSIX, "symposium")) as backend:
        with trio.fail_after(GUARD):
            first = await backend.chat([user("Hello")], agent=ELIZA)
            assert first.error is None, first.error and first.error.message
            assert first.text() == HELLO_REPLY
            # A second turn continues the conversation: its marker was made with the key the
            # Windows policy kept in %LOCALAPPDATA%\symposium.
            second = await backend.chat([user("Hello"), first.assistant_message(), user("I am sad")], agent=ELIZA)
            assert second.error is None and second.text()
            big = "x" * 300_000  # a long request, read through the worker threads in many pieces
            third = await backend.chat([user(big)], agent=ELIZA)
            assert third.error is None and third.text()
        code = await backend.close()
    assert code == 0
    assert (Path(env["LOCALAPPDATA"]) / "symposium" / "marker-secret").is_file()
