"""Signing in to an agent the ACP way: which of its `authMethods` to use without asking, and what to
offer the user otherwise (docs/DESIGN.md, "Sign-in").

An agent lists its methods in its `initialize` answer; each is one of ACP's kinds:

- `env_var` (`vars`: the variables it reads): usable without asking when every variable it needs is
  set in the agent's environment; then the client calls `authenticate` with it before `session/new`
  (Codex opens no session until it is called, whatever its environment holds);
- `terminal` (`args`, `env`): the user runs the agent's own command with those extra arguments in a
  terminal; ACP v1 asks the client to start the agent afresh afterwards. An older form names the
  whole command in `_meta["terminal-auth"]` (`command`, `args`, `env`), for clients that declare
  that `_meta` capability instead of `auth.terminal`: only what it adds to the agent's own command
  line is taken, never its command, so a sign-in runs nothing the user did not configure;
- `agent` (or no `type`): the agent signs in by itself (a browser, say) when `authenticate` is called.
  Where the agent facts say such a method reads an API key from the environment (`keys`), it takes
  a key as an `env_var` method does.

What a method sets in the sign-in's environment, or asks the user for in the key box, is allowed by
name, not refused by a list (`may_set`): a variable named like a credential or an endpoint
(`*_API_KEY`, `*_TOKEN`, `*_BASE_URL`) or one the agent facts document for that agent
(`AgentFacts.documented_env`), and never one that changes what runs (`runs_something`: `PATH`,
`LD_*`, `NODE_OPTIONS`, ...). Anything else (`EDITOR`, `BROWSER`, `PAGER`, `BASH_FUNC_*%%`,
`OPENSSL_CONF`, ...) is left out and named in `Method.refused`, which the user is told. Every text is
bounded, so what is shown and stored of a method is small whatever the agent sent.

Plain functions of what the agent declared and of the agent facts: nothing here knows an agent by name.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs

from protocol.acp.agent_facts import KeyMethod
from protocol.acp.agent_text import MAX_SHOWN, is_shown_as_is, shown

AUTH_REQUIRED = -32000  # ACP's `auth_required` error code
# Where an agent pushes who it is signed in as (declared by `agentCapabilities._meta.authStatus`; an
# interim `_meta` extension of ACP): `{"authStatus": {"kind", "label"}}`, whenever it changes.
STATUS_UPDATE = "_auth/status_update"
MAX_METHODS = 20  # an agent offering more is not believed beyond these
MAX_ARGS = 64
MAX_ARG = 4096  # characters of one argument a terminal method adds
MAX_VARS = 16  # variables one method names or sets
MAX_VALUE = 4096  # characters of one variable's value a terminal method sets

# Variables that change what a process runs or loads, whoever set them: a sign-in method may not set
# these (docs/reliability.md). Compared in upper case (Windows' names are case-insensitive).
RUNS_SOMETHING = frozenset({
    "PATH", "PATHEXT", "COMSPEC", "SHELL", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "CDPATH",
    "PROMPT_COMMAND", "HOME", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
    "TMPDIR", "TEMP", "TMP", "CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
    "PERLLIB", "RUBYLIB", "RUBYOPT", "GCONV_PATH", "MALLOC_CONF", "ELECTRON_RUN_AS_NODE", "ZDOTDIR",
})
RUNS_SOMETHING_PREFIXES = ("LD_", "DYLD_", "NODE_", "NPM_CONFIG_", "PYTHON", "PERL5", "RUBY", "GEM_", "BUNDLE_", "GIT_", "UV_", "PIP_", "VIRTUAL_ENV", "CONDA", "BUN_", "DENO_", "LUA_", "R_", "JAVA_", "DOTNET_", "CORECLR_", "COR_", "ELECTRON_", "SYMPOSIUM_")

# What a sign-in may set without the agent facts naming it: a credential or an endpoint, by its name.
CREDENTIAL = re.compile(r"[A-Za-z][A-Za-z0-9_]*_(API_KEY|TOKEN|BASE_URL)", re.IGNORECASE)

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
    # The variables it reads a key from: an env_var method's, those it cannot do without (every one
    # is needed); an agent method's, from the agent facts (the first one set is read).
    vars: tuple[str, ...] = ()
    launch: Launch | None = None  # a terminal method's
    # What the agent asked this method to set, or to ask the user for, that `may_set` refuses: said to
    # the user (`sign_in_message`, the extension's notification), never set.
    refused: tuple[str, ...] = ()
    # False for a key sign-in the agent facts add (`keyMethod`): the agent reads the key at start and
    # knows no such method, so nobody sends `authenticate` for it.
    declared: bool = True

    @property
    def asks_for(self) -> tuple[str, ...]:
        """The variables the user is asked a value for to sign in with it (the key box): each of an
        env_var method's; the first of an agent method's (where a key is kept for it)."""
        return self.vars if self.kind == ENV_VAR else self.vars[:1]

    def satisfied_by(self, env: Mapping[str, str]) -> bool:
        """Whether the agent's environment holds what it reads a key from (set, not empty)."""
        if self.kind == ENV_VAR:
            return all(env.get(name) for name in self.vars)
        return any(env.get(name) for name in self.vars)


def methods(
    raw: Any,
    command: str | None,
    args: Sequence[str] = (),
    keys: Mapping[str, Sequence[str]] | None = None,
    key_method: KeyMethod | None = None,
    documented: Collection[str] = (),
) -> tuple[Method, ...]:
    """The sign-in methods an agent declared (`initialize`'s `authMethods`), as far as they can be
    used: ids fit to send back, terminal methods only where there is something to run (`command`
    and `args`: the agent's own command line; None for an agent with no command, like Eliza).
    `keys`: the agent facts' variables an agent-handled method reads its key from, by method id;
    `key_method`: the agent facts' key sign-in the agent reads at start without declaring it, offered
    after the agent's own (where the agent declares no method of that id); `documented`: the variables
    the agent facts name for this agent (`AgentFacts.documented_env`), which its methods may set."""
    found: list[Method] = []
    if key_method is not None and command is not None:
        vars = tuple(v for v in key_method.vars if may_set(v, documented))
        ids = {e.get("id") for e in raw if isinstance(e, dict)} if isinstance(raw, (list, tuple)) else set()
        if vars and key_method.id not in ids:
            found.append(Method(key_method.id, shown(key_method.name), ENV_VAR, shown(key_method.description), vars=vars, declared=False))
    if not isinstance(raw, (list, tuple)):
        return tuple(found)
    for entry in raw:
        if len(found) == MAX_METHODS:
            break
        if not isinstance(entry, dict) or not is_shown_as_is(entry.get("id")):
            continue
        method = _method(entry, command, tuple(args), keys or {}, documented)
        if method is not None:
            found.append(method)
    return tuple(sorted(found, key=lambda m: not m.declared))  # the agent's own first


def _method(entry: dict[str, Any], command: str | None, args: tuple[str, ...], keys: Mapping[str, Sequence[str]], documented: Collection[str]) -> Method | None:
    id = entry["id"]
    name = shown(entry.get("name")) or id
    description = shown(entry.get("description"))
    kind = entry.get("type")
    if kind == ENV_VAR:
        vars = entry.get("vars")
        needed = tuple(
            var["name"]
            for var in (vars[:MAX_VARS] if isinstance(vars, list) else ())
            if isinstance(var, dict) and _env_name(var.get("name")) and var.get("optional") is not True
        )
        if not needed:
            return None
        refused = tuple(v for v in needed if not may_set(v, documented))
        if refused:  # a key box for EDITOR or NODE_OPTIONS would have the user set what runs: no box, said why
            return Method(id, name, ENV_VAR, description, refused=refused)
        return Method(id, name, ENV_VAR, description, vars=needed)
    if kind == TERMINAL:
        if command is None:
            return None
        extra = _strings(entry.get("args"))
        if extra is None:
            return None
        env, refused = _env(entry.get("env"), documented)
        return Method(id, name, TERMINAL, description, launch=Launch(command, (*args, *extra), env), refused=refused)
    if kind not in (None, AGENT):
        return None  # a kind we do not know (ACP lets agents add their own): nothing we could do with it
    meta = entry.get("_meta")
    legacy = meta.get("terminal-auth") if isinstance(meta, dict) else None
    if isinstance(legacy, dict) and command is not None:
        # The older form names a whole command as the agent wrote it (`/bin/sh -c ...` would do): only
        # the arguments it adds after the agent's own are taken, run with the agent's own command.
        legacy_args = _strings(legacy.get("args"))
        if legacy_args is not None and legacy_args[: len(args)] == args and len(legacy_args) > len(args):
            env, refused = _env(legacy.get("env"), documented)
            return Method(id, name, TERMINAL, description, launch=Launch(command, legacy_args, env), refused=refused)
    reads = tuple(keys.get(id, ()))[:MAX_VARS]
    return Method(id, name, AGENT, description, vars=tuple(v for v in reads if may_set(v, documented)))


def _env_name(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_SHOWN and "=" not in value and "\0" not in value and is_shown_as_is(value)


def _strings(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_ARGS or not all(isinstance(v, str) and "\0" not in v and len(v) <= MAX_ARG for v in value):
        return None
    return tuple(value)


def runs_something(name: str) -> bool:
    """Whether a variable can change what a process runs or loads (`PATH`, `LD_PRELOAD`,
    `NODE_OPTIONS`, `PYTHONPATH`, a shell's start-up file, ...): never set by a sign-in method."""
    upper = name.upper()
    return upper in RUNS_SOMETHING or upper.startswith(RUNS_SOMETHING_PREFIXES)


def may_set(name: str, documented: Collection[str] = ()) -> bool:
    """Whether a sign-in method may set `name` in the agent's environment (or ask the user for it):
    a name fit to show that is named like a credential or an endpoint (`ANTHROPIC_API_KEY`,
    `GITHUB_TOKEN`, `OPENAI_BASE_URL`) or that the agent facts document for this agent (`documented`),
    and that cannot change what runs. Everything else is refused: allowed by name, not refused by list."""
    return _env_name(name) and not runs_something(name) and (CREDENTIAL.fullmatch(name) is not None or name in documented)


def _env(value: Any, documented: Collection[str]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """What a terminal method sets (names `may_set` allows, values bounded), and the names refused."""
    if not isinstance(value, dict):
        return (), ()
    kept: list[tuple[str, str]] = []
    refused: list[str] = []
    for k, v in list(value.items())[:MAX_VARS]:
        if not isinstance(k, str) or not isinstance(v, str) or "\0" in v or len(v) > MAX_VALUE:
            continue  # not a variable: nothing the agent could have meant to set
        if may_set(k, documented):
            kept.append((k, v))
        else:
            refused.append(shown(k) or "?")
    return tuple(kept), tuple(refused)


def without_asking(offered: Sequence[Method], env: Mapping[str, str]) -> Method | None:
    """The method to `authenticate` with before the first session, asking nobody: the first method
    that reads a key (an `env_var` one, or an agent one the facts map to its variables) whose key the
    agent's environment holds (set, not empty; every needed variable, for an `env_var` method)."""
    for method in offered:
        if method.declared and method.vars and method.kind in (ENV_VAR, AGENT) and method.satisfied_by(env):
            return method
    return None


def to_offer(offered: Sequence[Method]) -> tuple[Method, ...]:
    """What the user can be offered to click: terminal and agent-handled methods (an env_var
    method is a key, said in the message as the variables to give)."""
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
        wire["askFor"] = list(method.asks_for)  # what the key box asks for (docs/DESIGN.md, "Sign-in")
    if method.launch is not None:
        wire["terminal"] = {"command": method.launch.command, "args": list(method.launch.args), "env": dict(method.launch.env)}
    if method.refused:
        wire["refused"] = list(method.refused)  # what it asked to set and was not let: the extension says so
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
        ways.append(f"enter its {_either(keys)}")
    message = parts[0] + (f": {'; or '.join(ways)}" if ways else "")
    message = f"{message} ({said})" if said else message
    refused = refusal(offered)
    return f"{message}. {refused}" if refused else message


def refusal(offered: Sequence[Method]) -> str:
    """What the user is told of the variables the agent's sign-in methods asked for and were refused
    (`may_set`); empty when there were none."""
    names = sorted({name for m in offered for name in m.refused})
    if not names:
        return ""
    return (f"Symposium does not let a sign-in set {_either(names)}: only API keys, tokens, base URLs "
            "and the variables it knows the agent documents")


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
