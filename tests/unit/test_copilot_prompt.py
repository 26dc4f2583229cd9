"""Copilot Chat's prompt wrappers (pure): what reaches the agent, and what identifies a turn."""

from __future__ import annotations

from protocol.history.canonical import canonical, is_global_context_message, normalise
from protocol.history.channels import Turn
from protocol.history.prompt import build_prompt
from protocol.history.reading import read_messages
from protocol.vscode.copilot_prompt import CopilotText, unwrap
from protocol.vscode.lm import DataPart, Message, TextPart

# As Copilot Chat 0.67's agent prompt renders a turn (agentPrompt.tsx, AgentUserMessage).
REMINDER = (
    "When using the replace_string_in_file tool, include 3-5 lines of unchanged code before and after the string you want to"
    " replace, to make it unambiguous which part of the file should be edited."
)


def copilot_turn(request: str, *, editor: str = "The user's current file is /w/app.py. ", attachments: str = "", tag: str = "userRequest") -> str:
    parts = []
    if attachments:
        parts.append(f"<attachments>\n{attachments}\n</attachments>")
    parts.append("<context>\nThe current date is November 23, 2026.\nTerminals:\nTerminal: bash\n\n</context>")
    if editor:
        parts.append(f"<editorContext>\n{editor}\n</editorContext>")
    parts.append(f"<reminderInstructions>\n{REMINDER}\n\n</reminderInstructions>")
    parts.append(f"<{tag}>\n{request}\n</{tag}>")
    return "\n".join(parts) + "\n"


GLOBAL = (
    "<environment_info>\nThe user's current OS is: Linux\n</environment_info>\n"
    "<workspace_info>\nI am working in a workspace with the following folders:\n- /w \n</workspace_info>\n"
)
ATTACHMENT = '<attachment id="app.py" filePath="/w/app.py">\n```python\nprint(1)\n```\n</attachment>'


def turn(*messages: Message) -> Turn:
    return Turn(1, messages, (), False, (), True)


def user(*texts: str) -> Message:
    """A user message as a request is read: normalised, a Copilot turn unwrapped."""
    return normalise(Message("user", tuple(TextPart(t) for t in texts)))


def test_a_copilot_turn_reaches_the_agent_as_its_request_editor_and_attachments_only() -> None:
    text = copilot_turn("run ls", attachments=ATTACHMENT)
    blocks = build_prompt(turn(user(GLOBAL), user(text)), accepts_images=False)
    assert blocks == [
        {"type": "text", "text": f"<attachments>\n{ATTACHMENT.split(chr(10), 1)[1].rsplit(chr(10), 1)[0]}\n</attachments>"},
        {"type": "text", "text": "<editorContext>\nThe user's current file is /w/app.py. \n</editorContext>"},
        {"type": "text", "text": "run ls"},
    ]
    sent = repr(blocks)
    for never in ("reminderInstructions", "replace_string_in_file", "current date", "environment_info", "workspace_info", "userRequest"):
        assert never not in sent


def test_attachments_are_embedded_resources_for_agents_that_take_them() -> None:
    blocks = build_prompt(turn(user(copilot_turn("explain", attachments=ATTACHMENT, editor=""))), accepts_images=False, accepts_resources=True)
    assert blocks == [
        {"type": "resource", "resource": {"uri": "file:///w/app.py", "text": "```python\nprint(1)\n```"}},
        {"type": "text", "text": "explain"},
    ]


def test_the_request_may_contain_anything_and_other_tags_are_kept() -> None:
    request = "why does </userRequest> appear in <context>my</context> file?"
    assert unwrap(copilot_turn(request)).request == request  # type: ignore[union-attr]
    assert unwrap(copilot_turn("hi", tag="user_query")).request == "hi"  # type: ignore[union-attr]
    custom = "<instructions>\nUse tabs.\n</instructions>\n" + copilot_turn("hi")
    assert unwrap(custom).other == (("instructions", "Use tabs."),)  # type: ignore[union-attr]
    loose = "The user attached these tools.\n" + copilot_turn("hi")
    assert unwrap(loose).other == (("", "The user attached these tools."),)  # type: ignore[union-attr]


def test_other_consumers_text_goes_through_unchanged() -> None:
    for text in ("Hello", "<userRequest>half", "say </userRequest>", "<b>bold</b> and <userRequest>x</userRequest> later"):
        assert unwrap(text) is None
        assert build_prompt(turn(user(text)), accepts_images=False) == [{"type": "text", "text": text}]
    assert is_global_context_message(user(GLOBAL))
    assert not is_global_context_message(user("Tell me about <environment_info>"))


def test_a_rerendered_turn_is_the_same_turn_and_the_environment_message_does_not_count() -> None:
    first = normalise(Message("user", (TextPart(copilot_turn("fix it")), DataPart("cache_control", "ZXBoZW1lcmFs"))))
    # Rebuilt after an abandoned confirmation: another editor, no reminders, no date.
    rebuilt = user("<userRequest>\nfix it\n</userRequest>")
    assert canonical(first) == canonical(rebuilt) == canonical(user(copilot_turn("fix it", editor="The user's current file is /w/b.py. ")))
    assert canonical(first) != canonical(user(copilot_turn("fix it", attachments=ATTACHMENT)))  # what is attached counts
    assert canonical(first) != canonical(user(copilot_turn("fix that")))
    assert canonical(user(GLOBAL)) is None


def test_a_copilot_turn_is_unwrapped_once_as_the_request_is_read() -> None:
    raw = [
        {"role": "user", "content": [{"type": "text", "value": copilot_turn("fix it", attachments=ATTACHMENT)}]},
        {"role": "assistant", "content": [{"type": "text", "value": "<userRequest>not a turn</userRequest>"}]},
    ]
    asked, answered = read_messages(raw, root=0).messages
    [part] = asked.content
    assert isinstance(part, CopilotText) and part.turn == unwrap(part.value) and part.turn.request == "fix it"
    assert type(answered.content[0]) is TextPart  # only a user's turn is Copilot's wrapper
    assert normalise(asked) == asked  # what was read is read once: reading it again changes nothing


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_an_image_inside_copilots_attachments_reaches_the_agent_before_the_request() -> None:
    """As Copilot Chat 0.67 sends a pasted image: inside the turn's `<attachments>`, so the turn's
    text comes in two pieces around it (seen in the real Chat view)."""
    whole = copilot_turn("What is in this image?", attachments="\n")
    head, tail = whole.split("\n", 1)
    assert head == "<attachments>"
    message = normalise(Message("user", (TextPart(head + "\n"), DataPart("image/png", PNG), TextPart(tail))))
    image, text = message.content
    assert image == DataPart("image/png", PNG)
    assert isinstance(text, CopilotText) and text.turn.request == "What is in this image?"
    assert build_prompt(turn(message), accepts_images=True) == [
        {"type": "image", "mimeType": "image/png", "data": PNG},
        {"type": "text", "text": "<editorContext>\nThe user's current file is /w/app.py. \n</editorContext>"},
        {"type": "text", "text": "What is in this image?"},
    ]
    # Re-rendered with another editor context, it is the same turn.
    again = copilot_turn("What is in this image?", attachments="\n", editor="The user's current file is /w/other.py. ")
    head, tail = again.split("\n", 1)
    assert canonical(normalise(Message("user", (TextPart(head + "\n"), DataPart("image/png", PNG), TextPart(tail))))) == canonical(message)


def test_text_that_opens_no_element_where_loose_text_may_be_is_read_and_never_loops() -> None:
    # The piece after an image starts with a closing tag; a user may type "<" anywhere.
    assert unwrap("\n</attachments>\n<userRequest>\nhi\n</userRequest>") is not None
    assert unwrap("a\n< b\n</userRequest>") is None
    assert unwrap("\n<3\n<userRequest>\nhi\n</userRequest>").request == "hi"
