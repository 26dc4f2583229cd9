"""An agent's form elicitation as Copilot's `vscode_askQuestions`, and its answers back (protocol/turn/elicitation.py)."""

from __future__ import annotations

import json
from typing import Any

from protocol.turn import elicitation
from protocol.turn.elicitation import CANCEL, DECLINE, MAX_FIELDS, ask_input, response, unasked_note
from protocol.vscode.lm import TextPart, ToolResultPart

FORM = {
    "mode": "form",
    "message": "Configure the project",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "db": {"type": "string", "title": "Database", "oneOf": [{"const": "pg", "title": "Postgres", "description": "relational"}, {"const": "redis", "title": "Redis"}], "default": "pg"},
            "langs": {"type": "array", "title": "Languages", "items": {"anyOf": [{"const": "py", "title": "Python"}, {"const": "ts", "title": "TypeScript"}]}},
            "name": {"type": "string", "description": "The project's name"},
            "port": {"type": "integer", "title": "Port"},
            "tests": {"type": "boolean", "title": "Tests"},
            "size": {"type": "string", "title": "Size", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        },
    },
}


def result(answers: dict[str, Any] | None, raw: str | None = None) -> ToolResultPart:
    return ToolResultPart("call", (TextPart(raw if raw is not None else json.dumps({"answers": answers})),))


def answer(*selected: str, free: str | None = None) -> dict[str, Any]:
    return {"selected": list(selected), "freeText": free, "skipped": False}


SKIPPED = {"selected": [], "freeText": None, "skipped": True}


def test_each_field_is_one_question_choices_as_options_arrays_multi_select_the_rest_free_text() -> None:
    questions = ask_input(FORM)["questions"]
    assert [q["header"] for q in questions] == ["Database", "Languages", "name", "Port", "Tests", "Size"]
    db, langs, name, port, tests, size = questions
    assert db["options"] == [{"label": "Postgres", "description": "relational", "recommended": True}, {"label": "Redis"}]
    assert db["allowFreeformInput"] is False and "multiSelect" not in db
    assert db["question"] == "Configure the project"  # a field without a description is asked with the form's message
    assert langs["multiSelect"] is True and [o["label"] for o in langs["options"]] == ["Python", "TypeScript"]
    assert name == {"header": "name", "question": "The project's name"}
    assert "options" not in port
    assert [o["label"] for o in tests["options"]] == ["Yes", "No"]
    assert [o["label"] for o in size["options"]] == ["Small", "Medium"]


def test_answers_go_back_as_the_fields_values_and_skipped_fields_are_left_out() -> None:
    answers = {"Database": answer("Redis"), "Languages": answer("Python", "TypeScript"), "name": answer(free="demo"),
               "Port": answer(free=" 8080 "), "Tests": answer("No"), "Size": SKIPPED}
    assert response(FORM, result(answers)) == {"action": "accept", "content": {"db": "redis", "langs": ["py", "ts"], "name": "demo", "port": 8080, "tests": False}}


def test_an_answer_the_field_cannot_hold_is_left_out_not_guessed() -> None:
    answers = {"Database": answer(free="MySQL"), "Port": answer(free="eighty"), "name": answer(free="demo")}
    assert response(FORM, result(answers)) == {"action": "accept", "content": {"name": "demo"}}


def test_every_question_skipped_declines_and_no_answers_at_all_cancels() -> None:
    assert response(FORM, result({"Database": SKIPPED})) == DECLINE
    assert response(FORM, result(None, raw="The user cancelled the tool call")) == CANCEL
    assert response(FORM, ToolResultPart("call", ())) == CANCEL


def test_headers_are_unique_and_within_the_tools_limits() -> None:
    long = "x" * 80
    form = {"message": "q" * 500, "requestedSchema": {"type": "object", "properties": {
        "a": {"type": "string", "title": long}, "b": {"type": "string", "title": long}, "c": {"type": "string", "title": "Other"}}}}
    questions = ask_input(form)["questions"]
    headers = [q["header"] for q in questions]
    assert len(set(headers)) == 3 and all(len(h) <= 50 for h in headers)
    assert all(len(q["question"]) <= 200 for q in questions)


def test_a_question_of_15000_fields_of_one_title_asks_the_first_hundred_with_unique_headers() -> None:
    # It froze every conversation for 24-48 s: repeated headers were made unique by counting from 2
    # again for each. Now each title's count goes on, and one question asks at most MAX_FIELDS.
    properties = {f"k{i}": {"type": "string", "title": "Same"} for i in range(15_000)}
    properties["k2-own"] = {"type": "string", "title": "Same (3)"}  # a title a repeat would take
    form = {"message": "many", "requestedSchema": {"type": "object", "properties": properties}}
    headers = [q["header"] for q in ask_input(form)["questions"]]
    assert len(headers) == MAX_FIELDS == len(set(headers))
    assert headers[:4] == ["Same", "Same (2)", "Same (3)", "Same (4)"]
    many = {h: answer(free="x") for h in headers}
    assert len(response(form, result(many))["content"]) == MAX_FIELDS
    shared = ["Same"] * 15_000 + ["Same (2)"]
    unique = elicitation._unique(shared)
    assert len(set(unique)) == len(shared) and unique[-1] == "Same (2) (2)"


def test_a_form_with_no_field_we_can_show_is_not_asked() -> None:
    assert ask_input({"message": "hi", "requestedSchema": {"type": "object"}}) is None
    assert ask_input({"message": "hi"}) is None
    assert "hi" in unasked_note({"message": "hi"})
