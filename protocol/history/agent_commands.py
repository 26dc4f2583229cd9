"""A command the agent announced, typed in the chat, reaches the agent exactly as typed
(docs/usage.md, "The agent's commands"). Pure.

VS Code's chat takes `/name` for itself where one of its own commands, a participant's, a prompt
file or a skill has that name (Copilot's `/compact`, `/review`, `/explain`, `/fix`, `/tests`, `/new`,
...); anything else it sends on as text, inside Copilot's `<userRequest>`. So a user types an agent's
command as `/name ...`, or `//name ...` where VS Code has a `/name` of its own: both reach the agent as
`/name ...`, with none of Copilot's wrapping, which would hide the command from the agent (an agent
reads a command only at the start of the prompt).
"""

from __future__ import annotations

# The names VS Code 1.139 with Copilot Chat 0.67 takes for itself in the chat input: its own
# commands, Copilot's participant commands and its bundled prompt files and skills. An agent's
# command of the same name is typed `//name`.
VSCODE_TAKES = frozenset(
    {
        "clear", "help", "compact", "explain", "edit", "review", "tests", "fix", "new", "newNotebook", "setupTests",
        "search", "doc", "generate", "plan", "init", "fork", "debug", "agents", "models", "tools", "hooks", "skills",
        "prompts", "instructions", "troubleshoot", "create-prompt", "create-instructions", "create-skill",
        "create-agent", "create-hook", "agent-customization", "get-search-view-results",
    }
)  # fmt: skip


def typed_command(request: str, commands: frozenset[str]) -> str | None:
    """The command the user typed (`/name args` or `//name args`, `name` one the agent announced),
    as the agent reads it: `/name args`. None when the request is no command of the agent's."""
    text = request.strip()
    if not text.startswith("/"):
        return None
    body = text[2:] if text.startswith("//") else text[1:]
    name = body.split(maxsplit=1)[0] if body.split() else ""
    if name not in commands:
        return None
    return "/" + body


def spelling(name: str) -> str:
    """How a user types the agent's command `name` in VS Code's chat."""
    return ("//" if name in VSCODE_TAKES else "/") + name
