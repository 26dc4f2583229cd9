"""What an agent declares and sends is read once into typed values; odd fields are absent, never a
crash (protocol/acp/capabilities.py, protocol/acp/updates.py; docs/DESIGN.md, "What an agent declares")."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from protocol.acp.capabilities import AgentInfo, Initialized, read_initialize
from protocol.acp.updates import FIELDS, read_prompt_result, read_session_answer, read_update, read_updates
from protocol.acp.usage import UsageMeter
from protocol.history.forking import last_message_id
from protocol.turn.rendering import ToolCallTracker, render_updates

# Claude Code's adapter 0.100 as it answers, trimmed to what we read.
CLAUDE = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": True},
        "sessionCapabilities": {"fork": {}, "list": {}, "resume": {}, "close": {}},
        "auth": {"logout": {}},
    },
    "agentInfo": {"name": "@agentclientprotocol/claude-agent-acp", "title": "Claude Agent", "version": "0.100.0"},
    "authMethods": [{"id": "claude-login", "name": "Log in with Claude"}],
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


def replaced(document: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    if len(path) == 1:
        return {**document, path[0]: value}
    inner = document.get(path[0])
    return {**document, path[0]: replaced(inner if isinstance(inner, dict) else {}, path[1:], value)}


def paths(document: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[list[str]]:
    found = []
    for key, value in document.items():
        found.append([*prefix, key])
        if isinstance(value, dict):
            found.extend(paths(value, (*prefix, key)))
    return found


def test_a_well_formed_answer_is_read_whole() -> None:
    read = read_initialize(CLAUDE)
    assert read.odd == ()
    assert read.protocol_version == 1
    caps = read.capabilities
    assert caps.prompt.image and caps.prompt.embedded_context and not caps.prompt.audio
    assert caps.mcp.http and caps.mcp.sse
    assert caps.sessions.fork and caps.sessions.list and caps.sessions.resume and caps.sessions.close and caps.sessions.load
    assert caps.logout
    assert read.info == AgentInfo("@agentclientprotocol/claude-agent-acp", "Claude Agent", "0.100.0")
    assert read.auth_methods == ({"id": "claude-login", "name": "Log in with Claude"},)


def test_the_done_when_cases_prompt_capabilities_null_a_string_a_list() -> None:
    for value in (None, "image", ["image"]):
        read = read_initialize(replaced(CLAUDE, ["agentCapabilities", "promptCapabilities"], value))
        assert not read.capabilities.prompt.image and not read.capabilities.prompt.embedded_context
        assert read.odd == ("agentCapabilities.promptCapabilities",)
        assert read.capabilities.sessions.fork  # the rest is read as declared


def test_a_capability_object_is_declared_by_being_an_object_and_a_flag_by_being_true() -> None:
    assert not read_initialize(replaced(CLAUDE, ["agentCapabilities", "sessionCapabilities", "fork"], True)).capabilities.sessions.fork
    assert not read_initialize(replaced(CLAUDE, ["agentCapabilities", "promptCapabilities", "image"], 1)).capabilities.prompt.image
    assert not read_initialize(replaced(CLAUDE, ["agentCapabilities", "loadSession"], "yes")).capabilities.sessions.load
    assert read_initialize(replaced(CLAUDE, ["protocolVersion"], True)).protocol_version is None


def test_nothing_that_is_not_an_object_declares_anything() -> None:
    for result in (None, [], "x", 3):
        assert read_initialize(result).capabilities == Initialized().capabilities
    assert read_initialize({}) == Initialized()


@given(st.data(), json_values)
def test_any_field_of_any_type_is_read_without_raising(data: st.DataObject, value: Any) -> None:
    path = data.draw(st.sampled_from(paths(CLAUDE)))
    read = read_initialize(replaced(CLAUDE, path, value))
    assert isinstance(read, Initialized)
    assert read.info is None or all(part is None or isinstance(part, str) for part in (read.info.name, read.info.title, read.info.version))


def test_an_update_keeps_its_fields_of_the_right_type_and_drops_the_others() -> None:
    update = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": None, "status": ["x"], "content": [3, {"type": "diff", "path": "/a", "newText": 7}], "locations": "here", "extra": [1]}
    assert read_update(update) == {"sessionUpdate": "tool_call", "toolCallId": "t1", "content": [{"type": "diff", "path": "/a"}], "extra": [1]}
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ["hi"]}, "messageId": 5}
    assert read_update(chunk) == {"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}}
    assert read_update({"sessionUpdate": None}) is None and read_update(["x"]) is None and read_update(None) is None


@given(st.sampled_from(sorted(FIELDS)), st.data(), json_values)
def test_every_field_an_update_kind_names_is_either_absent_or_of_its_type_after_reading(kind: str, data: st.DataObject, value: Any) -> None:
    field = data.draw(st.sampled_from(sorted(FIELDS[kind])))
    read = read_update({"sessionUpdate": kind, field: value})
    assert read is not None
    if field in read:
        check = FIELDS[kind][field]
        assert check(read[field]) == read[field]


CHUNK_KINDS = ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk")


@given(st.sampled_from(CHUNK_KINDS), json_values, json_values)
def test_a_streamed_chunk_read_at_a_glance_is_read_as_the_table_says(kind: str, type_: Any, text: Any) -> None:
    [run] = read_updates([{"sessionId": "s", "update": {"sessionUpdate": kind, "content": {"type": type_, "text": text}}}])
    assert run.updates == [{"sessionUpdate": kind, "content": {name: value for name, value in (("type", type_), ("text", text)) if isinstance(value, str)}}]


_chunk = st.builds(
    lambda kind, text: {"sessionUpdate": kind, "content": {"type": "text", "text": text}},
    st.sampled_from(CHUNK_KINDS),
    st.text(max_size=4) | st.just("x" * 70),  # a long one: the reply is measured from 64 bytes on
)
_update = st.one_of(
    _chunk,
    st.builds(lambda chunk, id: {**chunk, "messageId": id}, _chunk, st.sampled_from(["m1", "m2", ""])),
    _chunk.map(lambda chunk: {**chunk, "_meta": {"parentToolUseId": "t1"}}),
    st.builds(lambda id: {"sessionUpdate": "tool_call", "toolCallId": id, "title": "Read"}, st.sampled_from(["t1", "t2"])),
    st.just({"sessionUpdate": "usage_update", "used": 5, "size": 10}),
    json_values,
)
_params = st.one_of(st.builds(lambda session, update: {"sessionId": session, "update": update}, st.sampled_from(["a", "b", 3]), _update), json_values)


def test_chunks_that_name_their_message_merge_per_message_and_keep_its_id() -> None:
    """Claude Code's adapter names the message on every chunk it streams."""
    def chunk(text, id):
        return {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}, "messageId": id}}
    [run] = read_updates([chunk("He", "m1"), chunk("llo", "m1"), chunk(" again", "m2"), chunk("!", "m2")])
    assert run.updates == [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello"}, "messageId": "m1"},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": " again!"}, "messageId": "m2"},
    ]
    assert run.sent == 4


@given(st.lists(_params, max_size=12))
def test_updates_read_together_say_what_each_read_alone_says(batch: list[Any]) -> None:
    """Merging a run of plain chunks changes nothing a reader after it sees: per run of a session,
    the same parts, the same bytes of reply, the same last message id, the same count."""
    alone: list[tuple[str, list[dict[str, Any]]]] = []
    for params in batch:
        if isinstance(params, dict) and (update := read_update(params.get("update"))) is not None:
            session = str(params.get("sessionId"))
            if not alone or alone[-1][0] != session:
                alone.append((session, []))
            alone[-1][1].append(update)
    together = read_updates(batch)
    assert [(run.session, run.sent) for run in together] == [(session, len(updates)) for session, updates in alone]
    for run, (_, updates) in zip(together, alone, strict=False):
        assert render_updates(run.updates, ToolCallTracker("c")) == render_updates(updates, ToolCallTracker("c"))
        merged, each = UsageMeter(), UsageMeter()
        merged.observe_all(run.updates)
        each.observe_all(updates)
        assert merged.finish({"outputTokens": 10**6}) == each.finish({"outputTokens": 10**6})
        assert last_message_id(run.updates, None) == last_message_id(updates, None)
        assert [u for u in run.updates if u.get("sessionUpdate") not in CHUNK_KINDS] == [u for u in updates if u.get("sessionUpdate") not in CHUNK_KINDS]


def test_a_prompt_result_and_a_session_answer_are_read_the_same_way() -> None:
    assert read_prompt_result({"stopReason": None, "usage": "lots"}) == {}
    assert read_prompt_result([1]) == {} and read_prompt_result(None) == {}
    assert read_prompt_result({"stopReason": "cancelled", "usage": {"inputTokens": "3", "outputTokens": 2}}) == {"stopReason": "cancelled", "usage": {"outputTokens": 2}}
    assert read_session_answer({"sessionId": 5, "models": [], "configOptions": [{"id": "x"}, 3]}) == {"configOptions": [{"id": "x"}]}
