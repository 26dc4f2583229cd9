"""Which of the consumer's tools an agent gets through the bridge: a decision, not an accident.

Pure (no trio). The Session applies `bridged_tools` to every turn before the turn's tools reach
the bridge or the permission policy; `wants_edits_handed_off` says, once per ACP session, whether
the agent's own file editing is switched off in favour of VS Code's edit tools (`OwnEdits`, data
of the agent's in `protocol/acp/agent_facts.py`). The reasons are in docs/DESIGN.md, "Tool bridge".

An agent already reads files, searches, and runs commands itself, on the same disk, and its
model knows its own tools best: offering Copilot's equivalents as well makes two sets of
hands, costs context on every model call, and splits the work between two views of it. What
only the editor can do (diagnostics, the language server, tasks, tests, commands, the user's
terminal, notebooks' kernels, asking the user in the chat) is what the bridge is for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from protocol.vscode.lm import BridgedTools, Tool

# What only the editor can do: bridged by default.
EDITOR = frozenset(
    {
        "get_errors",  # diagnostics of the language servers and linters VS Code runs
        "vscode_listCodeUsages",  # references, definitions, implementations (language server)
        "vscode_renameSymbol",  # a rename the language server carries out everywhere
        "testFailure",  # the Test Explorer's last failures
        "create_and_run_task",  # VS Code tasks
        "get_task_output",
        "run_vscode_command",  # any VS Code command
        "install_extension",  # the window's extensions
        "vscode_searchExtensions_internal",
        "terminal_selection",  # what the user selected in their terminal
        "terminal_last_command",  # what the user last ran there
        "copilot_getNotebookSummary",  # notebooks open in VS Code, and their kernels
        "read_notebook_cell_output",
        "run_notebook_cell",
        "vscode_askQuestions",  # ask the user in the chat, mid-turn
        "renderMermaidDiagram",  # a diagram in the chat
        "setup_tools_createNewWorkspace",  # VS Code's new-workspace flow
    }
)

# VS Code's edit tools: Copilot applies them in its chat editing session (Keep / Undo, inline
# diff). Bridged only when the agent's own editing is switched off in their favour (`OwnEdits`):
# otherwise the agent has two ways to write a file.
EDITS = frozenset(
    {
        "replace_string_in_file",
        "multi_replace_string_in_file",
        "insert_edit_into_file",
        "apply_patch",
        "create_file",
        "edit_notebook_file",
    }
)
# Without both a way to change a file and a way to create one, the agent keeps its own editing.
CHANGE_EDITS = frozenset({"replace_string_in_file", "multi_replace_string_in_file", "apply_patch", "insert_edit_into_file"})
CREATE_EDIT = "create_file"

# What the agent does itself: not bridged by default ("all" or a list of names brings them).
DUPLICATES = frozenset(
    {
        "read_file",
        "list_dir",
        "file_search",
        "grep_search",
        "view_image",
        "create_directory",
        "run_in_terminal",  # and the tools that only serve its terminals:
        "get_terminal_output",
        "send_to_terminal",
        "kill_terminal",
        "manage_todo_list",  # agents keep their own plan (ACP `plan` updates)
        "memory",  # agents keep their own memory (CLAUDE.md, AGENTS.md)
        "resolve_memory_file_uri",
        "session_store_sql",  # Copilot's own past sessions
        "github_repo",  # remote search: agents have their own web tools
        "github_text_search",
        "get_vscode_api",  # documentation lookup, not an editor capability
        "create_new_workspace",  # setup instructions for a model, not an action
        "create_new_jupyter_notebook",  # asks the chat model to write the notebook: it would call the agent back
    }
)

# Tools that only read (what VS Code's diagnostics, language server, tests, tasks, terminals and
# notebooks hold, or the workspace's files): listed to agents with MCP's `readOnlyHint`, so an agent
# that runs only such tools side by side (Claude Code runs an MCP tool concurrently with its siblings
# only when it is declared read-only) calls the ones its model asked for together, and they cost one
# round of Copilot's tool loop (docs/DESIGN.md, "Parallel tool calls"). Every other tool may change
# something: it is declared nothing, and such calls come one at a time.
READ_ONLY = frozenset(
    {
        "get_errors",
        "vscode_listCodeUsages",
        "testFailure",
        "get_task_output",
        "terminal_selection",
        "terminal_last_command",
        "copilot_getNotebookSummary",
        "read_notebook_cell_output",
        "read_file",
        "list_dir",
        "file_search",
        "grep_search",
        "view_image",
        "get_terminal_output",
        "get_vscode_api",
        "github_repo",
        "github_text_search",
    }
)

# Tools that call the same model back: for our provider, the same agent again. Never bridged.
NEVER = frozenset({"runSubagent"})


def bridged_tools(tools: Iterable[Tool], choice: BridgedTools, edits_handed_off: bool) -> tuple[Tool, ...]:
    """The consumer's tools the agent gets, in the consumer's order.

    `default`: the editor-only tools, VS Code's edit tools when the agent's own editing is off,
    and any tool not known here (another extension's, an MCP server configured in VS Code:
    the user installed it for its models to use). `all`: every tool. A list: those names.
    `NEVER` holds whatever the choice.
    """
    def wanted(name: str) -> bool:
        if name in NEVER:
            return False
        if choice.choice == "all":
            return True
        if choice.choice == "list":
            return name in choice.names
        if name in EDITS:
            return edits_handed_off
        return name not in DUPLICATES

    return tuple(tool for tool in tools if wanted(tool.name))


def wants_edits_handed_off(tools: Iterable[Tool], choice: BridgedTools) -> bool:
    """Whether a session wants the agent's own editing switched off (whether it is, the agent's
    `AgentProcess.edits_handed_off` decides): the consumer offers
    VS Code's tools to change and to create files, and the choice would bridge them."""
    names = {t.name for t in bridged_tools(tools, choice, edits_handed_off=True)}
    return CREATE_EDIT in names and bool(names & CHANGE_EDITS)


def merge_meta(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `extra` merged in, objects key by key (lists are joined)."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = merge_meta(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            merged[key] = [*old, *value]
        else:
            merged[key] = value
    return merged
