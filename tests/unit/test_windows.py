"""How Windows finds and starts an agent (`protocol/host/windows.py`), decided on Linux with Windows'
paths and a made-up file system: the seam docs/windows.md describes."""

from __future__ import annotations

import ntpath

import pytest

from protocol.host import windows

NODE = "C:\\Program Files\\nodejs"
PATH = f"C:\\Windows\\System32;{NODE};C:\\Users\\ada\\AppData\\Roaming\\npm"
PATHEXT = ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC;.PY"
WORKSPACE = "C:\\Users\\ada\\project"
# What Node's installer puts in its folder: npm's shims beside extension-less shell scripts.
FILES = {
    f"{NODE}\\node.exe", f"{NODE}\\npx", f"{NODE}\\npx.cmd", f"{NODE}\\npx.ps1", f"{NODE}\\npm", f"{NODE}\\npm.cmd",
    f"{NODE}\\node_modules\\npm\\bin\\npx-cli.js", f"{NODE}\\node_modules\\npm\\bin\\npm-cli.js",
    "C:\\Users\\ada\\AppData\\Roaming\\npm\\gemini.cmd", "C:\\Users\\ada\\AppData\\Roaming\\npm\\gemini",
    "C:\\Tools\\goose.exe", f"{WORKSPACE}\\npx.exe", f"{WORKSPACE}\\bin\\agent.bat",
}
ENV = {"PATH": PATH, "PATHEXT": PATHEXT, "SYSTEMROOT": "C:\\Windows"}


def is_file(path: str) -> bool:
    return ntpath.normcase(path) in {ntpath.normcase(f) for f in FILES}


def resolve(command: str) -> str | None:
    return windows.resolve(command, PATH, PATHEXT, WORKSPACE, is_file)


def test_a_bare_name_is_found_through_pathext_never_as_the_extensionless_script_nor_in_the_workspace() -> None:
    assert ntpath.normcase(resolve("npx")) == ntpath.normcase(f"{NODE}\\npx.cmd")  # not the shell script `npx`, not the workspace's npx.exe
    assert ntpath.normcase(resolve("node")) == ntpath.normcase(f"{NODE}\\node.exe")
    assert resolve("node.exe") == f"{NODE}\\node.exe"
    assert resolve("C:\\Tools\\goose") == "C:\\Tools\\goose.exe"
    assert resolve("C:/Tools/goose.exe") == "C:\\Tools\\goose.exe"
    assert resolve("bin\\agent") == f"{WORKSPACE}\\bin\\agent.bat"  # a folder in it: relative to the working folder
    assert resolve("missing") is None
    assert resolve("npx.ps1") is None  # PowerShell scripts cannot be started


def test_only_startable_extensions_of_pathext_in_its_order() -> None:
    assert windows.candidates("x", "C:\\a", ".JS;.CMD;.EXE", "C:\\w") == ["C:\\a\\x.cmd", "C:\\a\\x.exe"]
    assert windows.candidates("x", "C:\\a", "", "C:\\w")[:2] == ["C:\\a\\x.com", "C:\\a\\x.exe"]  # PATHEXT unset: Windows' default
    assert windows.candidates("x", '"C:\\quoted dir";;', ".EXE", "C:\\w") == ["C:\\quoted dir\\x.exe"]


def test_npx_runs_as_node_with_npms_own_cli_script_without_cmd() -> None:
    launch = windows.launch(resolve("npx"), ["-y", "@agentclientprotocol/claude-agent-acp"], env=ENV, cwd=WORKSPACE, is_file=is_file)
    assert launch == [f"{NODE}\\node.exe", f"{NODE}\\node_modules\\npm\\bin\\npx-cli.js", "-y", "@agentclientprotocol/claude-agent-acp"]
    # Any argument at all: node.exe reads its command line by the C runtime's rules, no cmd.exe in between.
    odd = ['%PATH%', 'a & calc', '"quoted"', "!x!"]
    assert windows.launch(resolve("npx"), odd, env=ENV, cwd=WORKSPACE, is_file=is_file)[2:] == odd


def test_an_exe_is_started_by_its_path() -> None:
    assert windows.launch("C:\\Tools\\goose.exe", ["acp"], env=ENV, cwd=WORKSPACE, is_file=is_file) == ["C:\\Tools\\goose.exe", "acp"]


def test_another_cmd_runs_through_cmd_exe_with_every_argument_quoted() -> None:
    line = windows.launch(resolve("gemini"), ["--experimental-acp", "two words", "C:\\dir\\"], env=ENV, cwd=WORKSPACE, is_file=is_file)
    assert line == (
        '"C:\\Windows\\System32\\cmd.exe" /d /v:off /s /c '
        '""C:\\Users\\ada\\AppData\\Roaming\\npm\\gemini.cmd" "--experimental-acp" "two words" "C:\\dir\\\\""'
    )
    # `&`, `|`, `<`, `>`, `^` and parentheses are plain characters inside the quotes.
    assert '"a & b | c"' in windows.launch(resolve("gemini"), ["a & b | c"], env=ENV, cwd=WORKSPACE, is_file=is_file)


@pytest.mark.parametrize("argument", ["%USERPROFILE%", 'say "hi"', "!x!", "two\nlines", "nul\x00"])
def test_an_argument_cmd_exe_would_read_even_in_quotes_is_refused(argument: str) -> None:
    with pytest.raises(windows.UnsafeArgument):
        windows.launch(resolve("gemini"), [argument], env=ENV, cwd=WORKSPACE, is_file=is_file)


def test_npx_without_node_beside_it_uses_the_node_on_path() -> None:
    files = {"C:\\npm\\npx.cmd", "C:\\npm\\node_modules\\npm\\bin\\npx-cli.js", "C:\\node\\node.exe"}
    launch = windows.launch("C:\\npm\\npx.cmd", ["x"], env={"Path": "C:\\npm;C:\\node", "PATHEXT": ".EXE;.CMD"}, cwd=WORKSPACE, is_file=files.__contains__)
    assert launch == ["C:\\node\\node.exe", "C:\\npm\\node_modules\\npm\\bin\\npx-cli.js", "x"]


def test_environment_names_are_case_insensitive() -> None:
    assert windows.env_get({"Path": "C:\\x"}, "PATH") == "C:\\x"
    assert windows.merged_env({"PATH": "C:\\a", "HOME": "h"}, {"Path": "C:\\b"}) == {"HOME": "h", "Path": "C:\\b"}


def test_the_state_folder_and_the_profile() -> None:
    assert windows.state_home({"LOCALAPPDATA": "C:\\Users\\ada\\AppData\\Local"}, "C:\\Users\\ada") == "C:\\Users\\ada\\AppData\\Local"
    assert windows.state_home({}, "C:\\Users\\ada") == "C:\\Users\\ada\\AppData\\Local"
    assert windows.inside("c:/users/ADA/AppData/Local/symposium", "C:\\Users\\ada")
    assert not windows.inside("C:\\Users\\adam\\x", "C:\\Users\\ada")
    assert not windows.inside("D:\\traces", "C:\\Users\\ada")
    assert not windows.inside("C:\\x", "")


def test_a_command_line_typed_on_windows_keeps_its_backslashes() -> None:
    assert windows.split_command('C:\\tools\\agent.exe --acp "C:\\my dir\\"', windows=True) == ["C:\\tools\\agent.exe", "--acp", "C:\\my dir\\"]
    assert windows.split_command("agent 'a b' c\\ d", windows=False) == ["agent", "a b", "c d"]


def test_only_regular_files_and_folders_are_used() -> None:
    import stat

    assert windows.file_refusal(stat.S_IFREG | 0o666) is None  # modes mean nothing there
    assert str(windows.file_refusal(stat.S_IFLNK | 0o777)) == "is a symbolic link, not a regular file"
    assert windows.folder_refusal(stat.S_IFDIR | 0o777) is None
    assert str(windows.folder_refusal(stat.S_IFREG | 0o666)) == "is a regular file, not a folder"
