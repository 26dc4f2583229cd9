"""The ACP methods we serve as a client, in one table: what each is, and what it has us declare in
`initialize`'s `clientCapabilities` (docs/DESIGN.md, "Where to change what").

The handlers are registered from this table (`actors/agent/client_handlers.py`) and the capabilities
declared from it (`client_capabilities`, sent by `protocol/acp/schema.py`), in the manner of the MCP SDK's
low-level server, which declares a capability only where a handler exists; a test holds the two to
each other. Adding a client method (`terminal/create`, say) is one entry here and one handler there.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from protocol.acp import auth


class Kind(enum.Enum):
    REQUEST = "request"  # answered with a result or an error
    NOTIFICATION = "notification"  # one at a time
    NOTIFICATIONS = "notifications"  # read in batches (what a flood of them costs is one call per read)


@attrs.frozen
class ClientMethod:
    name: str
    kind: Kind
    declares: Mapping[str, Any] = attrs.field(factory=dict)  # its part of `clientCapabilities`


SERVED: tuple[ClientMethod, ...] = (
    ClientMethod("session/update", Kind.NOTIFICATIONS),
    ClientMethod("session/request_permission", Kind.REQUEST),
    # Form elicitation: the agent's questions go to Copilot's question UI (docs/DESIGN.md, "The agent's questions").
    ClientMethod("elicitation/create", Kind.REQUEST, {"elicitation": {"form": {}}}),
    # An agent that writes through the client has its edits land in VS Code's review where the request
    # offers Copilot's edit tools, and written on disk by us where it does not: declared once, for
    # every request, since one agent process serves them all (docs/DESIGN.md, "Edits through the client").
    ClientMethod("fs/write_text_file", Kind.REQUEST, {"fs": {"writeTextFile": True}}),
    ClientMethod("$/cancel_request", Kind.NOTIFICATION),
    ClientMethod(auth.STATUS_UPDATE, Kind.NOTIFICATION),
)

# What ACP has a client declare either way, said "no" until a method serves it: no `readTextFile`
# (we could only read the disk, as the agent does, and Gemini CLI 0.56 cannot tell a client's "not
# found" from another error, so with it declared it cannot create a file), no terminal.
UNSERVED: Mapping[str, Any] = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
# Declared without a method of ours: a terminal sign-in runs in a VS Code terminal the extension opens
# (docs/DESIGN.md, "Sign-in"), declared both ways, `auth.terminal` and the `_meta["terminal-auth"]`
# agents read before it existed.
# And `session.compaction`: the agent reports compacting its own context as `compaction_update`s, with
# its summary, which answers a consumer's summarisation (docs/how-it-works.md, "Compaction").
WITHOUT_A_METHOD: Mapping[str, Any] = {"auth": {"terminal": True}, "_meta": {"terminal-auth": True}, "session": {"compaction": {}}}


def client_capabilities(served: Iterable[ClientMethod] = SERVED) -> dict[str, Any]:
    """`clientCapabilities`: what no method serves said "no", then what each served method declares."""
    declared = _merged({}, UNSERVED)
    for method in served:
        declared = _merged(declared, method.declares)
    return _merged(declared, WITHOUT_A_METHOD)


def _merged(into: Mapping[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(into)
    for key, value in more.items():
        if isinstance(value, Mapping):
            out[key] = _merged(out[key] if isinstance(out.get(key), Mapping) else {}, value)
        else:
            out[key] = value
    return out
