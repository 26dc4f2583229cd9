"""The client methods we serve, in one table (protocol/acp/client_methods.py): what `initialize` declares
follows from it. That every method in it has a handler, and no handler is left out of it:
tests/actors/test_client_handlers.py."""

from __future__ import annotations

from protocol.acp import schema as acp
from protocol.acp.client_methods import SERVED, UNSERVED, WITHOUT_A_METHOD, ClientMethod, Kind, client_capabilities


def _paths(value: object, at: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The leaves of a capabilities object, by path."""
    if isinstance(value, dict) and value:
        return {p for key, v in value.items() for p in _paths(v, (*at, key))}
    return {at}


def test_initialize_declares_what_the_table_serves() -> None:
    assert acp.initialize_params("1.0")["clientCapabilities"] == client_capabilities(SERVED)
    # As before the table: fs writes and form elicitation; no reads, no terminal; terminal sign-in;
    # the agent's compaction reported with its summary.
    assert client_capabilities() == {
        "fs": {"readTextFile": False, "writeTextFile": True},
        "terminal": False,
        "elicitation": {"form": {}},
        "auth": {"terminal": True},
        "_meta": {"terminal-auth": True},
        "session": {"compaction": {}},
    }


def test_a_capability_is_declared_only_where_a_served_method_declares_it() -> None:
    """Leave out any method and what it declares goes with it, back to "no" or absent."""
    for method in SERVED:
        without = client_capabilities(m for m in SERVED if m is not method)
        for path in _paths(dict(method.declares)) if method.declares else ():
            held: object = without
            for key in path:
                held = held.get(key) if isinstance(held, dict) else None
            assert held in (None, False), f"{'.'.join(path)} is declared without {method.name}"
    served_paths = {p for m in SERVED for p in _paths(dict(m.declares)) if m.declares}
    declared = _paths(client_capabilities())
    assert declared - served_paths <= _paths(dict(UNSERVED)) | _paths(dict(WITHOUT_A_METHOD)), "a capability no table entry accounts for"


def test_adding_a_method_is_one_table_entry() -> None:
    terminal = ClientMethod("terminal/create", Kind.REQUEST, {"terminal": True})
    assert client_capabilities((*SERVED, terminal))["terminal"] is True
