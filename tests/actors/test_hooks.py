"""Where git runs a repository's hooks from, read from its configuration files, never by running git
(actors/agent/hooks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.agent.hooks import hooks_folders


@pytest.fixture(autouse=True)
def no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's configuration is a file of the test's; no system one."""
    user = tmp_path / "user.gitconfig"
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return user


def test_no_repository_or_no_hooks_path_is_no_folder(tmp_path: Path) -> None:
    assert hooks_folders(str(tmp_path), ["a.txt"]) == []
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n\tbare = false\n")
    assert hooks_folders(str(tmp_path), ["a.txt"]) == []


def test_the_repository_holding_the_folder_or_nested_in_it_or_named_by_a_git_file(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n\thooksPath = .husky\n")
    workspace = tmp_path / "packages" / "web"  # a folder inside the repository
    workspace.mkdir(parents=True)
    assert str(tmp_path / ".husky") in hooks_folders(str(workspace), ["a.txt"])
    # A submodule (or worktree) below: its .git file names its repository folder, elsewhere.
    elsewhere = tmp_path / "modules" / "lib"
    elsewhere.mkdir(parents=True)
    (elsewhere / "config").write_text('[core]\n\thooksPath = "tools/hooks"\n')
    (workspace / "lib").mkdir()
    (workspace / "lib" / ".git").write_text(f"gitdir: {elsewhere}\n")
    assert str(workspace / "lib" / "tools" / "hooks") in hooks_folders(str(workspace), ["lib", "src", "a.txt"])


def test_the_users_configuration_and_what_it_includes_count(tmp_path: Path, no_user_config: Path) -> None:
    workspace = tmp_path / "project"
    (workspace / ".git").mkdir(parents=True)
    (tmp_path / "hooks.gitconfig").write_text("[core]\n\thooksPath = .githooks\n")
    no_user_config.write_text('[includeIf "gitdir:~/work/"]\n\tpath = hooks.gitconfig\n')
    assert str(workspace / ".githooks") in hooks_folders(str(workspace), ["a.txt"])
