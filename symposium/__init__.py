"""Symposium: ACP agents as VS Code language models (its version: `actors.shared.version.version()`)."""

import os as _os
import sys as _sys


def _forget_working_folder() -> None:
    """Drop the working folder that `python -m symposium` (without -I or -P) put first on sys.path.

    The backend runs in the user's workspace; a `secrets.py` or `protocol/` there must not be imported
    inside it (docs/reliability.md, "What the workspace cannot do"). The folder stays when it is the
    one this package was imported from (a source checkout run in place).
    """
    if _sys.flags.safe_path or not _sys.path:
        return
    first = _os.path.abspath(_sys.path[0] or _os.curdir)
    if first == _os.getcwd() and first != _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))):
        del _sys.path[0]


_forget_working_folder()
