"""The state folder: where the backend keeps what must survive it, and the key in it.

File I/O, so on this side of the layers; the markers the key authenticates are
`protocol/history/markers.py`'s (see "Identity and markers" in `docs/DESIGN.md`).
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from actors.shared.platform import windows
from actors.store.private import NotPrivate, open_private, private_folder

log = logging.getLogger(__name__)


def state_dir() -> Path:
    """Where the backend keeps what must survive it: $SYMPOSIUM_STATE_DIR, else XDG's state home,
    or on Windows %LOCALAPPDATA% (in the user's profile: docs/windows.md)."""
    if explicit := os.environ.get("SYMPOSIUM_STATE_DIR"):
        return Path(explicit)
    if windows():
        from protocol.host.windows import state_home

        return Path(state_home(os.environ, os.path.expanduser("~"))) / "symposium"
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "symposium"


KEY_BYTES = 32
KEY_FILE = "marker-secret"
KEY_TEXT = 4 * KEY_BYTES  # characters of the key file read at most: a whole key is 2 per byte


def load_secret(directory: Path) -> bytes:
    """The marker key, created on first use (mode 0600).

    It also keys the stored agent digests and the continue tokens, so only a whole key will do:
    a file that holds anything else (empty, cut short, not hex), or that others could read, is
    replaced, and markers made with the old key are no longer honoured, which the log says. A
    new key is written beside the old one and put in its place at once, so no reader ever sees
    half a key. When the folder cannot hold the key at all, or what is at the key's path is not
    the user's to use (a symbolic link, a FIFO, another user's file, or a folder others can
    write in: `actors/store/private.py`), the backend still serves, with a key of this run only, and
    says so; what is there is left as it is, neither followed nor waited on.
    """
    path = directory / KEY_FILE
    try:
        private_folder(directory, tighten=True)
        with open_private(path, "r") as file:
            key = bytes.fromhex(file.read(KEY_TEXT).strip())
    except FileNotFoundError:
        pass
    except NotPrivate as exc:
        if not exc.mendable:
            log.warning("not using the marker key: %s; chats will not continue after this backend exits", exc)
            return secrets.token_bytes(KEY_BYTES)
        log.warning("the marker key %s, so others may know it: making a new one; earlier chats start afresh", exc)
    except (OSError, ValueError) as exc:
        log.warning("the marker key in %s is unreadable (%s): making a new one; earlier chats start afresh", path, exc)
    else:
        if len(key) == KEY_BYTES:
            return key
        log.warning("the marker key in %s is %d bytes, not %d: making a new one; earlier chats start afresh", path, len(key), KEY_BYTES)
    key = secrets.token_bytes(KEY_BYTES)
    try:
        _keep(directory, key)
    except OSError as exc:
        log.warning("cannot keep a marker key in %s (%s): chats will not continue after this backend exits", directory, exc)
    return key


def _keep(directory: Path, key: bytes) -> None:
    """Write `key` as the folder's key: in a new file of its own, then renamed over the key's
    path (only ever a missing entry or a regular file of ours: `load_secret` checked it)."""
    private_folder(directory, tighten=True)
    fresh = directory / f".{KEY_FILE}-{secrets.token_hex(8)}"
    file = open_private(fresh, "w", new=True)
    try:
        with file:
            file.write(key.hex())
        os.replace(fresh, directory / KEY_FILE)
    except BaseException:
        fresh.unlink(missing_ok=True)  # ours: `new` made it
        raise
