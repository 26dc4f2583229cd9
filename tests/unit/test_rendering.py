"""ACP ⇄ LM translations (pure): what the user sees of agent updates, and what the agent is sent."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol.acp.usage import TurnUsage
from protocol.bridge.tool_names import bridged_tool
from protocol.history.canonical import normalise
from protocol.history.channels import Turn
from protocol.history.prompt import build_prompt
from protocol.turn.permissions import agent_action_parameters, approves, choose_option, permission_outcome
from protocol.turn.rendering import ToolCallTracker, block_text, merge_parts, render_update, render_updates, unified_diff, usage_part
from protocol.turn.rules import awaited_results
from protocol.vscode.lm import DataPart, EditPart, Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart, UsagePart


def turn(*messages: Message, cancelled: bool = False, context: tuple[Message, ...] = ()) -> Turn:
    """A turn as History makes it: of messages as the request was read (normalised)."""
    return Turn(1, tuple(map(normalise, messages)), tuple(map(normalise, context)), cancelled, (), True)


_CONTENT = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(st.sampled_from(["", "a", "b c", "é"]), st.integers(0, 3))}),
    st.fixed_dictionaries({"type": st.just("image"), "mimeType": st.just("image/png")}),
    st.fixed_dictionaries({"type": st.just("resource"), "resource": st.fixed_dictionaries({"uri": st.just("file:///x"), "text": st.just("body")})}),
    st.just({"type": "text"}),
    st.none(),
    st.just("not a block"),
)
_UPDATE = st.one_of(
    st.fixed_dictionaries({"sessionUpdate": st.sampled_from(["agent_message_chunk", "agent_thought_chunk"]), "content": _CONTENT}),
    st.fixed_dictionaries({
        "sessionUpdate": st.sampled_from(["tool_call", "tool_call_update"]),
        "toolCallId": st.sampled_from(["t1", "t2"]),
        "status": st.sampled_from(["pending", "completed", "failed"]),
    }),
    st.just({"sessionUpdate": "plan", "entries": [{"content": "step", "status": "pending"}]}),
    st.just({"sessionUpdate": "usage_update", "used": 5}),
)


@given(st.lists(_UPDATE, max_size=12))
def test_updates_rendered_together_are_each_rendered_then_merged(updates: list[dict]) -> None:
    tracker = ToolCallTracker()  # each sequence has its own: a call's line comes once
    one_by_one = merge_parts([part for update in updates for part in render_update(update, tracker)])
    assert render_updates(updates, ToolCallTracker()) == one_by_one


def test_message_and_thought_chunks() -> None:
    tracker = ToolCallTracker()
    assert render_update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}}, tracker) == [TextPart("Hi")]
    assert render_update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}}, tracker) == [ThinkingPart("hmm")]
    assert render_update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}}, tracker) == []
    assert render_update({"sessionUpdate": "available_commands_update", "availableCommands": []}, tracker) == []
    assert render_update({"sessionUpdate": "something_new"}, tracker) == []


def test_agent_tool_calls_are_one_status_line_each_never_tool_call_parts() -> None:
    tracker = ToolCallTracker()
    # Announced with a placeholder title, as Claude Code does: the line waits for the end.
    assert render_update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read", "status": "pending"}, tracker) == []
    assert render_update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Read main.py", "status": "in_progress"}, tracker) == []
    done = render_update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "line 1\nline 2"}}],
        },
        tracker,
    )
    assert done == [TextPart("\n\n✓ Read main.py\n```\nline 1\nline 2\n```\n")]
    # A late duplicate completion adds nothing.
    assert render_update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}, tracker) == []


def test_failed_and_unannounced_tool_calls_and_long_output() -> None:
    tracker = ToolCallTracker()
    output = "\n".join(f"l{i}" for i in range(30))
    parts = render_update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "never-announced", "title": "Run tests", "status": "failed",
         "content": [{"type": "content", "content": {"type": "text", "text": output}}]},
        tracker,
    )
    text = "".join(p.value for p in parts)  # type: ignore[union-attr]
    assert text.startswith("\n\n✗ Run tests\n```\nl0\n")
    assert "… (18 more lines)" in text and "l29" not in text


def test_plan_is_a_checklist() -> None:
    parts = render_update(
        {"sessionUpdate": "plan", "entries": [
            {"content": "Read the code", "priority": "high", "status": "completed"},
            {"content": "Fix the bug", "priority": "high", "status": "in_progress"},
            {"content": "Write a test", "priority": "low", "status": "pending"},
        ]},
        ToolCallTracker(),
    )
    assert parts == [TextPart("\n\n**Plan**\n- [x] Read the code\n- [ ] ⏳ Fix the bug\n- [ ] Write a test\n\n")]


def test_content_blocks_other_than_text() -> None:
    assert block_text({"type": "image", "mimeType": "image/png", "data": "xx"}) == "[image: image/png]"
    assert block_text({"type": "resource_link", "uri": "file:///a.py", "name": "a.py"}) == "[a.py](file:///a.py)"
    assert block_text({"type": "resource", "resource": {"uri": "file:///a.py", "text": "x = 1"}}) == "file:///a.py\n```\nx = 1\n```\n"
    assert block_text({"type": "mystery"}) == ""


def test_options_are_chosen_by_kind_never_by_id() -> None:
    options = [
        {"optionId": "proceed_once", "name": "Yes", "kind": "allow_once"},
        {"optionId": "approved", "name": "Always", "kind": "allow_always"},
        {"optionId": "allow", "name": "No", "kind": "reject_once"},
    ]
    assert choose_option(options, allow=True) == "proceed_once"
    assert choose_option(options, allow=False) == "allow"
    assert choose_option([{"optionId": "a", "kind": "allow_always"}], allow=True) == "a"
    assert choose_option([{"optionId": "a", "kind": "allow_once"}], allow=False) is None
    assert choose_option(None, allow=True) is None


def test_agent_action_parameters_always_fit_the_tools_input_schema() -> None:
    # VS Code answers input that fails the schema with an error and never asks the user.
    params = {"toolCall": {"toolCallId": "pending", "title": "rm -rf build", "kind": "execute", "rawInput": {"command": "rm -rf build"}}}
    assert agent_action_parameters(params) == {"kind": "execute", "title": "rm -rf build", "raw_input": {"command": "rm -rf build"}}
    assert agent_action_parameters({}) == {"kind": "other", "title": "Take an action (other)"}
    assert agent_action_parameters({"toolCall": {"rawInput": None, "title": None, "kind": 3}}) == {"kind": "other", "title": "Take an action (other)"}
    assert agent_action_parameters({"toolCall": {"kind": "execute", "rawInput": {"command": ["git", "push"]}}})["title"] == "Run git push"
    for raw in ("ls -la", ["a", "b"], 7, False):
        assert agent_action_parameters({"toolCall": {"title": "t", "rawInput": raw}})["raw_input"] == {"value": raw}


def test_only_the_exact_approval_token_approves() -> None:
    def result(*texts: str) -> ToolResultPart:
        return ToolResultPart("sym-1", tuple(TextPart(t) for t in texts))

    assert approves(result("symposium-agent-action:approved"))
    # A hook's part after the tool's own does not change the tool's answer.
    assert approves(result("symposium-agent-action:approved", "<PreToolUse-context>x</PreToolUse-context>"))
    for text in (
        "The user chose to skip the tool call, they want to proceed without running it",
        "ERROR while calling tool: Tool symposium-agent-action is currently disabled by the user, and cannot be called.",
        "ERROR: Your input to the tool was invalid (must be object)\nPlease check your input and try again.",
        "Approved", "yes", "symposium-agent-action:approved ", " symposium-agent-action:approved", "SYMPOSIUM-AGENT-ACTION:APPROVED", "",
    ):
        assert not approves(result(text)), text
    assert not approves(result())
    assert not approves(ToolResultPart("sym-1", (DataPart("image/png", "iVBO"),)))
    # Only Copilot's own bookkeeping may come first; anything else before the token is a "no".
    approved = TextPart("symposium-agent-action:approved")
    assert approves(ToolResultPart("sym-1", (DataPart("cache_control", "ZXBoZW1lcmFs"), approved)))
    assert not approves(ToolResultPart("sym-1", (DataPart("image/png", "iVBO"), approved)))
    assert not approves(ToolResultPart("sym-1", (DataPart("application/json", "e30="), approved)))


def test_a_permission_is_answered_with_the_agents_option_of_that_kind() -> None:
    options = [{"optionId": "y", "kind": "allow_once"}, {"optionId": "n", "kind": "reject_once"}, {"optionId": "N", "kind": "reject_always"}]
    assert permission_outcome(options, allow=True) == {"outcome": "selected", "optionId": "y"}
    assert permission_outcome(options, allow=False) == {"outcome": "selected", "optionId": "n"}
    assert permission_outcome([{"optionId": "y", "kind": "allow_once"}], allow=False) == {"outcome": "cancelled"}


def result_message(*ids: str) -> Message:
    return Message("user", tuple(ToolResultPart(i, (TextPart("ok"),)) for i in ids))


def test_peek_consumes_exactly_the_awaited_results() -> None:
    assert awaited_results(turn(result_message("a")), ["a"]) == {"a": ToolResultPart("a", (TextPart("ok"),))}
    assert awaited_results(turn(result_message("a"), result_message("b")), ["a", "b"]) is not None
    assert awaited_results(turn(result_message("a")), ["a", "b"]) is None  # one missing
    assert awaited_results(turn(result_message("x")), ["a"]) is None  # someone else's
    assert awaited_results(turn(result_message("a"), Message("user", (TextPart("and also"),))), ["a"]) is None
    assert awaited_results(turn(result_message("a"), cancelled=True), ["a"]) is None
    assert awaited_results(turn(), ["a"]) is None
    # Two answers to one call (a "no", then an approval): the user's choice is not known.
    assert awaited_results(turn(result_message("a", "a")), ["a"]) is None
    assert awaited_results(turn(result_message("a"), result_message("a")), ["a"]) is None


def test_prompt_is_the_new_user_input_without_system_messages_or_orphan_results() -> None:
    t = turn(
        Message("system", (TextPart("You are Copilot"),)),
        Message("user", (TextPart("look "), TextPart("at this"), DataPart("image/png", "iVBO"), ToolResultPart("old", (TextPart("stale"),)))),
    )
    assert build_prompt(t, accepts_images=True) == [
        {"type": "text", "text": "look at this"},
        {"type": "image", "mimeType": "image/png", "data": "iVBO"},
    ]
    assert build_prompt(t, accepts_images=False)[1] == {"type": "text", "text": "[image omitted: image/png]"}


def test_a_new_conversation_with_history_gets_it_as_context() -> None:
    context = (
        Message("user", (TextPart("Hi"),)),
        Message("assistant", (TextPart("Hello!"), ToolCallPart("c", "search", {}))),
        Message("user", (ToolResultPart("c", (TextPart("found"),)),)),
        Message("assistant", (TextPart("Done."),)),
    )
    blocks = build_prompt(turn(Message("user", (TextPart("Thanks"),)), context=context), accepts_images=False)
    assert blocks[0]["text"].startswith("Earlier in this conversation:\n\nUser: Hi\n\nAssistant: Hello! [called tool search]")
    assert "[tool result: found]" in blocks[0]["text"]
    assert blocks[1] == {"type": "text", "text": "Thanks"}


def test_permissions_for_our_bridged_tools_are_recognised_in_each_agents_naming() -> None:
    tools = {"read_file", "search"}

    def title(text: str) -> dict:
        return {"toolCall": {"toolCallId": "x", "title": text}}

    assert bridged_tool(title("mcp__vscode_tools__read_file"), tools) == "read_file"  # Claude Code
    assert bridged_tool(title("vscode_tools/search"), tools) == "search"  # fast-agent
    assert bridged_tool(title("mcp_vscode_tools_search"), tools) == "search"  # Gemini CLI
    assert bridged_tool({"toolCall": {"toolCallId": "mcp__vscode_tools__search"}}, tools) == "search"
    assert bridged_tool(title("mcp__vscode_tools__rm_rf"), tools) is None  # not a tool we bridge
    assert bridged_tool(title("mcp__other__read_file"), tools) is None
    assert bridged_tool(title("Run `rm -rf /`"), tools) is None


def codex_mcp_approval(server: str, tool: str, kind: str = "mcp_tool_call") -> dict:
    """Codex's permission request for an MCP tool call (codex-acp 0.16.0, verbatim but for ids)."""
    question = f'Allow the {server} MCP server to run tool "{tool}"?'
    return {
        "sessionId": "s1",
        "toolCall": {
            "toolCallId": "call_fake0002",
            "status": "pending",
            "title": "Approve MCP tool call",
            "content": [{"type": "content", "content": {"type": "text", "text": f"{question}\n\nServer: {server}\n\nThe weather in a city\n\nArguments:\n- city: Paris"}}],
            "rawInput": {
                "turn_id": "t1",
                "server_name": server,
                "id": "mcp_tool_call_approval_call_fake0002",
                "request": {
                    "mode": "form",
                    "_meta": {"codex_approval_kind": kind, "persist": ["session", "always"], "tool_description": "The weather in a city",
                              "tool_params": {"city": "Paris"}, "tool_params_display": [{"name": "city", "value": "Paris", "display_name": "city"}]},
                    "message": question,
                    "requested_schema": {"type": "object", "properties": {}},
                },
            },
        },
        "options": [
            {"optionId": "approved", "name": "Allow", "kind": "allow_once"},
            {"optionId": "approved-for-session", "name": "Allow for this session", "kind": "allow_always"},
            {"optionId": "approved-always", "name": "Allow and don't ask again", "kind": "allow_always"},
            {"optionId": "cancel", "name": "Cancel", "kind": "reject_once"},
        ],
    }


def test_codex_mcp_approvals_for_our_bridged_tools_are_recognised() -> None:
    tools = {"get_weather", "search"}
    assert bridged_tool(codex_mcp_approval("vscode_tools", "get_weather"), tools) == "get_weather"
    # Our server's name is required, in the raw input and in the question, and so is a bridged tool.
    assert bridged_tool(codex_mcp_approval("other", "get_weather"), tools) is None
    assert bridged_tool(codex_mcp_approval("vscode_tools", "rm_rf"), tools) is None
    assert bridged_tool(codex_mcp_approval("vscode_tools", "get_weather", kind="something_else"), tools) is None
    wrong_server = codex_mcp_approval("vscode_tools", "get_weather")
    wrong_server["toolCall"]["rawInput"]["server_name"] = "other"
    assert bridged_tool(wrong_server, tools) is None
    question_elsewhere = codex_mcp_approval("other", "get_weather")
    question_elsewhere["toolCall"]["rawInput"]["request"]["message"] = 'Allow the vscode_tools MCP server to run tool "get_weather"?'
    assert bridged_tool(question_elsewhere, tools) is None
    # Codex's command approvals are never one of ours.
    exec_approval = {"toolCall": {"toolCallId": "call_1", "kind": "execute", "title": "echo hi > out.txt",
                                  "rawInput": {"call_id": "call_1", "command": ["/bin/bash", "-lc", "echo hi > out.txt"]}}}
    assert bridged_tool(exec_approval, tools) is None


# Edits, bridged calls, usage -------------------------------------------------------------------

APP = "/work/app.py"


def test_an_edit_shows_the_diff_the_agent_sent_while_it_ran() -> None:
    # Claude Code's Edit, as its adapter sends it: the fragment first, then the change with
    # context, and the end of the call without content (content replaces, per ACP).
    tracker = ToolCallTracker()
    updates = [
        {"sessionUpdate": "tool_call", "toolCallId": "e", "title": "Edit", "kind": "edit", "status": "pending", "content": []},
        {"sessionUpdate": "tool_call_update", "toolCallId": "e", "title": "Edit app.py", "content": [{"type": "diff", "path": APP, "oldText": "b = 2", "newText": "b = 20"}]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "e", "content": [{"type": "diff", "path": APP, "oldText": "a = 1\nb = 2\nc = 3", "newText": "a = 1\nb = 20\nc = 3"}]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "e", "status": "completed", "rawOutput": "The file has been updated."},
    ]
    parts = render_updates([*updates, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done."}}], tracker)
    assert parts == [
        TextPart("\n\n✓ Edit app.py\n```diff\n--- /work/app.py\n+++ /work/app.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n```\n"),
        # What the extension keeps, so the user can review and revert the conversation's edits.
        EditPart(APP, "a = 1\nb = 20\nc = 3", "a = 1\nb = 2\nc = 3"),
        TextPart("Done."),
    ]
    # A failed edit changed nothing: its diff is shown (what was tried), nothing to revert.
    failed = [{"sessionUpdate": "tool_call_update", "toolCallId": "f", "title": "Edit x", "status": "failed",
               "content": [{"type": "diff", "path": "/w/x", "oldText": None, "newText": "x"}]}]
    assert [type(p) for p in render_updates(failed, tracker)] == [TextPart]


def test_a_new_file_is_a_diff_from_nothing_and_a_long_diff_is_cut_saying_so() -> None:
    assert unified_diff("/w/new.txt", None, "one\ntwo\n").split("\n")[:4] == ["--- /dev/null", "+++ /w/new.txt", "@@ -0,0 +1,2 @@", "+one"]
    new = "".join(f"line {n}\n" for n in range(500))
    cut = unified_diff("big.txt", "", new, max_lines=20)
    lines = cut.split("\n")
    assert len(lines) == 21 and lines[19] == "+line 16"
    assert lines[20] == "… (483 more lines of this diff not shown; the whole change is +500 −0 lines)"
    # One enormous line (minified code) is cut by size, not carried whole.
    assert len(unified_diff("min.js", "x", "y" * 100_000, max_chars=1_000)) < 1_200
    assert unified_diff("same.txt", "a\n", "a\n") == "(no change to same.txt)"
    # A big file changed all over is one hunk, not seconds of difflib in the Session's loop; a
    # huge one gets no diff at all.
    spread = [f"line {n}" for n in range(5_000)]
    changed = [line.upper() if n % 50 == 0 else line for n, line in enumerate(spread)]
    hunk = unified_diff("big.txt", "\n".join(spread), "\n".join(changed), max_lines=20_000, max_chars=10**6)
    assert hunk.count("\n@@ ") == 1 and "-line 4950\n" in hunk and "+LINE 4950\n" in hunk
    assert unified_diff("huge.txt", "x" * 600_000, "y" * 600_000) == "(a change to huge.txt too big to show here: 585 KiB before, 585 KiB after)"


def test_a_diff_that_contains_a_fence_gets_a_longer_one() -> None:
    tracker = ToolCallTracker()
    part, _ = render_update({"sessionUpdate": "tool_call_update", "toolCallId": "d", "title": "Edit README.md", "status": "completed",
                            "content": [{"type": "diff", "path": "README.md", "oldText": "", "newText": "```sh\nmake\n```\n"}]}, tracker)
    assert "````diff\n" in part.value and part.value.endswith("\n````\n")  # type: ignore[union-attr]


def test_calls_of_our_bridged_tools_get_no_status_line() -> None:
    # VS Code shows a tool it ran itself ("Checked config.json"); a second line would repeat it.
    tracker = ToolCallTracker()
    claude = [
        {"sessionUpdate": "tool_call", "toolCallId": "c", "name": "mcp__vscode_tools__get_errors", "title": "mcp__vscode_tools__get_errors", "status": "pending"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "<errors/>"}}]},
    ]
    codex = [
        {"sessionUpdate": "tool_call", "toolCallId": "x", "title": "Tool: vscode_tools/get_errors", "status": "in_progress", "rawInput": {"server": "vscode_tools", "tool": "get_errors"}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "x", "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "<errors/>"}}]},
    ]
    assert render_updates([*claude, *codex], tracker) == []
    # Another MCP server's tool, or the agent's own, still gets its line.
    other = {"sessionUpdate": "tool_call_update", "toolCallId": "o", "title": "Tool: github/search", "status": "completed", "rawInput": {"server": "github"}}
    assert render_updates([other], tracker) == [TextPart("\n\n✓ Tool: github/search\n")]


def test_an_edit_permission_card_shows_the_change_as_a_diff() -> None:
    raw = {"file_path": APP, "old_string": "b = 2", "new_string": "b = 20", "replace_all": False}
    with_content = {"toolCall": {"title": "Edit app.py", "kind": "edit", "rawInput": raw,
                                 "content": [{"type": "diff", "path": APP, "oldText": "a = 1\nb = 2", "newText": "a = 1\nb = 20"}]}}
    parameters = agent_action_parameters(with_content)
    assert parameters["diff"] == "--- /work/app.py\n+++ /work/app.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 20"
    assert parameters["raw_input"] == raw and parameters["kind"] == "edit"  # the agent's own input is still there
    # Without ACP diff content: Claude Code's Edit, MultiEdit and Write inputs.
    assert agent_action_parameters({"toolCall": {"kind": "edit", "rawInput": raw}})["diff"].endswith("-b = 2\n+b = 20")
    multi = {"file_path": APP, "edits": [{"old_string": "a", "new_string": "A"}, {"old_string": "c", "new_string": "C"}]}
    assert agent_action_parameters({"toolCall": {"kind": "edit", "rawInput": multi}})["diff"].count("@@ -1 +1 @@") == 2
    write = agent_action_parameters({"toolCall": {"kind": "edit", "rawInput": {"file_path": APP, "content": "x = 1\n"}}})
    assert write["diff"].endswith("+x = 1")
    # Not an edit: no diff, the card shows the raw input as before.
    assert "diff" not in agent_action_parameters({"toolCall": {"kind": "execute", "rawInput": {"command": "ls"}}})
    assert "diff" not in agent_action_parameters({"toolCall": {"kind": "edit", "rawInput": {"file_path": 3, "old_string": "a", "new_string": "b"}}})


def test_usage_part_from_what_the_agent_reported() -> None:
    # Claude Code: its context (usage_update) and the prompt's summed counts.
    assert usage_part(TurnUsage(used=46_122, size=1_000_000, input_tokens=30, output_tokens=15, cached_tokens=12)) == UsagePart(46_122, 15, 46_137, 12)
    # Codex: only its context.
    assert usage_part(TurnUsage(used=15, size=258_400)) == UsagePart(15, 0, 15, 0)
    # Only the prompt's counts: its input, cache reads included.
    assert usage_part(TurnUsage(input_tokens=100, output_tokens=7, cached_tokens=900)) == UsagePart(1000, 7, 1007, 900)
    # Nothing reported, nothing sent (a cost alone is no token count).
    assert usage_part(TurnUsage()) is None
    assert usage_part(TurnUsage(size=1000, cost=(0.1, "USD"))) is None


def test_a_subagents_calls_show_as_their_own_group_under_the_call_that_started_it() -> None:
    """docs/usage.md, "Subagents": Claude Code stamps a Task subagent's updates with the Task call's id."""
    child = {"_meta": {"claudeCode": {"parentToolUseId": "task-1"}}}
    updates = [
        {"sessionUpdate": "tool_call", "toolCallId": "task-1", "title": "Explore the parser", "status": "in_progress"},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "I will read it."}, **child},
        {"sessionUpdate": "tool_call", "toolCallId": "read-1", "title": "Read parser.py", "status": "pending", **child},
        {"sessionUpdate": "tool_call_update", "toolCallId": "read-1", "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "def parse(): ..."}}], **child},
        {"sessionUpdate": "tool_call", "toolCallId": "grep-1", "title": "Grep parse", "status": "failed", **child},
        {"sessionUpdate": "tool_call_update", "toolCallId": "task-1", "status": "completed"},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "The parser is small."}},
    ]
    parts = render_updates(updates, ToolCallTracker())
    text = "".join(p.value for p in parts if isinstance(p, TextPart))
    assert text == "\n\n**Explore the parser** · subagent\n\n> ✓ Read parser.py\n\n> ✗ Grep parse\n\n\n✓ Explore the parser · subagent, 2 calls\nThe parser is small."
    assert ThinkingPart("I will read it.") in parts  # the subagent's words: never the agent's answer


def test_a_codex_subagent_is_named() -> None:
    update = {"sessionUpdate": "tool_call", "toolCallId": "s1", "status": "completed", "_meta": {"codex": {"subagent": {"path": "/root/reviewer", "activity": "started"}}}}
    assert render_update(update, ToolCallTracker()) == [TextPart("\n\n✓ subagent reviewer\n")]
    odd = {"sessionUpdate": "tool_call", "toolCallId": "s2", "title": "Start", "status": "completed", "_meta": {"claudeCode": {"parentToolUseId": 7}, "codex": "x"}}
    assert render_update(odd, ToolCallTracker()) == [TextPart("\n\n✓ Start\n")]
