"""A scripted Anthropic Messages API on 127.0.0.1, so Claude Code runs offline and deterministically.

The test scripts the *main conversation*: each main model request takes the next `Reply` from a
queue, which the server streams as SSE (`message_start`, `content_block_start/delta/stop` per
block, `message_delta` with the stop reason, `message_stop`). Claude Code also makes calls of its
own (a session title, a "what might the user type next" suggestion, token counts): those are
answered generically and never consume the script. Every request is recorded, so a test can
assert what the model received.

    api = FakeAnthropic()
    await nursery.start(api.serve)
    api.script(reply(text("Hello ", "there.")), reply(tool_use("Bash", {"command": "ls"})))
    ... ANTHROPIC_BASE_URL=api.url ...
    api.main[1].messages  # the second model request of the conversation

A reply can be held for the request it answers (`answers=` the last user text), can stall after
N deltas until the client hangs up (`stall_after=`, for cancels and kills mid-stream), or be
`paced`: each delta waits for `api.advance()`, which the test calls on each part it receives.

The HTTP server itself is tests/support/fake_http.py.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import attrs
import trio

from tests.support import fake_http

JSON = Any

SUGGESTION_PREFIX = "[SUGGESTION MODE"


# Scripted replies --------------------------------------------------------------------------------


@attrs.frozen
class Block:
    """One content block of a reply, streamed as start, deltas, stop."""

    start: dict[str, JSON]
    deltas: tuple[dict[str, JSON], ...]


def text(*chunks: str) -> Block:
    """A text block; each chunk is one `text_delta`."""
    return Block({"type": "text", "text": ""}, tuple({"type": "text_delta", "text": c} for c in chunks))


def thinking(*chunks: str, signature: str = "c2lnbmF0dXJl") -> Block:
    """A thinking block: `thinking_delta`s, then its `signature_delta`."""
    deltas = tuple({"type": "thinking_delta", "thinking": c} for c in chunks)
    return Block({"type": "thinking", "thinking": "", "signature": ""}, (*deltas, {"type": "signature_delta", "signature": signature}))


_tool_ids = itertools.count(1)


def tool_use(name: str, input: dict[str, JSON], *, id: str | None = None) -> Block:
    """A tool_use block whose input arrives as two `input_json_delta`s (as the real API splits it)."""
    raw = json.dumps(input)
    half = len(raw) // 2
    start = {"type": "tool_use", "id": id or f"toolu_fake{next(_tool_ids):04d}", "name": name, "input": {}}
    return Block(start, ({"type": "input_json_delta", "partial_json": raw[:half]}, {"type": "input_json_delta", "partial_json": raw[half:]}))


@attrs.frozen
class Reply(fake_http.Reply):
    """A reply of content blocks (`parts`)."""

    @property
    def blocks(self) -> tuple[Block, ...]:
        return self.parts

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(b.start["type"] == "tool_use" for b in self.blocks) else "end_turn"

    def call_ids(self) -> list[str]:
        return [b.start["id"] for b in self.blocks if b.start["type"] == "tool_use"]


# A scripted model reply: `reply(*parts, answers=..., stall_after=..., paced=..., usage=...)` (see `fake_http.Reply`).
reply = Reply.of


# Recorded requests -------------------------------------------------------------------------------


@attrs.define
class Request(fake_http.Request):
    @property
    def messages(self) -> list[dict[str, JSON]]:
        return (self.body or {}).get("messages", []) if isinstance(self.body, dict) else []

    def blocks(self, role: str | None = None) -> Iterator[dict[str, JSON]]:
        """Every content block of every message (strings as text blocks), in order."""
        for message in self.messages:
            if role is not None and message["role"] != role:
                continue
            content = message["content"]
            yield from ([{"type": "text", "text": content}] if isinstance(content, str) else content)

    def user_texts(self) -> list[str]:
        """The text of every user text block, system reminders left out."""
        return [b["text"] for b in self.blocks("user") if b.get("type") == "text" and not b["text"].startswith("<system-reminder>")]

    def assistant_texts(self) -> list[str]:
        return [b["text"] for b in self.blocks("assistant") if b.get("type") == "text"]

    def images(self) -> list[tuple[str, str]]:
        """(media type, base64 data) of every image the user's messages carry."""
        return [(b["source"]["media_type"], b["source"]["data"]) for b in self.blocks("user") if b.get("type") == "image" and b["source"].get("type") == "base64"]

    def tool_uses(self) -> list[dict[str, JSON]]:
        return [b for b in self.blocks("assistant") if b.get("type") == "tool_use"]

    def tool_results(self) -> list[dict[str, JSON]]:
        return [b for b in self.blocks("user") if b.get("type") == "tool_result"]

    def tool_outputs(self) -> list[dict[str, JSON]]:
        """What the tools gave back, as the model was sent it: `call_id`, `text`, `is_error`."""
        outputs = []
        for result in self.tool_results():
            content = result.get("content")
            said = content if isinstance(content, str) else "".join(c.get("text", "") for c in content or [] if isinstance(c, dict))
            outputs.append({"call_id": result["tool_use_id"], "text": said, "is_error": bool(result.get("is_error"))})
        return outputs


def is_main_conversation(body: JSON) -> bool:
    """The agent's own turn, not a side call: it offers tools, and it is not a suggestion request."""
    if not isinstance(body, dict) or not body.get("tools"):
        return False  # titles and other one-shot calls offer no tools
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    first = content if isinstance(content, str) else next((b.get("text", "") for b in content or [] if b.get("type") == "text"), "")
    return not first.startswith(SUGGESTION_PREFIX)


# The server --------------------------------------------------------------------------------------


class FakeAnthropic(fake_http.FakeServer):
    request_class = Request

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)

    async def _respond(self, stream: trio.SocketStream, request: Request, raw: bytes) -> None:
        method, body = request.method, request.body
        route = request.path.split("?", 1)[0]
        if method == "POST" and route == "/v1/messages" and isinstance(body, dict):
            request.main = is_main_conversation(body)
            if request.main:
                request.reply = self._take(request)
            chosen = request.reply or self._side_reply(body, stub=request.main)
            if body.get("stream"):
                await self._stream(stream, request, chosen)
            else:
                await self._json(stream, 200, self._message(chosen, body))
                request.finished = True
        elif method == "POST" and route == "/v1/messages/count_tokens":
            await self._json(stream, 200, {"input_tokens": max(1, len(raw) // 4)})
            request.finished = True
        elif method == "GET" and route == "/v1/models":
            model = {"type": "model", "id": "claude-fake-1", "display_name": "Fake", "created_at": "2026-01-01T00:00:00Z"}
            await self._json(stream, 200, {"data": [model], "has_more": False, "first_id": model["id"], "last_id": model["id"]})
            request.finished = True
        else:
            error = {"type": "error", "error": {"type": "not_found_error", "message": f"{method} {route} is not faked"}}
            await self._json(stream, 404, error)
            request.finished = True

    @staticmethod
    def _side_reply(body: dict[str, JSON], *, stub: bool) -> Reply:
        """A sensible answer to a call the test did not script: JSON for a schema, else a short text."""
        if stub:
            return reply(text("(unscripted)"))
        schema = ((body.get("output_config") or {}).get("format") or {}).get("schema") or {}
        if schema.get("type") == "object":
            value = {name: "Fake title" for name in schema.get("properties", {})}
            return reply(text(json.dumps(value)))
        return reply(text(""))

    def _message(self, chosen: Reply, body: dict[str, JSON]) -> dict[str, JSON]:
        content = []
        for block in chosen.blocks:
            item = dict(block.start)
            for delta in block.deltas:
                kind = delta["type"]
                if kind == "text_delta":
                    item["text"] += delta["text"]
                elif kind == "thinking_delta":
                    item["thinking"] += delta["thinking"]
                elif kind == "signature_delta":
                    item["signature"] = delta["signature"]
            if item["type"] == "tool_use":
                item["input"] = json.loads("".join(d["partial_json"] for d in block.deltas))
            content.append(item)
        return {
            "id": f"msg_fake{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake-1"),
            "content": content,
            "stop_reason": chosen.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": chosen.usage[0], "output_tokens": chosen.usage[1]},
        }

    async def _stream(self, stream: trio.SocketStream, request: Request, chosen: Reply) -> None:
        body = request.body
        message = self._message(reply(), body) | {"content": [], "stop_reason": None, "usage": {"input_tokens": chosen.usage[0], "output_tokens": 1}}
        events = [fake_http.Event("message_start", {"type": "message_start", "message": message})]
        for index, block in enumerate(chosen.blocks):
            events.append(fake_http.Event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block.start}))
            events.extend(fake_http.Event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}, delta=True) for d in block.deltas)
            events.append(fake_http.Event("content_block_stop", {"type": "content_block_stop", "index": index}))
        usage = {"input_tokens": chosen.usage[0], "output_tokens": chosen.usage[1]}
        events.append(fake_http.Event("message_delta", {"type": "message_delta", "delta": {"stop_reason": chosen.stop_reason, "stop_sequence": None}, "usage": usage}))
        events.append(fake_http.Event("message_stop", {"type": "message_stop"}))
        await self._send_events(stream, request, chosen, events)


__all__ = ["FakeAnthropic", "Reply", "Request", "is_main_conversation", "reply", "text", "thinking", "tool_use"]
