"""Files something runs or loads by itself, and the hooks folder a repository configures
(protocol/host/autorun.py, protocol/host/git_config.py)."""

from protocol.host.autorun import AUTORUN, refusal, runs_it
from protocol.host.git_config import config_path, hooks_paths, includes

ROOT = "/home/u/project"


def loaded(path: str, hooks: tuple[str, ...] = (), *, windows: bool = False) -> str | None:
    below = path.split("/")
    return runs_it(below, f"{ROOT}/{path}", hooks, windows=windows)


def test_what_vscode_git_the_shell_or_an_agent_runs_by_itself_is_named() -> None:
    for path in (
        ".vscode/tasks.json", ".vscode/settings.json", ".vscode/mcp.json", "sub/.VSCode/launch.json",
        "all.code-workspace", ".devcontainer/devcontainer.json", ".devcontainer.json", ".husky/pre-commit",
        ".envrc", "web/.env", ".venv/bin/activate", "lib/python3.12/site-packages/evil.pth",
        ".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".gemini/settings.json",
        ".qwen/settings.json", ".github/hooks/hooks.json",
    ):
        assert loaded(path), path
    assert "runOn" in (loaded(".vscode/tasks.json") or "")


def test_ordinary_files_and_the_ones_left_out_are_not() -> None:
    for path in (
        "src/app.py", "README.md", ".env.example", "vscode/tasks.json", ".github/workflows/ci.yml", ".gitattributes",
        ".gitmodules", "package.json", "Makefile", ".claude/commands/review.md", "docs/.vscode.md",
    ):
        assert loaded(path) is None, path


def test_the_configured_hooks_folder_counts_and_windows_names_compare_as_windows_does() -> None:
    hooks = (f"{ROOT}/tools/hooks",)
    assert "core.hooksPath" in (loaded("tools/hooks/pre-commit", hooks) or "")
    assert loaded("tools/hooks-old/pre-commit", hooks) is None
    assert runs_it([".vscode. ", "tasks.json"], "C:\\p\\.vscode\\tasks.json", (), windows=True)
    assert runs_it(["Tools", "Hooks", "x"], "C:\\P\\Tools\\Hooks\\x", ("c:\\p\\tools\\hooks",), windows=True)


def test_the_table_is_data_with_a_reason_each_and_the_refusal_says_why() -> None:
    assert all(entry.pattern and entry.runs_it for entry in AUTORUN)
    message = refusal("/p/.vscode/tasks.json", "VS Code runs it", tools_offered=False)
    assert "edit tools" in message and "VS Code runs it" in message and "Ask and Plan" in message and "unchanged" in message
    assert "cannot make this change" in refusal("/p/.envrc", "direnv runs it", tools_offered=True)


def test_git_config_is_read_as_git_reads_it() -> None:
    text = """
# a comment
[user]
    name = Someone
[core]
    editor = vim
    hooksPath = .husky ; husky
[Core] HooksPath = "tools/my hooks"   # quoted
[core "x"]
[include]
    path = ~/extra.gitconfig
[includeIf "gitdir:~/work/"]
    path = work.gitconfig
[core]
    hookspath = one\\
two
"""
    assert hooks_paths(text) == [".husky", "tools/my hooks", "onetwo"]
    assert includes(text) == ["~/extra.gitconfig", "work.gitconfig"]
    assert hooks_paths("[core]\n\thooksPath\n") == ["true"]  # a bare key is "true", as git reads it
    assert hooks_paths("[other]\nhooksPath = y\n") == []  # only core's


def test_a_configured_path_is_placed_as_git_places_it() -> None:
    assert config_path(".husky", ROOT, "/home/u") == f"{ROOT}/.husky"
    assert config_path("~/hooks", ROOT, "/home/u") == "/home/u/hooks"
    assert config_path("/opt/hooks/", ROOT, "/home/u") == "/opt/hooks"
    assert config_path("%(prefix)/share/hooks", ROOT, "/home/u") is None
    assert config_path("~other/hooks", ROOT, "/home/u") is None
    assert config_path("hooks", "C:\\p", "C:\\Users\\u", windows=True) == "C:\\p\\hooks"
