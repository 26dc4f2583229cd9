"""An agent's `fs/write_text_file` lands only inside its chat's workspace folder, never through a link
out of it, never under `.git/`, and only on regular files; a path that would block (a FIFO) is refused
at once and holds nothing the rest of the backend needs; a folder swapped for a link out after the
check cannot move the write; a file that VS Code, git, the shell or an agent runs by itself is never
written on disk (docs/reliability.md, "Hostile agents").

Over the real wire: a real `symposium vscodelm`, `tests/support/hostile_agent.py`'s `write` and
`swap-write` commands. Mostly with no edit tools offered (the backend writes on disk itself: Ask and
Plan modes).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import trio

from protocol.vscode.lm import AGENT_ACTION_APPROVED
from symposium.client import AGENT_ACTION_TOOL_DEF, BackendClient, assistant, process_agent, tool_result, user

HOSTILE = process_agent("hostile", sys.executable, [str(Path(__file__).parents[1] / "support" / "hostile_agent.py")])
# The same agent declaring `sessionCapabilities.additionalDirectories`: it takes a workspace's other folders.
FOLDERS = process_agent("folders", sys.executable, [str(Path(__file__).parents[1] / "support" / "hostile_agent.py"), "folders"])
ELIZA = process_agent("eliza", sys.executable, ["-m", "symposium", "eliza"])
GUARD = 30
WRITTEN = "written by the agent\n"
CREATE_FILE = {"name": "create_file", "description": "Create a new file", "inputSchema": {"type": "object", "properties": {"filePath": {"type": "string"}, "content": {"type": "string"}}}}


async def write(backend: BackendClient, workspace: Path, *paths: str) -> list[str]:
    with trio.fail_after(GUARD):
        answer = await backend.chat([user("write " + " ".join(paths))], agent=HOSTILE, model_id="hostile", cwd=str(workspace))
    assert answer.error is None, answer.error
    return answer.text().splitlines()


async def test_a_write_inside_the_workspace_lands(backend: BackendClient, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    (workspace / "src").mkdir(parents=True)
    assert await write(backend, workspace, str(workspace / "src" / "a.py"), str(workspace / "new" / "b.txt")) == ["ok", "ok"]
    assert (workspace / "src" / "a.py").read_text() == WRITTEN and (workspace / "new" / "b.txt").read_text() == WRITTEN


async def test_writes_outside_through_a_link_out_and_under_git_are_refused_and_change_nothing(backend: BackendClient, tmp_path: Path) -> None:
    workspace, outside = tmp_path / "project", tmp_path / "elsewhere"
    (workspace / ".git" / "hooks").mkdir(parents=True)
    outside.mkdir()
    hook = workspace / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    (outside / "victim").write_text("mine\n")
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    (workspace / "file-link").symlink_to(outside / "victim")
    paths = [
        str(outside / "victim"),  # absolute, outside
        str(workspace / ".." / "elsewhere" / "victim"),  # with ..
        str(workspace / "link" / "victim"),  # through a linked folder
        str(workspace / "file-link"),  # a linked file
        str(hook),  # a repository's hook
        str(workspace / ".git" / "config"),
    ]
    answers = await write(backend, workspace, *paths)
    assert len(answers) == len(paths)
    for path, answer in zip(paths, answers, strict=False):
        assert answer.startswith("refused: "), (path, answer)
    assert "outside" in answers[0] and str(workspace) in answers[0]
    assert ".git" in answers[4]
    assert (outside / "victim").read_text() == "mine\n"
    assert hook.read_text() == "#!/bin/sh\nexit 0\n" and stat.S_IMODE(hook.stat().st_mode) == 0o755
    assert not (workspace / ".git" / "config").exists()


async def test_forty_fifos_are_refused_at_once_and_other_chats_and_new_agents_go_on(backend: BackendClient, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    (workspace / "pipes").mkdir(parents=True)
    (workspace / "folder").mkdir()
    with trio.fail_after(GUARD):
        answers = await write(backend, workspace, f"@fifo:40:{workspace / 'pipes'}", str(workspace / "folder"), "/dev/null")
    assert len(answers) == 42
    assert all(a.startswith("refused: ") and "FIFO" in a for a in answers[:40]), answers[:3]
    assert "folder" in answers[40] and answers[41].startswith("refused: ")
    # Nothing is left holding a thread: another conversation writes, and a new agent starts.
    with trio.fail_after(GUARD):
        assert await write(backend, workspace, str(workspace / "after.txt")) == ["ok"]
        started = await backend.chat([user("hello")], agent=ELIZA, model_id="eliza")
    assert started.error is None and started.text()
    assert (workspace / "after.txt").read_text() == WRITTEN
    assert all(stat.S_ISFIFO(os.stat(workspace / "pipes" / f"fifo-{i}").st_mode) for i in range(40))


async def test_a_folder_swapped_for_a_link_out_while_the_card_waits_gets_nothing_written_outside(backend: BackendClient, tmp_path: Path) -> None:
    """The agent asks permission, writes work/gen/payload.txt (inside when checked), and once the
    backend has checked it replaces work/gen with a link to a folder outside; the user then allows."""
    workspace, outside = tmp_path / "work", tmp_path / "outside"
    (workspace / "gen").mkdir(parents=True)
    outside.mkdir()
    payload = workspace / "gen" / "payload.txt"
    payload.write_text("original\n")
    swapped = tmp_path / "swapped"
    os.mkfifo(swapped)
    command = [user(f"swap-write {payload} {outside} {swapped}")]
    with trio.fail_after(GUARD):
        ask = await backend.chat(command, agent=HOSTILE, model_id="hostile", cwd=str(workspace), tools=[AGENT_ACTION_TOOL_DEF])
        [card] = ask.tool_calls()
        assert await trio.to_thread.run_sync(swapped.read_text) == "swapped\n"  # the check has run, the link is in
        history = [*command, ask.assistant_message(), tool_result(card["toolCallId"], AGENT_ACTION_APPROVED)]
        done = await backend.chat(history, agent=HOSTILE, model_id="hostile", cwd=str(workspace), tools=[AGENT_ACTION_TOOL_DEF])
    assert done.error is None, done.error
    permission, write_answer = done.text().splitlines()
    assert '"yes"' in permission  # allowed
    assert write_answer.startswith("write: refused: ") and "outside" in write_answer, write_answer
    assert os.listdir(outside) == []
    assert (workspace / "gen-old" / "payload.txt").read_text() == "original\n"


RUN_BY_THEMSELVES = [
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".husky/pre-commit",
    "tools/hooks/pre-commit",  # the repository's core.hooksPath
    ".devcontainer/devcontainer.json",
    ".envrc",
    "team.code-workspace",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".devcontainer.json",
    ".env",
    ".venv/bin/activate",
    "lib/python3.12/site-packages/startup.pth",
    ".mcp.json",
    ".gemini/settings.json",
    ".qwen/settings.json",
    ".github/hooks/hooks.json",
]


def repository(workspace: Path) -> None:
    """A repository whose hooks are in tools/hooks (`git config core.hooksPath tools/hooks`)."""
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n\thooksPath = tools/hooks\n")


async def test_files_that_run_by_themselves_are_refused_without_edit_tools_and_nothing_lands(backend: BackendClient, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    repository(workspace)
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "settings.json").write_text("{}\n")
    answers = await write(backend, workspace, *(str(workspace / path) for path in RUN_BY_THEMSELVES), str(workspace / "src" / "ok.py"))
    assert answers[-1] == "ok" and (workspace / "src" / "ok.py").read_text() == WRITTEN
    for path, answer in zip(RUN_BY_THEMSELVES, answers, strict=False):
        assert answer.startswith("refused: ") and "edit tools" in answer and "for the user to review" in answer, (path, answer)
        assert not (workspace / path).exists() or (workspace / path).read_text() == "{}\n", path
    assert "runOn" in answers[0] and "core.hooksPath" in answers[3] and "direnv" in answers[5]


async def test_a_file_that_runs_by_itself_goes_to_vscodes_edit_tools_where_the_chat_offers_them(backend: BackendClient, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    repository(workspace)
    target = workspace / "tools" / "hooks" / "pre-commit"
    command = [user(f"write {target}")]
    with trio.fail_after(GUARD):
        asked = await backend.chat(command, agent=HOSTILE, model_id="hostile", cwd=str(workspace), tools=[CREATE_FILE])
        [call] = asked.tool_calls()
        assert call["toolName"] == "create_file" and call["parameters"] == {"filePath": str(target), "content": WRITTEN}
        assert not target.exists()  # VS Code writes it, in the user's review
        history = [*command, asked.assistant_message(), tool_result(call["toolCallId"], "The file was created")]
        done = await backend.chat(history, agent=HOSTILE, model_id="hostile", cwd=str(workspace), tools=[CREATE_FILE])
    assert done.error is None and done.text() == "ok"


async def test_every_folder_of_the_workspace_reaches_the_session_and_takes_writes_and_nowhere_else(backend: BackendClient, tmp_path: Path) -> None:
    """docs/usage.md, "Workspace folders": a two-folder workspace. The agent's session gets the second
    folder in `additionalDirectories` (it declares them); its writes land in both folders, and one
    outside both is refused."""
    first, second, outside = tmp_path / "app", tmp_path / "lib", tmp_path / "elsewhere"
    for folder in (first, second, outside):
        folder.mkdir()
    folders = [str(first), str(second)]
    with trio.fail_after(GUARD):
        told = await backend.chat([user("folders")], agent=FOLDERS, model_id="folders", cwd=str(first), folders=folders)
        wrote = await backend.chat([user("folders"), assistant(told.text()), user(f"write {first / 'a.txt'} {second / 'b.txt'} {outside / 'c.txt'}")], agent=FOLDERS, model_id="folders", cwd=str(first), folders=folders)
    assert told.text() == f"echo: {second}" or told.text().endswith(str(second)), told.text()
    answers = wrote.text().splitlines()
    assert answers[:2] == ["ok", "ok"] and answers[2] != "ok", answers
    assert (first / "a.txt").read_text() == WRITTEN and (second / "b.txt").read_text() == WRITTEN
    assert not (outside / "c.txt").exists()



async def test_an_agent_that_takes_no_other_folders_is_told_of_them_once_and_may_write_there(backend: BackendClient, tmp_path: Path) -> None:
    """An agent without `additionalDirectories` hears of the workspace's other folders in its first prompt."""
    first, second = tmp_path / "app", tmp_path / "lib"
    first.mkdir()
    second.mkdir()
    folders = [str(first), str(second)]
    with trio.fail_after(GUARD):
        told = await backend.chat([user("hello")], agent=HOSTILE, model_id="hostile", cwd=str(first), folders=folders)
        again = await backend.chat([user("hello"), assistant(told.text()), user(f"write {second / 'b.txt'}")], agent=HOSTILE, model_id="hostile", cwd=str(first), folders=folders)
    assert f"- {second}" in told.text() and told.text().rstrip().endswith("hello"), told.text()  # the note, then what the user wrote
    assert again.text().splitlines() == ["ok"] and (second / "b.txt").read_text() == WRITTEN
