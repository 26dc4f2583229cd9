"""Signing in to an agent the ACP way: which of its `authMethods` to use without asking, and what to
offer the user otherwise (docs/DESIGN.md, "Sign-in").

An agent lists its methods in its `initialize` answer; each is one of ACP's kinds:

- `env_var` (`vars`: the variables it reads): usable without asking when every variable it needs is
  set in the agent's environment; then the client calls `authenticate` with it before `session/new`
  (Codex opens no session until it is called, whatever its environment holds);
- `terminal` (`args`, `env`): the user runs the agent's own command with those extra arguments in a
  terminal; ACP v1 asks the client to start the agent afresh afterwards. An older form names the
  whole command in `_meta["terminal-auth"]` (`command`, `args`, `env`), for clients that declare
  that `_meta` capability instead of `auth.terminal`;
- `agent` (or no `type`): the agent signs in by itself (a browser, say) when `authenticate` is called.

Plain functions of what the agent declared: nothing here knows an agent by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from protocol.agent_text import is_shown_as_is, shown

AUTH_REQUIRED = -32000  # ACP's `auth_required` error code
# Where an agent pushes who it is signed in as (declared by `agentCapabilities._meta.authStatus`; an
# interim `_meta` extension of ACP): `{"authStatus": {"kind", "label"}}`, whenever it changes.
STATUS_UPDATE = "_auth/status_update"
MAX_METHODS = 20  # an agent offering more is not believed beyond these
MAX_ARGS = 64

ENV_VAR = "env_var"
TERMINAL = "terminal"
AGENT = "agent"


@attrs.frozen
class Launch:
    """What a terminal sign-in runs: a command, its arguments, and the variables it adds to the
    agent's own environment (the agent's configured `env` is added by whoever starts it, never carried)."""

    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class Method:
    id: str
    name: str
    kind: str  # ENV_VAR, TERMINAL or AGENT
    description: str = ""
    vars: tuple[str, ...] = ()  # an env_var method's variables, those it cannot do without
    launch: Launch | None = None  # a terminal method's


def methods(raw: Any, command: str | None, args: Sequence[str] = ()) -> tuple[Method, ...]:
    """The sign-in methods an agent declared (`initialize`'s `authMethods`), as far as they can be
    used: ids fit to send back, terminal methods only where there is something to run (`command`:
    the agent's own, for the standard form; None for an agent with no command, like Eliza)."""
    if not isinstance(raw, (list, tuple)):
        return ()
    found: list[Method] = []
    for entry in raw:
        if len(found) == MAX_METHODS:
            break
        if not isinstance(entry, dict) or not is_shown_as_is(entry.get("id")):
            continue
        method = _method(entry, command, args)
        if method is not None:
            found.append(method)
    return tuple(found)


def _method(entry: dict[str, Any], command: str | None, args: Sequence[str]) -> Method | None:
    id = entry["id"]
    name = shown(entry.get("name")) or id
    description = shown(entry.get("description"))
    kind = entry.get("type")
    if kind == ENV_VAR:
        needed = tuple(
            var["name"]
            for var in entry.get("vars") or ()
            if isinstance(var, dict) and _env_name(var.get("name")) and var.get("optional") is not True
        )
        return Method(id, name, ENV_VAR, description, vars=needed) if needed else None
    if kind == TERMINAL:
        if command is None:
            return None
        extra = _strings(entry.get("args"))
        if extra is None:
            return None
        return Method(id, name, TERMINAL, description, launch=Launch(command, (*args, *extra), _env(entry.get("env"))))
    if kind not in (None, AGENT):
        return None  # a kind we do not know (ACP lets agents add their own): nothing we could do with it
    meta = entry.get("_meta")
    legacy = meta.get("terminal-auth") if isinstance(meta, dict) else None
    if isinstance(legacy, dict) and isinstance(legacy.get("command"), str) and legacy["command"]:
        legacy_args = _strings(legacy.get("args"))
        if legacy_args is not None:
            return Method(id, name, TERMINAL, description, launch=Launch(legacy["command"], legacy_args, _env(legacy.get("env"))))
    return Method(id, name, AGENT, description)


def _env_name(value: Any) -> bool:
    return isinstance(value, str) and bool(value) and "=" not in value and "\0" not in value


def _strings(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_ARGS or not all(isinstance(v, str) and "\0" not in v for v in value):
        return None
    return tuple(value)


def _env(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        return ()
    return tuple((k, v) for k, v in value.items() if _env_name(k) and isinstance(v, str) and "\0" not in v)


def without_asking(offered: Sequence[Method], env: Mapping[str, str]) -> Method | None:
    """The method to `authenticate` with before the first session, asking nobody: the first
    `env_var` method whose every needed variable is set (not empty) in the agent's environment."""
    for method in offered:
        if method.kind == ENV_VAR and all(env.get(name) for name in method.vars):
            return method
    return None


def to_offer(offered: Sequence[Method]) -> tuple[Method, ...]:
    """What the user can be offered to click: terminal and agent-handled methods (an env_var
    method is an entry in the agent's `env`, said in the message, not a button)."""
    return tuple(m for m in offered if m.kind != ENV_VAR)


def is_auth_required(code: int, offered: Sequence[Method]) -> bool:
    """Whether an agent's error means "sign in first": ACP's auth_required code, from an agent
    that declared some way to sign in (without one, there is nothing to offer: a plain failure)."""
    return code == AUTH_REQUIRED and bool(offered)


def status_label(params: Any) -> str | None:
    """What an `_auth/status_update` says the agent is signed in as, to show ("Not logged in",
    "Claude subscription (...)"); None when it says nothing readable."""
    status = params.get("authStatus") if isinstance(params, dict) else None
    label = shown(status.get("label")) if isinstance(status, dict) else ""
    return label or None


def to_wire(method: Method) -> dict[str, Any]:
    """A method as the extension receives it (an error's `data.methods`, `lm/prepareModel`)."""
    wire: dict[str, Any] = {"id": method.id, "name": method.name, "kind": method.kind, "description": method.description}
    if method.vars:
        wire["vars"] = list(method.vars)
    if method.launch is not None:
        wire["terminal"] = {"command": method.launch.command, "args": list(method.launch.args), "env": dict(method.launch.env)}
    return wire


def sign_in_message(agent: str, offered: Sequence[Method], said: str) -> str:
    """What the user reads: the agent needs a sign-in, how it can be had, and what the agent said."""
    parts = [f"{agent} needs you to sign in"]
    buttons = [m.name for m in to_offer(offered)]
    keys = sorted({name for m in offered if m.kind == ENV_VAR for name in m.vars})
    ways = []
    if buttons:
        ways.append(f"sign in with {_either(buttons)}")
    if keys:
        ways.append(f"set {_either(keys)} in its env")
    message = parts[0] + (f": {'; or '.join(ways)}" if ways else "")
    return f"{message} ({said})" if said else message


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
