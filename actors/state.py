"""The state folder: where the backend keeps what must survive it, and the key in it.

File I/O, so on this side of the layers; the markers the key authenticates are
`protocol/markers.py`'s (see "Identity and markers" in `docs/DESIGN.md`).
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from actors.private import open_private, private_folder

log = logging.getLogger(__name__)


def state_dir() -> Path:
    """Where the backend keeps what must survive it: $SYMPOSIUM_STATE_DIR, else XDG's state home."""
    if explicit := os.environ.get("SYMPOSIUM_STATE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "symposium"


KEY_BYTES = 32


def load_secret(directory: Path) -> bytes:
    """The marker key, created on first use (mode 0600).

    It also keys the stored agent digests and the continue tokens, so only a whole key will do:
    a file that holds anything else (empty, cut short, not hex) is replaced, and markers made
    with the old key are no longer honoured, which the log says. When the folder cannot hold
    the key at all, the backend still serves, with a key of this run only, and says so.
    """
    path = directory / "marker-secret"
    try:
        key = bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        log.warning("the marker key in %s is unreadable (%s): making a new one; earlier chats start afresh", path, exc)
    else:
        if len(key) == KEY_BYTES:
            return key
        log.warning("the marker key in %s is %d bytes, not %d: making a new one; earlier chats start afresh", path, len(key), KEY_BYTES)
    key = secrets.token_bytes(KEY_BYTES)
    try:
        private_folder(directory, tighten=True)
        with open_private(path, "w") as file:
            file.write(key.hex())
    except OSError as exc:
        log.warning("cannot keep a marker key in %s (%s): chats will not continue after this backend exits", directory, exc)
    return key
