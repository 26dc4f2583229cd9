"""Where an agent's writes may land (protocol/host/confinement.py)."""

from protocol.host.confinement import write_refusal

ROOT = "/home/u/project"


def test_inside_the_workspace_folder_a_write_lands() -> None:
    assert write_refusal("/home/u/project/src/a.py", [ROOT]) is None
    assert write_refusal("/home/u/project/new/deep/b.txt", [ROOT]) is None
    assert write_refusal("/home/u/project/.github/workflows/ci.yml", [ROOT]) is None  # not .git
    assert write_refusal("/work/other/x", ["/elsewhere", "/work/other"]) is None  # any of its folders


def test_outside_it_is_refused_with_a_message_naming_both() -> None:
    for path in ("/etc/passwd", "/home/u/.bashrc", "/home/u/project-evil/a", "/home/u/project"):
        message = write_refusal(path, [ROOT])
        assert message is not None and path in message
    assert "outside" in (write_refusal("/etc/passwd", [ROOT]) or "") and ROOT in (write_refusal("/etc/passwd", [ROOT]) or "")
    assert write_refusal("/home/u/project/a", []) is not None  # a chat with no folder takes no writes


def test_a_repositorys_git_folder_is_refused_in_any_case() -> None:
    for path in ("/home/u/project/.git/hooks/pre-commit", "/home/u/project/.git/config", "/home/u/project/sub/.GIT/hooks/x", "/home/u/project/.git"):
        message = write_refusal(path, [ROOT])
        assert message is not None and ".git" in message, path


def test_windows_paths_compare_case_folded_and_across_drives() -> None:
    assert write_refusal("C:\\Users\\u\\Project\\a.txt", ["c:\\users\\u\\project"], windows=True) is None
    assert write_refusal("D:\\a.txt", ["C:\\users\\u\\project"], windows=True) is not None
    assert write_refusal("C:\\Users\\u\\Project\\.Git\\hooks\\x", ["C:\\Users\\u\\Project"], windows=True) is not None


def test_the_workspaces_other_folders_are_its_absolute_folders_besides_the_first_each_once() -> None:
    """protocol/host/workspace_folders.py: what reaches the agent's session besides its own folder."""
    from protocol.host.workspace_folders import other_folders

    assert other_folders("/w/app", ["/w/app", "/w/lib", "relative", "/w/lib/", "/w/docs"]) == ("/w/lib", "/w/docs")
    assert other_folders("C:\\W\\App", ["c:\\w\\app", "C:\\w\\Lib"], windows=True) == ("C:\\w\\Lib",)
    assert other_folders("/w/app", []) == ()
