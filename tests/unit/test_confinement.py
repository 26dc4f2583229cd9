"""Where an agent's writes may land, walked one name at a time (protocol/host/confinement.py)."""

from protocol.host.confinement import Enter, Last, Refused, Up, Walk, file_refusal, parts_beneath

ROOT = "/home/u/project"
ROOTS = [ROOT, "/real/project"]  # the folder as given, and resolved


def steps(walk: Walk, links: dict[str, str] | None = None) -> list[object]:
    """Walk to the end, as the caller does, with `links` (a name walked -> its target) on the way."""
    out: list[object] = []
    links = dict(links or {})
    while True:
        step = walk.next()
        out.append(step)
        if isinstance(step, Refused):
            return out
        if isinstance(step, (Enter, Last)) and step.name in links:
            walk.link(links.pop(step.name))
        elif isinstance(step, Last):
            return out


def test_a_path_inside_is_walked_name_by_name_to_its_file() -> None:
    walk = Walk.to("/home/u/project/src/./pkg//a.py", ROOTS)
    assert steps(walk) == [Enter("src"), Enter("pkg"), Last("a.py")]
    assert walk.below() == ["src", "pkg", "a.py"]
    assert parts_beneath("/real/project/a", ROOTS) == ["a"]  # the resolved spelling too
    assert parts_beneath("/home/u/project-evil/a", ROOTS) is None and parts_beneath("relative", ROOTS) is None
    assert parts_beneath("/home/u/Project/a", ROOTS) is None  # another folder on Linux: compared as spelled


def test_dot_dot_goes_back_up_and_never_above_the_folder() -> None:
    walk = Walk.to("/home/u/project/src/../b.txt", ROOTS)
    assert steps(walk) == [Enter("src"), Up(), Last("b.txt")] and walk.below() == ["b.txt"]
    [refused] = [s for s in steps(Walk.to("/home/u/project/../other/x", ROOTS)) if isinstance(s, Refused)]
    assert "outside" in refused.why and ROOT in refused.why


def test_outside_or_no_folder_is_refused_with_a_message_naming_both() -> None:
    for path in ("/etc/passwd", "/home/u/.bashrc", "/home/u/project"):
        [step] = steps(Walk.to(path, ROOTS))
        assert isinstance(step, Refused) and path in step.why
    [none] = steps(Walk.to("/home/u/project/a", []))
    assert isinstance(none, Refused) and "has none" in none.why


def test_a_link_inside_is_followed_and_one_out_is_refused() -> None:
    # A relative link to a folder inside: walked from where the link is.
    walk = Walk.to("/home/u/project/gen/x.txt", ROOTS)
    assert steps(walk, {"gen": "build/out"}) == [Enter("gen"), Enter("build"), Enter("out"), Last("x.txt")]
    assert walk.below() == ["build", "out", "x.txt"]
    # An absolute link into the folder starts again from it; one out of it is refused.
    walk = Walk.to("/home/u/project/a/f", ROOTS)
    assert steps(walk, {"f": "/real/project/b/g"}) == [Enter("a"), Last("f"), Enter("b"), Last("g")] and walk.below() == ["b", "g"]
    out = steps(Walk.to("/home/u/project/gen/payload.txt", ROOTS), {"gen": "/tmp/elsewhere"})
    assert isinstance(out[-1], Refused) and "link to /tmp/elsewhere" in out[-1].why
    up = steps(Walk.to("/home/u/project/gen/payload.txt", ROOTS), {"gen": "../../elsewhere"})
    assert isinstance(up[-1], Refused) and "outside" in up[-1].why


def test_a_link_loop_ends() -> None:
    walk = Walk.to("/home/u/project/a/x", ROOTS)
    for _ in range(50):
        step = walk.next()
        if isinstance(step, Refused):
            break
        walk.link("a")
    assert isinstance(step, Refused) and "links" in step.why


def test_a_repositorys_git_folder_is_refused_in_every_spelling() -> None:
    for path in ("/home/u/project/.git/hooks/pre-commit", "/home/u/project/.git/config", "/home/u/project/sub/.GIT/hooks/x", "/home/u/project/.git"):
        assert any(isinstance(s, Refused) and ".git" in s.why for s in steps(Walk.to(path, ROOTS))), path
    # Through a link too: the names are checked as they are walked.
    assert isinstance(steps(Walk.to("/home/u/project/h/pre-commit", ROOTS), {"h": ".git/hooks"})[-1], Refused)
    windows = ["C:\\Users\\u\\Project"]
    for name in (".git.", ".GIT ", "GIT~1"):
        assert isinstance(steps(Walk.to(f"C:\\Users\\u\\Project\\{name}\\config", windows, windows=True))[-1], Refused), name


def test_windows_paths_compare_case_folded_and_refuse_devices_and_streams() -> None:
    windows = ["c:\\users\\u\\project"]
    walk = Walk.to("C:\\Users\\u\\Project\\src\\a.txt", windows, windows=True)
    assert steps(walk) == [Enter("src"), Last("a.txt")]
    assert isinstance(steps(Walk.to("D:\\a.txt", windows, windows=True))[-1], Refused)
    junction = Walk.to("C:\\Users\\u\\Project\\j\\a.txt", windows, windows=True)  # os.readlink's long-path form
    assert steps(junction, {"j": "\\\\?\\C:\\Users\\u\\Project\\src"})[-1] == Last("a.txt") and junction.below() == ["src", "a.txt"]
    for name in ("nul.txt", "COM1", "con", "a.txt:hidden", "settings.json::$DATA"):
        [step] = steps(Walk.to(f"C:\\Users\\u\\Project\\{name}", windows, windows=True))
        assert isinstance(step, Refused), name


def test_only_a_regular_file_with_one_name_is_read_or_replaced() -> None:
    assert file_refusal("/p/a", 0o100644, 1) is None
    assert "FIFO" in (file_refusal("/p/a", 0o010644, 1) or "")
    assert "folder" in (file_refusal("/p/a", 0o040755, 1) or "")
    assert "device" in (file_refusal("/p/a", 0o020666, 1) or "")
    assert "hard links" in (file_refusal("/p/a", 0o100644, 2) or "")


def test_the_workspaces_other_folders_are_its_absolute_folders_besides_the_first_each_once() -> None:
    """protocol/host/workspace_folders.py: what reaches the agent's session besides its own folder."""
    from protocol.host.workspace_folders import other_folders

    assert other_folders("/w/app", ["/w/app", "/w/lib", "relative", "/w/lib/", "/w/docs"]) == ("/w/lib", "/w/docs")
    assert other_folders("C:\\W\\App", ["c:\\w\\app", "C:\\w\\Lib"], windows=True) == ("C:\\w\\Lib",)
    assert other_folders("/w/app", []) == ()
