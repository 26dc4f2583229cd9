"""A scripted Gemini API (generativelanguage, `v1beta`) on 127.0.0.1, for Gemini CLI offline.

Gemini CLI is pointed at it with `GOOGLE_GEMINI_BASE_URL` and a `GEMINI_API_KEY` in its environment.
Its *main conversation* is `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` offering its
tools (`functionDeclarations`): each takes the next scripted `Reply`, streamed as data-only SSE events
of `GenerateContentResponse` chunks (one per delta; the last with `finishReason` and `usageMetadata`).
Its side calls (a non-streamed `generateContent` for a routing or next-speaker check, `countTokens`,
a stream without tools) never consume the script: a JSON schema gets an object of its fields, a plain
call a short text. Every request is recorded (see tests/support/fake_http.py).

    api.script(reply(text("Hello ", "there.")), reply(function_call("run_shell_command", {"command": "ls"})))
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import attrs
import trio

from tests.support import fake_http

JSON = Any


@attrs.frozen
class Part:
    """One part of a reply, streamed as one or more chunks (each chunk one delta)."""

    chunks: tuple[dict[str, JSON], ...]


def text(*chunks: str) -> Part:
    return Part(tuple({"text": c} for c in chunks))


def thinking(*chunks: str) -> Part:
    return Part(tuple({"text": c, "thought": True} for c in chunks))


_ids = itertools.count(1)


def function_call(name: str, args: dict[str, JSON]) -> Part:
    """A function call, whole in one chunk (as the API sends it)."""
    return Part(({"functionCall": {"name": name, "args": args, "id": f"call_fake{next(_ids):04d}"}},))


@attrs.frozen
class Reply(fake_http.Reply):
    def call_ids(self) -> list[str]:
        return [c["functionCall"]["id"] for p in self.parts for c in p.chunks if "functionCall" in c]


reply = Reply.of


@attrs.define
class Request(fake_http.Request):
    @property
    def contents(self) -> list[dict[str, JSON]]:
        return (self.body or {}).get("contents", []) if isinstance(self.body, dict) else []

    def _texts(self, role: str) -> list[str]:
        return [p["text"] for c in self.contents if c.get("role") == role for p in c.get("parts") or [] if "text" in p and not p.get("thought")]

    def user_texts(self) -> list[str]:
        """The user's texts, Gemini CLI's own context (its <session_context> and the like) left out."""
        return [t for t in self._texts("user") if not t.lstrip().startswith("<")]

    def assistant_texts(self) -> list[str]:
        return self._texts("model")

    def images(self) -> list[tuple[str, str]]:
        """(media type, base64 data) of every image the user's messages carry (`inlineData`)."""
        return [
            (p["inlineData"].get("mimeType"), p["inlineData"].get("data"))
            for c in self.contents
            if c.get("role") == "user"
            for p in c.get("parts") or []
            if isinstance(p.get("inlineData"), dict)
        ]

    def tool_names(self) -> list[str]:
        """The names of the functions the request offers the model (`tools[].functionDeclarations`)."""
        tools = (self.body or {}).get("tools", []) if isinstance(self.body, dict) else []
        return [d.get("name") for t in tools if isinstance(t, dict) for d in t.get("functionDeclarations") or [] if isinstance(d, dict)]

    def function_calls(self) -> list[dict[str, JSON]]:
        """The model's earlier function calls the request carries (`name`, `args`)."""
        return [p["functionCall"] for c in self.contents if c.get("role") == "model" for p in c.get("parts") or [] if "functionCall" in p]

    def tool_outputs(self) -> list[dict[str, JSON]]:
        found = []
        for content in self.contents:
            for part in content.get("parts") or []:
                response = part.get("functionResponse")
                if response:
                    found.append({"call_id": response.get("id"), "text": json.dumps(response.get("response"))})
        return found


class FakeGemini(fake_http.FakeServer):
    request_class = Request

    async def _respond(self, stream: trio.SocketStream, request: Request, raw: bytes) -> None:
        route = request.path.split("?", 1)[0]
        body = request.body if isinstance(request.body, dict) else {}
        model = route.rsplit("/", 1)[-1].split(":", 1)[0]
        if request.method == "POST" and route.endswith(":streamGenerateContent"):
            request.main = bool(body.get("tools")) and not _schema(body)
            if request.main:
                request.reply = self._take(request)
            chosen = request.reply or self._side_reply(body, stub=request.main)
            await self._stream(stream, request, chosen, model)
        elif request.method == "POST" and route.endswith(":generateContent"):
            chosen = self._side_reply(body, stub=False)
            await self._json(stream, 200, self._chunk_of([c for p in chosen.parts for c in p.chunks], model, "STOP", chosen.usage))
            request.finished = True
        elif request.method == "POST" and route.endswith(":countTokens"):
            await self._json(stream, 200, {"totalTokens": max(1, len(raw) // 4)})
            request.finished = True
        else:
            await self._json(stream, 404, {"error": {"code": 404, "message": f"{request.method} {route} is not faked", "status": "NOT_FOUND"}})
            request.finished = True

    @staticmethod
    def _side_reply(body: dict[str, JSON], *, stub: bool) -> Reply:
        if stub:
            return reply(text("(unscripted)"))
        schema = _schema(body)
        if schema and schema.get("type", "").lower() == "object":
            value = {}
            for name, spec in (schema.get("properties") or {}).items():
                kind = str((spec or {}).get("type", "string")).lower()
                enum = (spec or {}).get("enum")
                value[name] = enum[0] if enum else {"boolean": False, "number": 0, "integer": 0, "array": [], "object": {}}.get(kind, "")
            return reply(text(json.dumps(value)))
        return reply(text(""))

    @staticmethod
    def _chunk_of(parts: list[dict[str, JSON]], model: str, finish: str | None, usage: tuple[int, int] | None) -> dict[str, JSON]:
        candidate: dict[str, JSON] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        chunk: dict[str, JSON] = {"candidates": [candidate], "modelVersion": model, "responseId": "fake"}
        if usage:
            chunk["usageMetadata"] = {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1], "totalTokenCount": sum(usage)}
        return chunk

    async def _stream(self, stream: trio.SocketStream, request: Request, chosen: Reply, model: str) -> None:
        chunks = [c for p in chosen.parts for c in p.chunks] or [{"text": ""}]
        events = [fake_http.Event("", self._chunk_of([c], model, None, None), delta=True) for c in chunks[:-1]]
        events.append(fake_http.Event("", self._chunk_of([chunks[-1]], model, "STOP", chosen.usage), delta=True))
        await self._send_events(stream, request, chosen, events)


def _schema(body: dict[str, JSON]) -> dict[str, JSON] | None:
    config = body.get("generationConfig") or {}
    return config.get("responseJsonSchema") or config.get("responseSchema")


__all__ = ["FakeGemini", "Reply", "Request", "function_call", "reply", "text", "thinking"]
