"""An agent's whole-file write as VS Code's edit tools, and their results back (protocol/turn/fs_edits.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.turn.fs_edits import CREATE, MULTI_REPLACE, ON_DISK, REPLACE, Call, Replacement, apply, plan, replacements, response
from protocol.vscode.lm import TextPart, ToolResultPart

AGENT_MODE = {CREATE, REPLACE}
PATH = "/work/app.py"

BEFORE = "".join(f"line {n}\n" for n in range(1, 21))


def test_a_new_file_is_created() -> None:
    assert plan(PATH, None, "print('hi')\n", AGENT_MODE) == [Call(CREATE, {"filePath": PATH, "content": "print('hi')\n"})]


def test_one_changed_line_is_one_replacement_of_that_line_only() -> None:
    after = BEFORE.replace("line 7\n", "line seven\n")
    assert plan(PATH, BEFORE, after, AGENT_MODE) == [Call(REPLACE, {"filePath": PATH, "oldString": "line 7\n", "newString": "line seven\n"})]


def test_a_line_that_is_not_unique_gets_the_context_that_makes_it_so() -> None:
    before = "a\nx = 1\nb\nx = 1\nc\n"
    (edit,) = replacements(before, "a\nx = 1\nb\nx = 2\nc\n") or []
    assert before.count(edit.old) == 1 and "x = 1" in edit.old and edit.old != before
    assert apply(before, [edit]) == "a\nx = 1\nb\nx = 2\nc\n"


def test_an_insertion_replaces_a_neighbouring_line_since_the_tool_cannot_replace_nothing() -> None:
    after = BEFORE.replace("line 3\n", "line 3\nnew\n")
    (edit,) = replacements(BEFORE, after) or []
    assert edit.old and "new" in edit.new and apply(BEFORE, [edit]) == after


def test_two_distant_changes_are_two_replacements_applied_in_order() -> None:
    after = BEFORE.replace("line 2\n", "two\n").replace("line 18\n", "eighteen\n")
    calls = plan(PATH, BEFORE, after, AGENT_MODE)
    assert [c.parameters["oldString"] for c in calls] == ["line 2\n", "line 18\n"]  # type: ignore[union-attr]


def test_multi_replace_takes_several_replacements_in_one_call_where_offered() -> None:
    after = BEFORE.replace("line 2\n", "two\n").replace("line 18\n", "eighteen\n")
    (call,) = plan(PATH, BEFORE, after, AGENT_MODE | {MULTI_REPLACE})  # type: ignore[misc]
    assert call.name == MULTI_REPLACE and [r["oldString"] for r in call.parameters["replacements"]] == ["line 2\n", "line 18\n"]


def test_nothing_changed_is_no_call() -> None:
    assert plan(PATH, BEFORE, BEFORE, AGENT_MODE) == []


def test_without_the_tools_the_backend_writes_on_disk() -> None:
    assert plan(PATH, None, "x", {REPLACE}) is ON_DISK  # Ask mode: no create_file
    assert plan(PATH, BEFORE, BEFORE + "x\n", {CREATE}) is ON_DISK
    assert plan(PATH, BEFORE, BEFORE + "x\n", set()) is ON_DISK


def test_files_the_tools_cannot_change_are_written_on_disk() -> None:
    assert plan(PATH, "", "now some text\n", AGENT_MODE) is ON_DISK  # an existing empty file: nothing to replace
    assert plan(PATH, "\x00\x01", "text", AGENT_MODE, diffable=False) is ON_DISK  # not text


def test_deleting_everything_replaces_everything_with_nothing() -> None:
    assert replacements("a\nb\n", "") == [Replacement("a\nb\n", "")]


def test_crlf_lines_stay_whole() -> None:
    before = "a\r\nb\r\nc\r\n"
    (edit,) = replacements(before, "a\r\nB\r\nc\r\n") or []
    assert edit == Replacement("b\r\n", "B\r\n")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a\n", "b\n", "x = 1\n", "\n", "c", "a"]), min_size=1, max_size=12),
       st.lists(st.sampled_from(["a\n", "b\n", "x = 1\n", "\n", "d\n", "c", "a"]), max_size=12))
def test_the_replacements_always_produce_what_the_agent_wrote(before: list[str], after: list[str]) -> None:
    old, new = "".join(before), "".join(after)
    edits = replacements(old, new)
    if not old:
        assert edits is None
        return
    assert edits is not None and apply(old, edits) == new


def ok(call_id: str) -> ToolResultPart:
    return ToolResultPart(call_id, (TextPart("The following files were successfully edited:\n/work/app.py"),))


def test_the_agent_hears_success_when_every_call_succeeded() -> None:
    assert response({"1": ok("1"), "2": ok("2")}, ["1", "2"]) == {}


def test_the_agent_hears_what_vscode_said_when_a_call_failed() -> None:
    bad = ToolResultPart("2", (TextPart("ERROR while calling tool: Could not find matching text to replace"),))
    answer = response({"1": ok("1"), "2": bad}, ["1", "2"])
    assert isinstance(answer, str) and "Could not find matching text" in answer
