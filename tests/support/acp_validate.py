"""Validate ACP (Agent Client Protocol, protocolVersion 1) JSON-RPC messages with the
pydantic models in ``acp.schema`` (agent-client-protocol==0.12.1, schema-v1.19.0).

Test-time helper only.  Usage:

    pending = {}
    validate("c2a", {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {...}}, pending)
    validate("a2c", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}, pending)

``direction`` is who *sent* the message: "c2a" (client -> agent) or "a2c" (agent -> client)
("client->agent"/"agent->client" also accepted).  ``pending`` is a dict the helper fills in
for requests (key ``(direction, id)`` -> method) and consumes for responses, so the result
can be checked with the right model.  Request ids of the two directions are independent,
hence the direction in the key.  You may also pre-fill ``pending[id] = method`` by hand.

Why more than ``Model.model_validate``: the generated models are *lenient* (extra keys
ignored, many bad optional values silently replaced by a default, invalid list items
silently dropped, "1" -> 1, "yes" -> True).  With ``strict=True`` (default) the validated
model is dumped back (``by_alias, exclude_unset``) and compared with the input; any
difference (ignored key, salvaged value, dropped item, type coercion) is an error.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

from acp import schema as S
from pydantic import BaseModel, TypeAdapter, ValidationError

C2A, A2C = "c2a", "a2c"
_DIR_ALIASES = {"c2a": C2A, "client->agent": C2A, "client_to_agent": C2A,
                "a2c": A2C, "agent->client": A2C, "agent_to_client": A2C}

# method -> (direction of the request/notification, params model, result model or None=notification)
METHODS: dict[str, tuple[str, Any, Any]] = {
    # client -> agent
    "initialize": (C2A, S.InitializeRequest, S.InitializeResponse),
    "authenticate": (C2A, S.AuthenticateRequest, S.AuthenticateResponse),
    "session/new": (C2A, S.NewSessionRequest, S.NewSessionResponse),
    "session/load": (C2A, S.LoadSessionRequest, S.LoadSessionResponse),
    "session/fork": (C2A, S.ForkSessionRequest, S.ForkSessionResponse),
    "session/prompt": (C2A, S.PromptRequest, S.PromptResponse),
    "session/set_mode": (C2A, S.SetSessionModeRequest, S.SetSessionModeResponse),
    "session/cancel": (C2A, S.CancelNotification, None),
    "session/close": (C2A, S.CloseSessionRequest, S.CloseSessionResponse),
    # agent -> client
    "session/update": (A2C, S.SessionNotification, None),
    "session/request_permission": (A2C, S.RequestPermissionRequest, S.RequestPermissionResponse),
    "fs/read_text_file": (A2C, S.ReadTextFileRequest, S.ReadTextFileResponse),
    "fs/write_text_file": (A2C, S.WriteTextFileRequest, S.WriteTextFileResponse),
    "terminal/create": (A2C, S.CreateTerminalRequest, S.CreateTerminalResponse),
    "terminal/output": (A2C, S.TerminalOutputRequest, S.TerminalOutputResponse),
    "terminal/wait_for_exit": (A2C, S.WaitForTerminalExitRequest, S.WaitForTerminalExitResponse),
    "terminal/kill": (A2C, S.KillTerminalRequest, S.KillTerminalResponse),
    "terminal/release": (A2C, S.ReleaseTerminalRequest, S.ReleaseTerminalResponse),
}
_ENVELOPE_KEYS = {"request": {"jsonrpc", "id", "method", "params"},
                  "notification": {"jsonrpc", "method", "params"},
                  "response": {"jsonrpc", "id", "result"},
                  "error": {"jsonrpc", "id", "error"}}


class AcpValidationError(ValueError):
    """Raised for any schema / envelope problem. ``.problems`` lists them."""

    def __init__(self, where: str, problems: list[str]):
        self.where, self.problems = where, problems
        super().__init__(f"{where}: " + "; ".join(problems))


def _direction(direction: str) -> str:
    try:
        return _DIR_ALIASES[direction.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"direction must be 'c2a' or 'a2c', got {direction!r}") from None


def _pydantic_problems(e: ValidationError) -> list[str]:
    return [f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']} "
            f"(got {err.get('input')!r:.80})" for err in e.errors()]


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


# Fields of ACP's schema newer than the Python SDK pinned here (agent-client-protocol 0.12.1), read in the
# schema of the TypeScript SDK the agents ship (@agentclientprotocol/sdk 2.4.0, `v1/schema`): the client's
# `session.compaction` capability, and `session/new`'s `additionalDirectories`.
NEWER_THAN_SDK = frozenset({"clientCapabilities.session.compaction", "additionalDirectories"})


def _diff(inp: Any, out: Any, path: str, problems: list[str]) -> None:
    """Compare the raw JSON input with the re-dumped model; report what pydantic changed."""
    if isinstance(inp, dict) and isinstance(out, dict):
        for k, v in inp.items():
            p = f"{path}.{k}" if path else k
            if k not in out and p in NEWER_THAN_SDK:
                continue
            if k not in out:
                problems.append(f"{p}: unknown field, silently ignored by the model")
            else:
                _diff(v, out[k], p, problems)
        for k in out.keys() - inp.keys():
            problems.append(f"{path}.{k}: added by the model (salvaged default)")
    elif isinstance(inp, list) and isinstance(out, list):
        if len(inp) != len(out):
            problems.append(f"{path}: {len(inp) - len(out)} invalid item(s) silently dropped "
                            f"(input has {len(inp)}, model kept {len(out)})")
            return
        for i, (a, b) in enumerate(zip(inp, out, strict=False)):
            _diff(a, b, f"{path}[{i}]", problems)
    elif not _same_scalar(inp, out):
        problems.append(f"{path}: invalid value {inp!r:.80} was coerced/salvaged to {out!r:.80}")


def validate_payload(model: Any, payload: Any, where: str, strict: bool = True) -> Any:
    """``model.model_validate(payload)``; in strict mode also reject anything the model
    silently ignored, dropped or coerced.  Returns the model instance."""
    try:
        obj = model.model_validate(payload)
    except ValidationError as e:
        raise AcpValidationError(where, _pydantic_problems(e)) from None
    if strict:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dumped = obj.model_dump(mode="json", by_alias=True, exclude_unset=True, warnings=False)
        problems: list[str] = []
        _diff(payload, dumped, "", problems)
        problems += _semantic_problems(obj)
        if problems:
            raise AcpValidationError(where, problems)
    return obj


def _semantic_problems(obj: BaseModel) -> list[str]:
    """Rules stated in the schema docs but not enforced by the models."""
    out = []
    if isinstance(obj, (S.NewSessionRequest, S.LoadSessionRequest)) and not obj.cwd.startswith("/"):
        out.append(f"cwd: must be an absolute path, got {obj.cwd!r}")
    if isinstance(obj, (S.ReadTextFileRequest, S.WriteTextFileRequest)) and not obj.path.startswith("/"):
        out.append(f"path: must be an absolute path, got {obj.path!r}")
    if isinstance(obj, S.ReadTextFileRequest) and obj.line is not None and obj.line < 1:
        out.append("line: is 1-based, got 0")
    return out


def validate(direction: str, msg: dict, pending: dict, strict: bool = True) -> Any:
    """Validate one ACP JSON-RPC message.  Returns the params/result model instance
    (or ``S.Error`` for error responses, ``None`` for ``_``-prefixed extension methods).
    Raises ``AcpValidationError`` with a readable message."""
    d = _direction(direction)
    if not isinstance(msg, dict):
        raise AcpValidationError(d, [f"message must be a JSON object, got {type(msg).__name__}"])
    if msg.get("jsonrpc") != "2.0":
        raise AcpValidationError(d, [f"jsonrpc must be \"2.0\", got {msg.get('jsonrpc')!r}"])
    has_id = "id" in msg
    if has_id and (isinstance(msg["id"], bool) or not isinstance(msg["id"], (int, str))):
        raise AcpValidationError(d, [f"id must be an integer or string, got {msg['id']!r}"])

    if "method" in msg:  # request or notification
        method = msg["method"]
        kind = "request" if has_id else "notification"
        where = f"{d} {kind} {method!r}"
        if strict and (extra := msg.keys() - _ENVELOPE_KEYS[kind]):
            raise AcpValidationError(where, [f"unexpected envelope keys {sorted(extra)}"])
        if not isinstance(method, str):
            raise AcpValidationError(where, ["method must be a string"])
        if method.startswith("_"):  # extension method: no schema
            if has_id:
                pending[(d, msg["id"])] = method
            return None
        if method not in METHODS:
            raise AcpValidationError(where, ["unknown ACP method"])
        sender, params_model, result_model = METHODS[method]
        problems = []
        if sender != d:
            problems.append(f"{method} must be sent {sender}, not {d}")
        if (result_model is None) == has_id:
            problems.append(f"{method} must be a {'notification (no id)' if result_model is None else 'request (with id)'}")
        if "params" not in msg:
            problems.append("params missing")
        if problems:
            raise AcpValidationError(where, problems)
        obj = validate_payload(params_model, msg["params"], f"{where} params ({params_model.__name__})", strict)
        if has_id:
            pending[(d, msg["id"])] = method
        return obj

    # response
    if not has_id:
        raise AcpValidationError(d, ["neither a request/notification (method) nor a response (id)"])
    rid = msg["id"]
    req_dir = A2C if d == C2A else C2A
    method = pending.pop((req_dir, rid), None) or pending.pop(rid, None)
    where = f"{d} response id={rid!r} ({method or 'unknown request'})"
    if method is None:
        raise AcpValidationError(where, [f"no pending {req_dir} request with this id"])
    if ("result" in msg) == ("error" in msg):
        raise AcpValidationError(where, ["response must have exactly one of 'result' / 'error'"])
    kind = "error" if "error" in msg else "response"
    if strict and (extra := msg.keys() - _ENVELOPE_KEYS[kind]):
        raise AcpValidationError(where, [f"unexpected envelope keys {sorted(extra)}"])
    if kind == "error":
        return validate_payload(S.Error, msg["error"], f"{where} error (Error)", strict)
    if method.startswith("_"):
        return None
    result_model = METHODS[method][2]
    return validate_payload(result_model, msg["result"], f"{where} result ({result_model.__name__})", strict)


# acp.schema has no standalone ContentBlock type; borrow the discriminated union from PromptRequest.
CONTENT_BLOCK = TypeAdapter(S.PromptRequest.model_fields["prompt"].annotation.__args__[0])
