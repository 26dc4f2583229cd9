"""A session's opening as one plan (pure): the tries in order and what a refusal of each means, the
editing hand-over, the tools, priming, and whether a spare fits (docs/DESIGN.md, "Opening a session")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.acp.agent_facts import facts_for, parse_agent_facts
from protocol.acp.capabilities import read_initialize
from protocol.history.forking import ForkPoint
from protocol.shared.failures import FailureKind
from protocol.turn import opening
from protocol.turn.opening import (
    Chat,
    Continued,
    EditedAt,
    Fresh,
    Method,
    Opening,
    Origin,
    Plan,
    Refusal,
    Remembered,
    SpareFit,
    Try,
    opening_after_restart,
    refused,
    restart_fork_turn,
    spare_fit,
)
from protocol.vscode.lm import BridgedTools, Tool

CLAUDE_INFO = {"name": "@agentclientprotocol/claude-agent-acp", "version": "0.100.0"}
CLAUDE = {"agentCapabilities": {"sessionCapabilities": {"fork": {}, "resume": {}}}, "agentInfo": CLAUDE_INFO}
CLAUDE_OLD = {**CLAUDE, "agentInfo": {**CLAUDE_INFO, "version": "0.99.3"}}  # before the version known to fork at a message
CODEX = {"agentCapabilities": {"sessionCapabilities": {"resume": {}}}, "agentInfo": {"name": "@agentclientprotocol/codex-acp", "version": "0.16.0"}}
LOADER = {"agentCapabilities": {"loadSession": True}, "agentInfo": {"name": "a-loader", "version": "1.0.0"}}
FORKS_WHOLE = {"agentCapabilities": {"sessionCapabilities": {"fork": {}}}, "agentInfo": {"name": "another-agent", "version": "9.0.0"}}
NOTHING: dict[str, Any] = {}
COPILOT = {"agentCapabilities": {"mcpCapabilities": {"http": True}}, "agentInfo": {"name": "Copilot", "version": "1.0.0"}}
# What is known of agents: the shipped table (extension/catalogue/overrides.json).
FACTS, _ = parse_agent_facts(json.loads((Path(__file__).parents[2] / "extension" / "catalogue" / "overrides.json").read_text()))

POINT = ForkPoint("s1", "msg_01")
AT_POINT = {"jetbrains": {"air": {"fork": {"version": 1, "messageId": "msg_01"}}}}
PROMPT_SUGGESTIONS_OFF = {"claudeCode": {"options": {"promptSuggestions": False}}}
AGENT_MODE = (Tool("create_file"), Tool("replace_string_in_file"), Tool("get_errors"), Tool("read_file"), Tool("runSubagent"))
ASK_MODE = (Tool("get_errors"), Tool("read_file"))


def plan(raw: dict[str, Any], origin: Origin, tools: tuple[Tool, ...] = ASK_MODE, cwd: str | None = "/chat") -> Plan:
    declared = read_initialize(raw)
    return opening.plan_opening(declared, facts_for(FACTS, declared), Chat(origin, cwd, tools))


def steps(made: Plan) -> list[tuple[str, str | None, bool]]:
    return [(t.method.value, t.session_id, t.must) for t in made.tries]


NEW = ("session/new", None, True)

TRIES = [
    # (what the chat holds, the agent, the tries)
    ("a new chat", Fresh(), CLAUDE, [NEW]),
    ("a new chat", Fresh(), NOTHING, [NEW]),
    ("an edit of history, an agent that forks at a message", EditedAt(POINT), CLAUDE, [("session/fork", "s1", False), NEW]),
    ("an edit of history, an agent that cannot fork", EditedAt(POINT), CODEX, [NEW]),
    ("an edit of history, an agent that forks whole sessions only", EditedAt(POINT), FORKS_WHOLE, [NEW]),
    ("an edit of history, an agent older than the one known to fork at a message", EditedAt(POINT), CLAUDE_OLD, [NEW]),
    ("after a restart, the marker of the saved session's last turn", Remembered("s0", "/saved", 3, 3), CODEX, [("session/resume", "s0", False), NEW]),
    ("after a restart, resumed in preference to a fork", Remembered("s0", "/saved", 3, 3, POINT), CLAUDE, [("session/resume", "s0", False), NEW]),
    ("after a restart, an agent that loads", Remembered("s0", "/saved", 3, 3), LOADER, [("session/load", "s0", False), NEW]),
    ("after a restart, an agent that takes nothing back", Remembered("s0", "/saved", 3, 3), NOTHING, [NEW]),
    ("after a restart, the saved turn not known (an earlier store)", Remembered("s0", "/saved", None, 1), CODEX, [("session/resume", "s0", False), NEW]),
    ("after a restart, an older marker with its fork point", Remembered("s0", "/saved", 3, 1, POINT), CLAUDE, [("session/fork", "s1", False), NEW]),
    ("after a restart, an older marker without a fork point", Remembered("s0", "/saved", 3, 1), CLAUDE, [NEW]),
    ("after a restart, an older marker, an agent that cannot fork", Remembered("s0", "/saved", 3, 1, POINT), CODEX, [NEW]),
    ("after a restart, a marker newer than the store's (it lost a save)", Remembered("s0", "/saved", 3, 5, POINT), CLAUDE, [NEW]),
    ("continuing an agent's session, an agent that forks", Continued("s0", "/theirs"), CLAUDE, [("session/fork", "s0", True)]),
    ("continuing an agent's session, an agent that forks whole sessions", Continued("s0", "/theirs"), FORKS_WHOLE, [("session/fork", "s0", True)]),
    ("continuing an agent's session, an agent that resumes", Continued("s0", "/theirs"), CODEX, [("session/resume", "s0", True)]),
    ("continuing an agent's session, an agent that loads", Continued("s0", "/theirs"), LOADER, [("session/load", "s0", True)]),
]


@pytest.mark.parametrize(("case", "origin", "agent", "tries"), TRIES, ids=[f"{row[0]} ({i})" for i, row in enumerate(TRIES)])
def test_the_tries_in_order(case: str, origin: Origin, agent: dict[str, Any], tries: list[tuple[str, str | None, bool]]) -> None:
    made = plan(agent, origin)
    assert steps(made) == tries, case
    assert made.stop is None


def test_a_continued_session_the_agent_cannot_take_back_fails_at_once_rather_than_open_a_new_session() -> None:
    made = plan(NOTHING, Continued("s0", "/theirs"))
    assert made.tries == () and made.stop is not None and made.stop.kind == FailureKind.RESUME_FAILED


def test_a_fork_names_the_message_it_ends_with_and_a_continued_session_is_forked_whole() -> None:
    [fork, _] = plan(CLAUDE, EditedAt(POINT)).tries
    assert fork.meta == {**PROMPT_SUGGESTIONS_OFF, **AT_POINT}
    [whole] = plan(CLAUDE, Continued("s0", "/theirs")).tries
    assert whole.meta == PROMPT_SUGGESTIONS_OFF  # the whole session: no message named


def test_the_session_opens_in_the_folder_of_the_session_it_takes_back_else_the_turns() -> None:
    assert plan(CODEX, Continued("s0", "/theirs")).folder == "/theirs"
    assert plan(CODEX, Remembered("s0", "/saved", 3, 3)).folder == "/saved"
    assert plan(CLAUDE, Remembered("s0", "/saved", 3, 1, POINT)).folder == "/chat"  # a fork of it is this chat's
    assert plan(CLAUDE, EditedAt(POINT)).folder == "/chat"
    assert plan(CLAUDE, Fresh(), cwd=None).folder is None  # the backend's


def test_the_editing_is_handed_over_only_where_wanted_and_the_agent_is_known_to_switch_its_own_off() -> None:
    handed = plan(CLAUDE, EditedAt(POINT), AGENT_MODE)
    assert handed.edits_handed_off
    off = {"disallowedTools": ["Edit", "Write", "MultiEdit", "NotebookEdit"], "promptSuggestions": False}
    assert all(t.meta["claudeCode"]["options"] == off for t in handed.tries)  # every try: the fork, and the new session after it
    assert [t.name for t in handed.tools] == ["create_file", "replace_string_in_file", "get_errors"]
    kept = plan(CLAUDE, Fresh(), ASK_MODE)
    assert not kept.edits_handed_off and [t.name for t in kept.tools] == ["get_errors"]
    codex = plan(CODEX, Fresh(), AGENT_MODE)  # no switch known: it keeps its own editing, and VS Code's edit tools are not offered
    assert not codex.edits_handed_off and [t.name for t in codex.tools] == ["get_errors"]
    assert [t.name for t in plan(CODEX, Fresh(), AGENT_MODE[:1]).tools] == []  # wanted only with a tool that changes files too


def test_the_tools_go_by_the_entry_the_agent_takes() -> None:
    assert plan(CLAUDE, Fresh()).transport == "stdio"
    assert plan(COPILOT, Fresh()).transport == "http"  # known to take no stdio MCP server, and declares HTTP


def test_only_a_new_session_is_primed_with_the_history() -> None:
    fork, new = plan(CLAUDE, EditedAt(POINT)).tries
    assert not fork.primes and new.primes
    [resume] = plan(CODEX, Continued("s0", "/theirs")).tries
    assert not resume.primes and resume.exclusive and not fork.exclusive and not new.exclusive


REFUSALS = [
    # (the try, why it opened nothing, the failure; None: the next try)
    (Try(Method.FORK, "s1"), Refusal.REFUSED, None),
    (Try(Method.FORK, "s1"), Refusal.ODD, None),
    (Try(Method.RESUME, "s1"), Refusal.HELD, None),
    (Try(Method.LOAD, "s1"), Refusal.REFUSED, None),
    (Try(Method.FORK, "s1", must=True), Refusal.REFUSED, (FailureKind.RESUME_FAILED, "could not continue session s1: no")),
    (Try(Method.FORK, "s1", must=True), Refusal.ODD, (FailureKind.RESUME_FAILED, "answered session/fork oddly: no")),
    (Try(Method.RESUME, "s1", must=True), Refusal.HELD, (FailureKind.SESSION_IN_USE, "session s1 is already open in another chat; continue it there, or start a new chat")),
    (Try(Method.LOAD, "s1", must=True), Refusal.REFUSED, (FailureKind.RESUME_FAILED, "could not continue session s1: no")),
    (Try(Method.NEW, None, must=True), Refusal.REFUSED, (FailureKind.SESSION_NEW_FAILED, "refused session/new: no")),
    (Try(Method.NEW, None, must=True), Refusal.ODD, (FailureKind.SESSION_NEW_FAILED, "answered session/new oddly: no")),
]


@pytest.mark.parametrize(("attempt", "why", "failure"), REFUSALS)
def test_what_a_refusal_means(attempt: Try, why: Refusal, failure: tuple[FailureKind, str] | None) -> None:
    stop = refused(attempt, why, "no")
    assert (stop.kind, stop.message) == failure if stop is not None else failure is None


def test_a_spare_fits_a_plain_new_session_made_the_same_way() -> None:
    spare = plan(CLAUDE, Fresh(), AGENT_MODE)
    assert spare_fit(plan(CLAUDE, Fresh(), AGENT_MODE), spare) is SpareFit.FITS
    assert spare_fit(plan(CLAUDE, Fresh(), (*AGENT_MODE, Tool("an_extensions_tool"))), spare) is SpareFit.RETOOL  # other tools: fits once the agent lists them
    assert spare_fit(plan(CLAUDE, Fresh(), ASK_MODE), spare) is SpareFit.OTHER_EDITING  # its own editing is off in the spare
    assert spare_fit(plan(CLAUDE, EditedAt(POINT), AGENT_MODE), spare) is SpareFit.NOT_NEW  # goes on in a fork
    assert spare_fit(plan(CLAUDE, Remembered("s0", "/saved", 3, 3), AGENT_MODE), spare) is SpareFit.NOT_NEW
    # A chat that goes on in a new session all the same (the agent cannot fork there) takes it.
    codex_spare = plan(CODEX, Fresh(), AGENT_MODE)
    assert spare_fit(plan(CODEX, EditedAt(POINT), AGENT_MODE), codex_spare) is SpareFit.FITS
    # Made before any chat: as Copilot's Agent mode would have it.
    before_any = opening.plan_opening(read_initialize(CLAUDE), facts_for(FACTS, read_initialize(CLAUDE)), Chat(Fresh(), "/chat", wants_edits=True))
    assert before_any.edits_handed_off and spare_fit(plan(CLAUDE, Fresh(), AGENT_MODE), before_any) is SpareFit.RETOOL


def test_after_a_restart_an_older_marker_forks_at_its_saved_point_and_never_resumes_past_it() -> None:
    point = ForkPoint("s", "m")
    assert opening_after_restart(4, saved_turn=3, point=point) is Opening.RESUME  # the marker of its last turn
    assert opening_after_restart(4, saved_turn=None, point=None) is Opening.RESUME  # not known: as before
    assert opening_after_restart(2, saved_turn=3, point=point) is Opening.FORK  # turns 2 and 3 are gone from the chat
    assert opening_after_restart(2, saved_turn=3, point=None) is Opening.PRIME  # no point saved for turn 1
    assert opening_after_restart(5, saved_turn=3, point=point) is Opening.PRIME  # the store lost a save
    assert restart_fork_turn(3, 1, after_marker=True) == 1
    assert restart_fork_turn(3, 1, after_marker=False) is None  # another model's turns follow the marker: primed
    assert restart_fork_turn(3, 3, after_marker=True) is None  # resumed
    assert restart_fork_turn(None, 1, after_marker=True) is None


# Properties ---------------------------------------------------------------------------------

session_ids = st.sampled_from(["s0", "s1", "s2"])
points = st.builds(ForkPoint, session_ids, st.sampled_from(["m1", "m2"]))
turns = st.integers(min_value=0, max_value=6)
origins: st.SearchStrategy[Origin] = st.one_of(
    st.just(Fresh()),
    st.builds(EditedAt, points),
    st.builds(Remembered, session_ids, st.just("/saved"), st.none() | turns, turns, st.none() | points),
    st.builds(Continued, session_ids, st.just("/theirs")),
)


@st.composite
def agents(draw: st.DrawFn) -> dict[str, Any]:
    sessions = {name: {} for name in draw(st.sets(st.sampled_from(["fork", "resume", "close", "list"])))}
    info = draw(st.sampled_from([CLAUDE_INFO, CLAUDE_OLD["agentInfo"], {"name": "another-agent", "version": "1.0.0"}, None]))
    raw: dict[str, Any] = {"agentCapabilities": {"sessionCapabilities": sessions, "loadSession": draw(st.booleans())}}
    return {**raw, "agentInfo": info} if info is not None else raw


tool_sets = st.lists(st.sampled_from(AGENT_MODE), unique=True).map(tuple)
choices = st.sampled_from([BridgedTools(), BridgedTools("all"), BridgedTools("list", ("create_file", "replace_string_in_file"))])


def planned(raw: dict[str, Any], origin: Origin, tools: tuple[Tool, ...], bridged: BridgedTools) -> Plan:
    declared = read_initialize(raw)
    return opening.plan_opening(declared, facts_for(FACTS, declared), Chat(origin, "/chat", tools, bridged))


@given(agents(), origins, tool_sets, choices)
def test_never_resumed_or_forked_past_the_chats_last_turn(raw: dict[str, Any], origin: Origin, tools: tuple[Tool, ...], bridged: BridgedTools) -> None:
    for attempt in planned(raw, origin, tools, bridged).tries:
        if attempt.method in (Method.RESUME, Method.LOAD) and isinstance(origin, Remembered):
            # Taken back as it is only at a marker of the last turn handed to it (or where that is not known).
            assert origin.saved_turn is None or origin.saved_turn == origin.marker_turn
        if attempt.method is Method.FORK and not isinstance(origin, Continued):
            # At the marker's own turn, named by its message: never a whole session, which holds turns the chat left.
            point = origin.point if isinstance(origin, Remembered) else origin.point if isinstance(origin, EditedAt) else None
            assert point is not None and attempt.session_id == point.session_id
            assert point.message_id in json.dumps(attempt.meta)
            if isinstance(origin, Remembered):
                assert origin.saved_turn is not None and origin.marker_turn < origin.saved_turn
        if isinstance(origin, (Fresh, EditedAt)):
            assert attempt.method not in (Method.RESUME, Method.LOAD)  # the chat's session is another chat's too


@given(agents(), origins, tool_sets, choices, st.sampled_from(list(Refusal)))
def test_a_try_that_must_succeed_never_silently_becomes_a_new_session(
    raw: dict[str, Any], origin: Origin, tools: tuple[Tool, ...], bridged: BridgedTools, why: Refusal
) -> None:
    made = planned(raw, origin, tools, bridged)
    for index, attempt in enumerate(made.tries):
        if attempt.must:
            assert index == len(made.tries) - 1  # nothing after it
            assert refused(attempt, why, "no") is not None  # its refusal is the turn's failure
    if isinstance(origin, Continued):
        assert all(t.method is not Method.NEW for t in made.tries)
        assert made.tries or made.stop is not None
    else:
        assert made.stop is None and made.tries[-1] == Try(Method.NEW, None, made.tries[-1].meta, must=True)


@given(agents(), origins, tool_sets, choices, st.sampled_from(list(Refusal)))
def test_a_refusal_that_may_fall_through_does(raw: dict[str, Any], origin: Origin, tools: tuple[Tool, ...], bridged: BridgedTools, why: Refusal) -> None:
    made = planned(raw, origin, tools, bridged)
    for index, attempt in enumerate(made.tries):
        if not attempt.must:
            assert refused(attempt, why, "no") is None
            assert index < len(made.tries) - 1  # to the next try


@given(agents(), origins, tool_sets, choices)
def test_only_a_new_session_is_primed_and_only_a_plain_new_one_takes_a_spare(raw: dict[str, Any], origin: Origin, tools: tuple[Tool, ...], bridged: BridgedTools) -> None:
    made = planned(raw, origin, tools, bridged)
    assert all(t.primes == (t.method is Method.NEW) for t in made.tries)
    spare = planned(raw, Fresh(), tools, bridged)
    assert (spare_fit(made, spare) is SpareFit.FITS) == made.is_new
    assert all(t.meta == made.tries[-1].meta or t.method is Method.FORK for t in made.tries)  # one editing hand-over for every try


def message_fork(raw: dict[str, Any]) -> Any:
    declared = read_initialize(raw)
    return opening.message_fork(declared, facts_for(FACTS, declared))


def test_the_agent_forks_at_a_message_only_when_it_declares_session_fork_and_is_known_to_read_a_fork_point() -> None:
    assert message_fork(CLAUDE) is not None
    assert message_fork(CODEX) is None  # no session/fork: primed
    assert message_fork(FORKS_WHOLE) is None  # forks whole sessions only: a fork would hold the turns left behind
    no_fork = {**CLAUDE, "agentCapabilities": {"sessionCapabilities": {"resume": {}}}}
    assert message_fork(no_fork) is None  # known to read the point, but this build declares no fork
    assert message_fork(CLAUDE_OLD) is None  # before the version tested: not known to
    assert message_fork({**CLAUDE, "agentInfo": {**CLAUDE_INFO, "version": "0.101.0-beta.1"}}) is not None
    assert message_fork({"agentCapabilities": {"sessionCapabilities": {"fork": True}}, "agentInfo": CLAUDE_INFO}) is None  # not ACP's shape


def test_the_workspaces_other_folders_go_in_a_new_sessions_params_where_the_agent_takes_them_else_in_a_note() -> None:
    """docs/usage.md, "Workspace folders": one plan says where the other folders go."""
    takes = {"agentCapabilities": {"sessionCapabilities": {"additionalDirectories": {}}}, "agentInfo": {"name": "a", "version": "1"}}
    chat = Chat(Fresh(), "/w/app", ASK_MODE, others=("/w/lib",))
    declared = read_initialize(takes)
    made = opening.plan_opening(declared, facts_for(FACTS, declared), chat)
    assert made.others == ("/w/lib",) and made.folders_note is None
    assert made.tries[0].params("/w/app", [], made.additional_directories)["additionalDirectories"] == ["/w/lib"]
    declared = read_initialize(NOTHING)
    told = opening.plan_opening(declared, facts_for(FACTS, declared), chat)
    assert told.additional_directories == () and "- /w/lib" in (told.folders_note or "")
    assert "additionalDirectories" not in told.tries[0].params("/w/app", [], told.additional_directories)


def test_a_spare_made_for_one_folder_does_not_serve_a_workspace_of_several() -> None:
    declared = read_initialize(CLAUDE)
    one = opening.plan_opening(declared, facts_for(FACTS, declared), Chat(Fresh(), "/w/app", ASK_MODE))
    several = opening.plan_opening(declared, facts_for(FACTS, declared), Chat(Fresh(), "/w/app", ASK_MODE, others=("/w/lib",)))
    assert spare_fit(several, one) is SpareFit.OTHER_FOLDERS
    assert spare_fit(one, one) is SpareFit.FITS
