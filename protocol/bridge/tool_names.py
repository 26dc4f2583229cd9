"""The names of our bridged tools both ways: the names the bridge gives the consumer's tools (ones every
model API takes, mapped back exactly), and the names agents give them back (`BRIDGE_NAMES`).

Pure (no trio). See "Tool names" in docs/DESIGN.md. A VS Code consumer's tool names are whatever
its tools declared: dots, spaces, 80 or 200 characters. An agent puts its own prefix before a
tool of an MCP server (Claude Code and Codex: `mcp__vscode_tools__<name>`) and hands the whole to
its model's API, where the strictest rule known is OpenAI's `^[a-zA-Z0-9_-]{1,64}$`: a name
outside it is rewritten by the agent (Claude Code), dropped (Claude Code, past 128 characters),
or makes the model's request fail. So each tool gets a name within that rule with the longest
known prefix counted:

- a name that already fits is kept as it is (readable, and what the model knows);
- another is spelled with its other characters as `_`, cut to fit, and given `_<8 hex of the
  sha256 of the original>` when cut or when the spelling is taken, so it is unique (`tool_<hash>`
  when none of its characters fits);
- the same list always gives the same names (a name depends on the list only where two would
  meet), and a call by a given name maps back to exactly one original.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

# What agents put before our server's tool names, the longest counted (BRIDGE_NAMES reads them back).
KNOWN_PREFIXES = (
    "mcp__vscode_tools__",  # Claude Code (and its 128-character limit), Codex
    "mcp_vscode_tools_",  # Gemini CLI
    "vscode_tools/",  # fast-agent
)
MAX_NAME = 64  # OpenAI's function names, the strictest: ^[a-zA-Z0-9_-]{1,64}$
BUDGET = MAX_NAME - max(len(p) for p in KNOWN_PREFIXES)
FITS = re.compile(r"[A-Za-z0-9_-]+")
OTHER = re.compile(r"[^A-Za-z0-9_-]+")
HASH = 8


def fits(name: str) -> bool:
    return len(name) <= BUDGET and FITS.fullmatch(name) is not None


def _tag(name: str, salt: int) -> str:
    return hashlib.sha256(f"{name}\0{salt}".encode() if salt else name.encode()).hexdigest()[:HASH]


@attrs.frozen
class ToolNames:
    """The agent's name of each consumer tool, and back."""

    to_agent: Mapping[str, str]
    to_consumer: Mapping[str, str]

    @classmethod
    def of(cls, names: Iterable[str]) -> ToolNames:
        """Names for `names` (the consumer's, in its order; empty and repeated ones are skipped)."""
        originals = list(dict.fromkeys(n for n in names if n))
        to_agent = {name: name for name in originals if fits(name)}
        taken = set(to_agent)
        for name in originals:
            if name in to_agent:
                continue
            spelled = OTHER.sub("_", name).strip("_")
            candidate = spelled if len(spelled) <= BUDGET else ""
            spelled = spelled or "tool"  # nothing of it fits: `tool_<hash>`
            salt = 0
            while not candidate or candidate in taken:
                tag = _tag(name, salt)
                candidate = f"{spelled[: BUDGET - HASH - 1].rstrip('_')}_{tag}".lstrip("_")
                salt += 1
            to_agent[name] = candidate
            taken.add(candidate)
        to_agent = {name: to_agent[name] for name in originals}  # in the consumer's order
        return cls(to_agent, {agent: name for name, agent in to_agent.items()})

    def agent(self, name: str) -> str:
        """The agent's name of the consumer tool `name` (itself when it is none of these)."""
        return self.to_agent.get(name, name)

    def consumer(self, name: str) -> str | None:
        """The consumer tool an agent's `name` stands for; None when it stands for none."""
        return self.to_consumer.get(name)


# How agents name our tools back ---------------------------------------------------------------


BRIDGE_NAMES = (  # how agents name a tool of our `vscode_tools` MCP server
    re.compile(r"^mcp__vscode_tools__(?P<tool>.+)$"),  # Claude Code
    re.compile(r"^vscode_tools/(?P<tool>.+)$"),  # fast-agent
    re.compile(r"^mcp_vscode_tools_(?P<tool>.+)$"),  # Gemini CLI
    re.compile(r"^(?P<tool>\S+) \(vscode_tools MCP Server\)$"),  # Gemini CLI titles
    re.compile(r"^vscode_tools[.:](?P<tool>.+)$"),
    re.compile(r'^Allow the vscode_tools MCP server to run tool "(?P<tool>[^"]+)"\?$'),  # Codex's question
    re.compile(r"^Tool: vscode_tools/(?P<tool>.+)$"),  # Codex's tool-call titles
)


def _bridge_names(text: Any) -> Iterator[str]:
    """The tool names `text` gives a tool of our server, by each of BRIDGE_NAMES that matches."""
    if isinstance(text, str):
        for pattern in BRIDGE_NAMES:
            if match := pattern.match(text.strip().strip("`")):
                yield match["tool"]


# Where agents put the name of the tool a call is about (paths into the ACP value), one row per
# naming scheme seen: data, read for every agent alike.
CALL_NAMES = (("title",), ("name",), ("_meta", "claudeCode", "toolName"))
PERMISSION_NAMES = (
    ("toolCall", "title"),
    ("toolCall", "toolCallId"),
    ("toolCall", "rawInput", "tool_name"),
    ("toolCall", "rawInput", "toolName"),
    ("toolCall", "rawInput", "name"),
)
# Named only in the question an MCP tool-call approval asks (Codex's fixed title names no tool):
# counted where every path of QUESTION_WHEN holds its value (our server, whose name is ours alone).
QUESTION = ("toolCall", "rawInput", "request", "message")
QUESTION_WHEN = {
    ("toolCall", "rawInput", "server_name"): "vscode_tools",
    ("toolCall", "rawInput", "request", "_meta", "codex_approval_kind"): "mcp_tool_call",
}


# The same approval asked as an ACP form elicitation (Codex's adapter, of a client that declares form
# elicitation): the question is the elicitation's message, counted where ELICITED_WHEN holds.
ELICITED_QUESTION = ("message",)
ELICITED_WHEN = {("_meta", "codex_approval_kind"): "mcp_tool_call"}


def _at(value: Any, path: tuple[str, ...]) -> Any:
    """The value at `path` in nested objects; None where any step is not an object or absent."""
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def calls_bridge(update: dict[str, Any]) -> bool:
    """Whether an agent's tool call (a `tool_call` or `tool_call_update`) is a call of our
    `vscode_tools` server, in any agent's naming: its raw input naming the server, or a name at
    one of `CALL_NAMES` in one of the patterns of `BRIDGE_NAMES`. The server's name is ours alone."""
    if "vscode_tools" in (_at(update, ("rawInput", "server")), _at(update, ("rawInput", "server_name"))):
        return True
    return any(True for path in CALL_NAMES for _ in _bridge_names(_at(update, path)))


def bridged_tool(params: dict[str, Any], tools: set[str]) -> str | None:
    """The VS Code tool a permission request is about, if it is one of ours; else None.

    Agents put the tool's name at one of `PERMISSION_NAMES`, each in its own naming scheme, or
    only in the approval's question (`QUESTION`); only a name that is really one of the bridged
    tools counts.
    """
    texts = [_at(params, path) for path in PERMISSION_NAMES]
    if all(_at(params, path) == value for path, value in QUESTION_WHEN.items()):
        texts.append(_at(params, QUESTION))
    return next((name for text in texts for name in _bridge_names(text) if name in tools), None)


def elicited_bridged_tool(params: dict[str, Any], tools: set[str]) -> str | None:
    """The VS Code tool an agent's question (`elicitation/create`) asks approval to call, if the question is
    an MCP tool-call approval (`ELICITED_WHEN`) for one of our bridged tools; else None."""
    if not all(_at(params, path) == value for path, value in ELICITED_WHEN.items()):
        return None
    return next((name for name in _bridge_names(_at(params, ELICITED_QUESTION)) if name in tools), None)
