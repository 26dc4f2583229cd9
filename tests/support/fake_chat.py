"""A scripted OpenAI Chat Completions API on 127.0.0.1: the "OpenAI-compatible" API most agents can be
pointed at (Qwen Code with `OPENAI_BASE_URL`, OpenCode's and others' custom providers).

Its *main conversation* is `POST /v1/chat/completions` offering the agent's `tools` under its own system prompt:
each takes the next scripted `Reply`, streamed as data-only SSE `chat.completion.chunk`s (one per
delta), a last chunk with the `finish_reason`, a usage chunk, then `data: [DONE]`. A call without
tools (a title, a summary) never consumes the script; `GET /v1/models` lists one model. Every request
is recorded (see tests/support/fake_http.py).

    api.script(reply(text("Hello ", "there.")), reply(tool_call("run_shell_command", {"command": "ls"})))
"""

from __future__ import annotations

import itertools
import json
import re
import time
from typing import Any

import attrs
import trio

from tests.support import fake_http

JSON = Any
MODEL = "gpt-fake"
SUGGESTION_PREFIX = "[SUGGESTION MODE"


@attrs.frozen
class Part:
    deltas: tuple[dict[str, JSON], ...]


def text(*chunks: str) -> Part:
    return Part(tuple({"content": c} for c in chunks))


def thinking(*chunks: str) -> Part:
    return Part(tuple({"reasoning_content": c} for c in chunks))


_ids = itertools.count(1)


def tool_call(name: str, arguments: dict[str, JSON], *, call_id: str | None = None) -> Part:
    """A tool call whose arguments arrive as two deltas, as the real API splits them."""
    raw = json.dumps(arguments)
    half = len(raw) // 2
    ident = call_id or f"call_fake{next(_ids):04d}"
    first = {"id": ident, "type": "function", "function": {"name": name, "arguments": raw[:half]}}
    return Part(({"tool_calls": [first]}, {"tool_calls": [{"function": {"arguments": raw[half:]}}]}))


@attrs.frozen
class Reply(fake_http.Reply):
    def call_ids(self) -> list[str]:
        return [d["tool_calls"][0]["id"] for p in self.parts for d in p.deltas if "tool_calls" in d and "id" in d["tool_calls"][0]]


reply = Reply.of


@attrs.define
class Request(fake_http.Request):
    @property
    def messages(self) -> list[dict[str, JSON]]:
        return (self.body or {}).get("messages", []) if isinstance(self.body, dict) else []

    def _texts(self, role: str) -> list[str]:
        found = []
        for message in self.messages:
            if message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                found.append(content)
            elif isinstance(content, list):
                found.extend(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
        return found

    def user_texts(self) -> list[str]:
        """The user's texts, an agent's own context blocks (`<system-reminder>...</system-reminder>`,
        Copilot's `<current_datetime>` around the user's text) left out."""
        texts = (re.sub(r"<([\w-]+)>.*?</\1>", "", t, flags=re.S).strip() for t in self._texts("user"))
        return [t for t in texts if t and not t.startswith("<")]

    def assistant_texts(self) -> list[str]:
        return [t for t in self._texts("assistant") if t]

    def tool_outputs(self) -> list[dict[str, JSON]]:
        return [{"call_id": m.get("tool_call_id"), "text": m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))}
                for m in self.messages if m.get("role") == "tool"]


class FakeChat(fake_http.FakeServer):
    request_class = Request

    def __init__(self) -> None:
        super().__init__()
        self._system: str | None = None  # the main conversation's system prompt (its start)

    async def _respond(self, stream: trio.SocketStream, request: Request, raw: bytes) -> None:
        route = request.path.split("?", 1)[0]
        body = request.body if isinstance(request.body, dict) else {}
        if request.method == "POST" and route.endswith("/chat/completions"):
            request.main = self._is_main(body)
            if request.main:
                request.reply = self._take(request)
            chosen = request.reply or reply(text("(unscripted)" if request.main else "Fake title"))
            if body.get("stream"):
                await self._stream(stream, request, chosen, body.get("model", MODEL))
            else:
                await self._json(stream, 200, self._whole(chosen, body.get("model", MODEL)))
                request.finished = True
        elif request.method == "GET" and route.endswith("/models"):
            await self._json(stream, 200, {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "fake"}]})
            request.finished = True
        else:
            await self._json(stream, 404, {"error": {"message": f"{request.method} {route} is not faked", "type": "invalid_request_error"}})
            request.finished = True

    def _is_main(self, body: dict[str, JSON]) -> bool:
        """The agent's own conversation: it offers tools, under the system prompt of the first request
        that did. Agents also call their model with tools for their own ends (Qwen Code's memory
        manager, its classifier of a pending tool call), each under a system prompt of its own."""
        if not body.get("tools"):
            return False
        messages = body.get("messages") or [{}]
        system = json.dumps(messages[0].get("content"))[:300] if messages[0].get("role") in ("system", "developer") else ""
        last = messages[-1].get("content")
        last_text = last if isinstance(last, str) else next((c.get("text", "") for c in last or [] if isinstance(c, dict)), "")
        if last_text.startswith(SUGGESTION_PREFIX):  # a guess at the user's next message (Qwen Code, as Claude Code)
            return False
        if self._system is None:
            self._system = system
        return system == self._system

    @staticmethod
    def _finish(chosen: Reply) -> str:
        return "tool_calls" if chosen.call_ids() else "stop"

    def _whole(self, chosen: Reply, model: str) -> dict[str, JSON]:
        message: dict[str, JSON] = {"role": "assistant", "content": "".join(d.get("content", "") for p in chosen.parts for d in p.deltas)}
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": self._finish(chosen)}],
                "usage": {"prompt_tokens": chosen.usage[0], "completion_tokens": chosen.usage[1], "total_tokens": sum(chosen.usage)}}

    async def _stream(self, stream: trio.SocketStream, request: Request, chosen: Reply, model: str) -> None:
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
        events = [fake_http.Event("", base | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})]
        index = -1
        for part in chosen.parts:
            for delta in part.deltas:
                if "tool_calls" in delta:
                    call = dict(delta["tool_calls"][0])
                    if "id" in call:
                        index += 1
                    delta = {"tool_calls": [call | {"index": index}]}
                events.append(fake_http.Event("", base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}, delta=True))
        events.append(fake_http.Event("", base | {"choices": [{"index": 0, "delta": {}, "finish_reason": self._finish(chosen)}]}))
        usage = {"prompt_tokens": chosen.usage[0], "completion_tokens": chosen.usage[1], "total_tokens": sum(chosen.usage)}
        events.append(fake_http.Event("", base | {"choices": [], "usage": usage}))
        events.append(fake_http.Event("", "[DONE]"))
        await self._send_events(stream, request, chosen, events)


__all__ = ["FakeChat", "Reply", "Request", "reply", "text", "thinking", "tool_call"]
