"""A scripted OpenAI Responses API on 127.0.0.1, so Codex runs offline and deterministically.

Codex is pointed at it as a custom model provider (tests/support/codex.py): `POST /v1/responses` with
`stream: true`. The test scripts the *main conversation*: each main model request takes the next
`Reply` from a queue, which the server streams as the Responses API's SSE events
(`response.created`; per output item `response.output_item.added`, its deltas, then
`response.output_item.done` with the whole item; `response.completed` with the usage). Anything
else Codex asks (a model list, ...) is answered with a 404 and recorded; a main request no
scripted reply fits gets a short stub text. Every request is recorded, so a test can assert what
the model received:

    api = FakeOpenAI()
    await nursery.start(api.serve)
    api.script(reply(text("Hello ", "there.")), reply(function_call("shell", {"command": ["ls"]})))
    ... model_providers.fake.base_url = api.url + "/v1" ...
    api.main[1].function_outputs()  # what the tools gave back, as the model was sent it

A reply can be held for the request it answers (`answers=` the last user text), can stall after
N deltas until the client hangs up (`stall_after=`), or be `paced` (see tests/support/fake_http.py).
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import attrs
import trio

from tests.support import fake_http

JSON = Any

# User messages Codex writes itself (its environment, the project's instructions), not the user's.
CODEX_CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions instructions>", "<INSTRUCTIONS>", "<turn_aborted>")


# Scripted replies --------------------------------------------------------------------------------

_ids = itertools.count(1)


@attrs.frozen
class Item:
    """One output item of a reply: its final form, and the delta events that stream it."""

    done: dict[str, JSON]
    deltas: tuple[dict[str, JSON], ...]

    @property
    def added(self) -> dict[str, JSON]:
        """The item as `response.output_item.added` announces it: no content yet."""
        match self.done["type"]:
            case "message":
                return self.done | {"status": "in_progress", "content": []}
            case "function_call":
                return self.done | {"status": "in_progress", "arguments": ""}
            case "reasoning":
                return self.done | {"summary": []}
            case "custom_tool_call":
                return self.done | {"status": "in_progress", "input": ""}
        return self.done


def text(*chunks: str) -> Item:
    """An assistant message; each chunk is one `response.output_text.delta`."""
    item_id = f"msg_fake{next(_ids):04d}"
    done = {"type": "message", "id": item_id, "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": "".join(chunks), "annotations": []}]}
    deltas = tuple({"type": "response.output_text.delta", "item_id": item_id, "output_index": 0, "content_index": 0, "delta": c} for c in chunks)
    return Item(done, deltas)


def reasoning(*chunks: str) -> Item:
    """A reasoning item with a summary; each chunk is one `response.reasoning_summary_text.delta`."""
    item_id = f"rs_fake{next(_ids):04d}"
    done = {"type": "reasoning", "id": item_id, "summary": [{"type": "summary_text", "text": "".join(chunks)}]}
    deltas = tuple({"type": "response.reasoning_summary_text.delta", "item_id": item_id, "output_index": 0, "summary_index": 0, "delta": c} for c in chunks)
    return Item(done, deltas)


def function_call(name: str, arguments: dict[str, JSON], *, namespace: str | None = None, call_id: str | None = None) -> Item:
    """A function (tool) call whose arguments arrive as two deltas, as the real API splits them;
    `namespace` for a tool offered inside a namespace (Codex offers each MCP server's tools so)."""
    item_id = f"fc_fake{next(_ids):04d}"
    raw = json.dumps(arguments)
    half = len(raw) // 2
    done = {"type": "function_call", "id": item_id, "status": "completed", "call_id": call_id or f"call_fake{next(_ids):04d}",
            "name": name, "arguments": raw} | ({"namespace": namespace} if namespace else {})
    deltas = tuple({"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": 0, "delta": d} for d in (raw[:half], raw[half:]))
    return Item(done, deltas)


def custom_tool_call(name: str, input: str, *, call_id: str | None = None) -> Item:
    """A call of a freeform tool (Codex's `apply_patch`: its input is the patch text, not JSON),
    its input in two deltas."""
    item_id = f"ctc_fake{next(_ids):04d}"
    half = len(input) // 2
    done = {"type": "custom_tool_call", "id": item_id, "status": "completed", "call_id": call_id or f"call_fake{next(_ids):04d}", "name": name, "input": input}
    deltas = tuple({"type": "response.custom_tool_call_input.delta", "item_id": item_id, "output_index": 0, "delta": d} for d in (input[:half], input[half:]))
    return Item(done, deltas)


@attrs.frozen
class Reply(fake_http.Reply):
    """A reply of output items (`parts`)."""

    @property
    def items(self) -> tuple[Item, ...]:
        return self.parts

    def call_ids(self) -> list[str]:
        return [i.done["call_id"] for i in self.items if i.done["type"] in ("function_call", "custom_tool_call")]


# A scripted model reply: `reply(*parts, answers=..., stall_after=..., paced=..., usage=...)` (see `fake_http.Reply`).
reply = Reply.of


# Recorded requests -------------------------------------------------------------------------------


@attrs.define
class Request(fake_http.Request):
    @property
    def input(self) -> list[dict[str, JSON]]:
        items = self.body.get("input") if isinstance(self.body, dict) else None
        return items if isinstance(items, list) else []

    def _texts(self, role: str) -> list[str]:
        texts = []
        for i in self.input:
            if i.get("type", "message") != "message" or i.get("role") != role:
                continue
            content = i.get("content")
            if isinstance(content, str):  # a message's content may be a plain string (Grok Build sends it so)
                texts.append(content)
            else:
                texts.extend(c.get("text", "") for c in content or [] if c.get("type") in ("input_text", "output_text"))
        return texts

    def user_texts(self) -> list[str]:
        """The text of every user message, Codex's own context messages left out."""
        return [t for t in self._texts("user") if not t.lstrip().startswith(CODEX_CONTEXT_PREFIXES)]

    def assistant_texts(self) -> list[str]:
        return self._texts("assistant")

    def images(self) -> list[tuple[str, str]]:
        """(media type, base64 data) of every image the user's messages carry (as data URLs)."""
        urls = [c.get("image_url", "") for i in self.input if i.get("type") == "message" and i.get("role") == "user"
                for c in i.get("content") or [] if c.get("type") == "input_image"]
        return [(url[5:].split(";", 1)[0], url.split(",", 1)[1]) for url in urls if url.startswith("data:") and ";base64," in url]

    def function_calls(self) -> list[dict[str, JSON]]:
        return [i for i in self.input if i.get("type") == "function_call"]

    def function_outputs(self) -> list[dict[str, JSON]]:
        return [i for i in self.input if i.get("type") == "function_call_output"]

    def tool_outputs(self) -> list[dict[str, JSON]]:
        """What the tools gave back, as the model was sent it: `call_id`, `text`."""
        return [{"call_id": o["call_id"], "text": output_text(o["output"])} for o in self.function_outputs()]


def output_text(output: JSON) -> str:
    """The text of a `function_call_output`'s output (a string, or content items)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(c.get("text", "") for c in output if isinstance(c, dict))
    return json.dumps(output)


# The server --------------------------------------------------------------------------------------


class FakeOpenAI(fake_http.FakeServer):
    request_class = Request

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)

    @property
    def other(self) -> list[Request]:
        """Requests that were not model requests (answered 404), for a test to look at."""
        return [r for r in self.requests if not r.path.split("?", 1)[0].endswith("/responses")]

    async def _respond(self, stream: trio.SocketStream, request: Request, raw: bytes) -> None:
        route = request.path.split("?", 1)[0]
        if request.method == "POST" and route == "/v1/responses" and isinstance(request.body, dict):
            # The agent's own turn offers its tools; a side call may offer one, to have its answer
            # structured (Grok Build's session title), and is not the conversation.
            request.main = len(request.body.get("tools") or []) > 1
            if request.main:
                request.reply = self._take(request)
            chosen = request.reply or reply(text("(unscripted)" if request.main else ""))
            await self._stream(stream, request, chosen)
        else:
            error = {"error": {"type": "invalid_request_error", "code": "not_found", "message": f"{request.method} {route} is not faked"}}
            await self._json(stream, 404, error)
            request.finished = True

    async def _stream(self, stream: trio.SocketStream, request: Request, chosen: Reply) -> None:
        response_id = f"resp_fake{next(self._ids):04d}"
        model = request.body.get("model", "gpt-fake")
        response = {"id": response_id, "object": "response", "created_at": int(time.time()), "status": "in_progress", "model": model, "output": []}
        events: list[dict[str, JSON]] = [{"type": "response.created", "response": response}]
        for index, item in enumerate(chosen.items):
            events.append({"type": "response.output_item.added", "output_index": index, "item": item.added})
            if item.done["type"] == "reasoning":
                events.append({"type": "response.reasoning_summary_part.added", "item_id": item.done["id"], "output_index": index, "summary_index": 0})
            events.extend(d | {"output_index": index} for d in item.deltas)
            events.append({"type": "response.output_item.done", "output_index": index, "item": item.done})
        usage = {"input_tokens": chosen.usage[0], "input_tokens_details": {"cached_tokens": 0}, "output_tokens": chosen.usage[1],
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": sum(chosen.usage)}
        completed = response | {"status": "completed", "output": [i.done for i in chosen.items], "usage": usage}
        events.append({"type": "response.completed", "response": completed})

        sse = [fake_http.Event(e["type"], e | {"sequence_number": n}, delta=e["type"].endswith(".delta")) for n, e in enumerate(events)]
        await self._send_events(stream, request, chosen, sse)


__all__ = ["FakeOpenAI", "Reply", "Request", "function_call", "output_text", "reasoning", "reply", "text"]
