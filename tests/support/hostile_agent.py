"""An ACP agent that attacks the backend on command: the agent side of the hostile-agent wire tests.

    python tests/support/hostile_agent.py [FLAG ...]

Standard library only, raw line I/O, so it can do what no well-behaved ACP library would: floods,
silence, stray answers, descendants, descriptor exhaustion. Two ways to steer it:

- start-up flags (`FLAGS`): how it answers the backend's own requests (`initialize`, `session/new`,
  ...), e.g. never at all;
- prompts: the first word of a prompt's text names a command in `COMMANDS`, the rest is its
  argument; anything else is echoed ("echo: ...") and the turn ends normally.

Each behaviour family adds its own entries to `FLAGS` and `COMMANDS`; see docs/DESIGN.md,
"Reliability", for what the backend promises against each.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

Send = Callable[[dict[str, Any]], None]


def write(data: bytes) -> None:
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def send(msg: dict[str, Any]) -> None:
    write(json.dumps({"jsonrpc": "2.0", **msg}).encode())


def say(session: str, text: str) -> None:
    update: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    if STAMPED:
        update["messageId"] = f"msg-{uuid.uuid4().hex}"
    send({"method": "session/update", "params": {"sessionId": session, "update": update}})


def end_turn(id: Any) -> None:
    send({"id": id, "result": {"stopReason": "end_turn"}})


def echo(id: Any, session: str, argument: str) -> None:
    say(session, f"{session} echo: {argument}" if STAMPED else f"echo: {argument}")
    end_turn(id)


# Floods (bounded memory, backpressure: docs/DESIGN.md, "Reliability") -------------------------

FLOOD_CHUNK = 16 * 1024  # characters of text per agent_message_chunk a flood writes


def flood_text(size: int, chunk: int = FLOOD_CHUNK) -> list[str]:
    """The chunks of a flood of `size` characters: each starts `<i>`, so what arrives can be
    checked for loss and order however it was merged or split."""
    chunks, i, left = [], 0, size
    while left > 0:
        head = f"<{i}>"
        text = (head + "x" * max(0, chunk - len(head)))[:left]
        chunks.append(text)
        left -= len(text)
        i += 1
    return chunks


def flood(id: Any, session: str, argument: str) -> None:
    """`flood SIZE [CHUNK]`: SIZE characters of text in CHUNK-character chunks, then the end."""
    words = argument.split()
    for text in flood_text(int(words[0]), int(words[1]) if len(words) > 1 else FLOOD_CHUNK):
        say(session, text)
    end_turn(id)


def huge(id: Any, session: str, argument: str) -> None:
    """`huge SIZE`: one chunk of SIZE characters, on one line, then the end."""
    say(session, "h" * int(argument))
    end_turn(id)


def after(id: Any, session: str, argument: str) -> None:
    """`after SIZE FIFO`: end the turn ("before"), then SIZE characters more about it, while the
    chat is idle; once the backend has read all of it (it answered a request written after
    it), say "done" on the named pipe FIFO, for the test to go on."""
    size, fifo = argument.split()
    say(session, "before")
    end_turn(id)
    for text in flood_text(int(size)):
        say(session, text.replace("x", "s"))
    probe = "after-probe"
    send({"id": probe, "method": "fs/read_text_file", "params": {"sessionId": session, "path": "/nonexistent"}})
    for line in sys.stdin:  # the backend answers in order: everything before the probe was read
        if json.loads(line).get("id") == probe:
            break
    with open(fifo, "w") as done:
        done.write("done\n")
# Resource exhaustion: no agent can starve another ---------------------------------

# session id -> how its relay reaches its conversation's vscode_tools bridge (`--socket`/`--port`,
# `--key`), from `session/new`.
BRIDGES: dict[str, dict[str, str]] = {}
HELD: list[socket.socket] = []  # connections kept open for the agent's lifetime


def connect_flood(id: Any, session: str, argument: str) -> None:
    """Open up to N connections to our own bridge with our own token and keep them; report how
    many the backend serves (it answers MCP `initialize`) and how many it closes."""
    from symposium.mcp_relay import RelayError, open_bridge

    options = BRIDGES[session]
    served = closed = 0
    for n in range(int(argument or "2000")):
        try:
            sock = open_bridge(options)  # connected, the key said, as the relay does
        except RelayError:  # our own descriptors ran out
            break
        request = {"jsonrpc": "2.0", "id": n, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "0"}}}
        try:
            sock.sendall(json.dumps(request).encode() + b"\n")
            answered = sock.makefile("rb").readline()
        except OSError:  # closed by the backend before (or while) we said it
            answered = b""
        if answered:
            served += 1
            HELD.append(sock)
        else:
            closed += 1
            sock.close()
    say(session, f"served {served} closed {closed}")
    end_turn(id)


def stderr_flood(id: Any, session: str, argument: str) -> None:
    """Write N stderr lines (each naming our secret env value, `api_key=` style; N=0: endlessly), end with a
    last line saying how many, then exit: the turn fails with the stderr tail."""
    import os

    secret = os.environ.get("HOSTILE_SECRET", "")
    line = f"working... api_key={secret} token {secret}\n".encode()
    n = int(argument or "100000")  # 0: until stderr closes (the bench's flood)
    try:
        while n == 0:
            sys.stderr.buffer.write(line * 1000)
    except (BrokenPipeError, OSError):
        os._exit(0)
    for _ in range(n // 1000):
        sys.stderr.buffer.write(line * 1000)
    sys.stderr.buffer.write(f"wrote {n} lines; giving up {secret}\n".encode())
    sys.stderr.buffer.flush()
    os._exit(3)


# Prompt commands: name -> handler(request id, session id, argument). A handler answers the prompt
# itself (or deliberately never does).
COMMANDS: dict[str, Callable[[Any, str, str], None]] = {
    "echo": echo,
    # floods
    "flood": flood,
    "huge": huge,
    "after": after,
    "connect_flood": connect_flood,
    "stderr_flood": stderr_flood,
}

# Start-up flags: flag -> the methods it leaves unanswered (the backend's deadlines are tested
# with these). Families add their own.
SILENT_ON: dict[str, frozenset[str]] = {}


# -- Family: deadlines, exits, shared sessions, descendants (tests/wire/test_deadlines.py) ----------
#
# Flags: silent-initialize, silent-new, silent-list, silent-load, silent-config leave that request unanswered (and
# write its method and its pid, a line, to the file $HOSTILE_NOTE if set, so a test knows it is stuck there);
# "sessions" offers session/list (one session, "old-session") and session/load; "options" offers
# a model option (session/set_config_option); "stubborn" ignores SIGTERM and the end of its
# input (only SIGKILL ends it). Commands: "orphan FILE" starts a descendant that
# leaves the process group (setsid), writes its pid to FILE, and answers; "die" starts a child
# that keeps the agent's stdout open, then exits without answering. "refuse-list" answers session/list
# with an error.

SILENT_ON.update(
    {
        "silent-initialize": frozenset({"initialize"}),
        "silent-new": frozenset({"session/new"}),
        "silent-list": frozenset({"session/list"}),
        "silent-load": frozenset({"session/load"}),
        "silent-config": frozenset({"session/set_config_option"}),
    }
)
REFUSED_ON: dict[str, frozenset[str]] = {"refuse-list": frozenset({"session/list"})}
OLD_SESSION = "old-session"
MODEL_OPTION = {
    "id": "model",
    "name": "Model",
    "category": "model",
    "type": "select",
    "currentValue": "slow",
    "options": [{"value": "slow", "name": "Slow"}, {"value": "fast", "name": "Fast"}],
}
_FOREVER = "import time\nwhile True: time.sleep(3600)"


def note_silence(method: str) -> None:
    path = os.environ.get("HOSTILE_NOTE")
    if path:
        with open(path, "a") as note:
            note.write(f"{method} {os.getpid()}\n")


def orphan(id: Any, session: str, argument: str) -> None:
    child = subprocess.Popen([sys.executable, "-c", _FOREVER], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(argument, "w") as out:
        out.write(str(child.pid))
    echo(id, session, f"orphan {child.pid}")


def die(id: Any, session: str, argument: str) -> None:
    subprocess.Popen([sys.executable, "-c", _FOREVER], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # stdout: ours
    os._exit(3)


COMMANDS.update({"orphan": orphan, "die": die})


def capabilities(flags: list[str]) -> dict[str, Any]:
    if "sessions" in flags:
        return {"loadSession": True, "sessionCapabilities": {"list": {}}}
    if "folders" in flags:  # the workspace's other folders in session/new (tests/wire/test_confined_writes.py)
        return {"sessionCapabilities": {"additionalDirectories": {}}}
    return {}


FOLDERS: dict[str, list[str]] = {}  # session id -> the `additionalDirectories` its session/new gave


def folders(id: Any, session: str, argument: str) -> None:
    """`folders`: says the session's additional directories, one a line."""
    say(session, "\n".join(FOLDERS.get(session, [])) or "none")
    end_turn(id)


def new_session_answer(flags: list[str]) -> dict[str, Any]:
    return {"configOptions": [MODEL_OPTION]} if "options" in flags else {}


def answer_sessions(method: str, id: Any, params: dict[str, Any]) -> bool:
    """session/list and session/load, for the "sessions" flag; False for any other method."""
    if method == "session/list":
        send({"id": id, "result": {"sessions": [{"sessionId": OLD_SESSION, "cwd": params.get("cwd") or os.getcwd(), "title": "earlier"}]}})
    elif method == "session/load":
        send({"id": id, "result": {}})
    elif method == "session/set_config_option":
        send({"id": id, "result": {"configOptions": [{**MODEL_OPTION, "currentValue": params.get("value")}]}})
    else:
        return False
    return True


def stubborn(flags: list[str]) -> None:
    if "stubborn" in flags:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def outlive_input(flags: list[str]) -> None:
    if "stubborn" in flags:
        while True:
            time.sleep(3600)


# -- End of family: deadlines, exits, shared sessions, descendants --------------------------------


# -- Family: unbounded metadata (tests/wire/test_metadata.py) -------------------------------------------
#
# Flag "metadata": everything the agent names is hostile. `initialize` offers session/list (and
# resume) and sign-in methods with such names; `session/new` offers MANY_MODELS models (and modes)
# named with HOSTILE (the first in full, the others its first 200 characters), two with ids that
# would need cleaning; `session/list` lists sessions titled with it, one with an id that would.
# Command "titled": a tool call and a permission request titled with it.

HOSTILE = "\u202eevil\u202c \x1b[31mred\x1b[0m\r\nnext line\u2066 \u200bhidden\U000e0041 " + "x" * 10_000
MANY_MODELS = 20_000


def metadata_capabilities(flags: list[str]) -> dict[str, Any]:
    return {"sessionCapabilities": {"list": {}, "resume": {}}} if "metadata" in flags else {}


def metadata_initialize(flags: list[str]) -> dict[str, Any]:
    if "metadata" not in flags:
        return {}
    return {
        "agentInfo": {"name": HOSTILE, "title": HOSTILE, "version": "1.0\u202e"},
        "authMethods": [{"id": "login", "name": HOSTILE, "description": HOSTILE}, {"id": "bad\u202eid", "name": "x"}],
    }


def metadata_new_session(flags: list[str]) -> dict[str, Any]:
    if "metadata" not in flags:
        return {}
    models = [{"modelId": f"model-{i}", "name": f"{HOSTILE[:200]} {i}", "description": f"\u202eModel\x1b[0m {i}"} for i in range(MANY_MODELS)]
    models[0]["name"] = models[0]["description"] = HOSTILE
    models[:0] = [{"modelId": "spoof\u202egpj.exe", "name": "spoofed id"}, {"modelId": "y" * 10_000, "name": "long id"}]
    modes = [{"id": "default", "name": HOSTILE}, {"id": "plan", "name": "\x07Plan\x1b[2J"}]
    return {
        "models": {"availableModels": models, "currentModelId": "model-0"},
        "modes": {"availableModes": modes, "currentModeId": "default"},
        "configOptions": [{"id": "effort", "name": HOSTILE, "category": "thought_level", "type": "select", "currentValue": "low", "options": [{"value": "low", "name": HOSTILE}]}],
    }


def metadata_answer(flags: list[str], method: str, id: Any, params: dict[str, Any]) -> bool:
    """session/list for the "metadata" flag; False for anything else."""
    if "metadata" not in flags or method != "session/list":
        return False
    cwd = params.get("cwd") or "/"
    sessions = [{"sessionId": f"s-{i}", "cwd": cwd, "title": f"{HOSTILE} {i}", "updatedAt": "2026-11-25T10:00:00Z\u202e"} for i in range(3)]
    sessions.append({"sessionId": "s\u202eX", "cwd": cwd, "title": "spoofed id"})
    send({"id": id, "result": {"sessions": sessions}})
    return True


def titled(id: Any, session: str, argument: str) -> None:
    """A tool call that runs and ends, then asks permission for another, each titled (and kinded)
    with HOSTILE; the turn ends when the permission is answered (or the input ends)."""

    def update(call: dict[str, Any]) -> None:
        send({"method": "session/update", "params": {"sessionId": session, "update": call}})

    update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": HOSTILE, "kind": "read", "status": "pending"})
    update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": HOSTILE, "status": "completed"})
    call = {"toolCallId": "t2", "title": HOSTILE, "kind": HOSTILE, "rawInput": {"command": "ls"}}
    send({"id": "ask-1", "method": "session/request_permission", "params": {"sessionId": session, "toolCall": call, "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}, {"optionId": "reject", "name": "Reject", "kind": "reject_once"}]}})
    for line in sys.stdin:
        if json.loads(line).get("id") == "ask-1":
            break
    end_turn(id)


COMMANDS.update({"titled": titled})


# -- End of family: unbounded metadata ---------------------------------------------------------------


# -- Family: odd fields (tests/wire/test_odd_fields.py) ----------------------------------------------
#
# Flag "odd=MESSAGE:PATH:JSON": in the agent's answer to MESSAGE (`initialize`, `session/new`,
# `session/prompt`) or in the updates it sends (`update`: every `session/update` of a prompt), the field
# at PATH (dot-separated; created as needed) is replaced by the JSON value, e.g.
# `odd=initialize:agentCapabilities.promptCapabilities:null`. Command "busy": a turn with a message
# chunk, a thought, a tool call and its update, a plan and a usage update (so every update kind the
# backend reads can be made odd), then the end.


def odd_fields(flags: list[str]) -> list[tuple[str, list[str], Any]]:
    found = []
    for flag in flags:
        if flag.startswith("odd="):
            message, path, value = flag[len("odd="):].split(":", 2)
            found.append((message, path.split("."), json.loads(value)))
    return found


ODD: list[tuple[str, list[str], Any]] = []


def made_odd(message: str, answer: dict[str, Any]) -> dict[str, Any]:
    for target, path, value in ODD:
        if target != message:
            continue
        node = answer
        for key in path[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        node[path[-1]] = value
    return answer


def busy(id: Any, session: str, argument: str) -> None:
    def update(body: dict[str, Any]) -> None:
        send({"method": "session/update", "params": {"sessionId": session, "update": made_odd("update", body)}})

    update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "thinking"}})
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "busy"}})
    update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read", "kind": "read", "status": "pending", "locations": [{"path": "/tmp/x"}], "rawInput": {"path": "/tmp/x"}})
    update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "done"}}]})
    update({"sessionUpdate": "plan", "entries": [{"content": "a step", "priority": "high", "status": "pending"}]})
    update({"sessionUpdate": "usage_update", "used": 10, "size": 1000})
    update({"sessionUpdate": "current_mode_update", "currentModeId": "default"})
    update({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "x", "description": "y"}]})
    update({"sessionUpdate": "session_info_update", "title": "a title"})
    send({"id": id, "result": made_odd("session/prompt", {"stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}})})


COMMANDS.update({"busy": busy})


# -- End of family: odd fields -----------------------------------------------------------------------


# -- Family: writes through the client (tests/wire/test_confined_writes.py) ----------------------------
#
# Command "write PATH [PATH ...]": an `fs/write_text_file` of "written by the agent" to each PATH, all
# sent at once; the turn says, per path in order, "ok" or "refused: MESSAGE", then ends. A path
# "@fifo:N:DIR" stands for N FIFOs made in DIR (written to all at once as well).


def write_files(id: Any, session: str, argument: str) -> None:
    paths: list[str] = []
    for word in argument.split():
        if word.startswith("@fifo:"):
            _, count, folder = word.split(":", 2)
            for i in range(int(count)):
                fifo = os.path.join(folder, f"fifo-{i}")
                if not os.path.exists(fifo):
                    os.mkfifo(fifo)
                paths.append(fifo)
        else:
            paths.append(word)
    for i, path in enumerate(paths):
        send({"id": f"w-{i}", "method": "fs/write_text_file", "params": {"sessionId": session, "path": path, "content": "written by the agent\n"}})
    answers: dict[str, str] = {}
    for line in sys.stdin:
        msg = json.loads(line)
        if isinstance(msg.get("id"), str) and msg["id"].startswith("w-") and "method" not in msg:
            error = msg.get("error")
            answers[msg["id"]] = "ok" if error is None else f"refused: {error.get('message')}"
            if len(answers) == len(paths):
                break
    say(session, "\n".join(answers.get(f"w-{i}", "no answer") for i in range(len(paths))))
    end_turn(id)


COMMANDS.update({"write": write_files, "folders": folders})


# Requests between prompts (docs/DESIGN.md, "The turn machine") -----------------------------------
# `asks-after PATH FIFO`: end the turn ("before"), then, with no prompt running, write PATH through the
# client, ask the user a question and ask a permission, all at once; once each is answered, write on
# the named pipe FIFO, as one JSON object, what each got ("error: MESSAGE", or the result).


def asks_after(id: Any, session: str, argument: str) -> None:
    path, fifo = argument.split()
    say(session, "before")
    end_turn(id)
    question = {"mode": "form", "message": "Which colour?", "requestedSchema": {"type": "object", "properties": {"colour": {"type": "string", "enum": ["red", "blue"]}}}}
    permission = {"toolCall": {"toolCallId": "t-after", "title": "Run rm -rf build", "kind": "execute"}, "options": [{"optionId": "yes", "kind": "allow_once", "name": "Yes"}, {"optionId": "no", "kind": "reject_once", "name": "No"}]}
    asked = {
        "a-write": ("fs/write_text_file", {"path": path, "content": "written between prompts\n"}),
        "a-question": ("elicitation/create", question),
        "a-permission": ("session/request_permission", permission),
    }
    for ask_id, (method, params) in asked.items():
        send({"id": ask_id, "method": method, "params": {"sessionId": session, **params}})
    answers: dict[str, Any] = {}
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("id") in asked and "method" not in msg:
            error = msg.get("error")
            answers[asked[msg["id"]][0]] = f"error: {error.get('message')}" if error is not None else msg.get("result")
            if len(answers) == len(asked):
                break
    with open(fifo, "w") as done:
        done.write(json.dumps(answers) + "\n")


COMMANDS.update({"asks-after": asks_after})


# -- Family: session openings (tests/wire/test_warm.py) -----------------------------------------------
#
# Flag: "fork-points" stamps a `messageId` on each message (so each ended turn leaves a fork point,
# docs/DESIGN.md, "Forks"; it declares no session/fork all the same), numbers its sessions
# "session-1", "session-2", ... in the order it makes them, and echoes with its session's first.

STAMPED: list[str] = []  # non-empty: "fork-points"
MADE: list[str] = []  # the sessions made, numbered


def session_id(flags: list[str]) -> str:
    if "fork-points" not in flags:
        return str(uuid.uuid4())
    MADE.append(f"session-{len(MADE) + 1}")
    return MADE[-1]


# `swap-write PATH OUTSIDE FIFO`: ask a permission (its card waits), write PATH through the client,
# and once the backend has opened PATH to check the write (inotify: no sleeping), replace PATH's
# folder with a link to the folder OUTSIDE, then say so on the named pipe FIFO; once both are
# answered, say "permission: RESULT" and "write: ok" or "write: refused: MESSAGE", and end the turn.


def _opened(path: str) -> Callable[[], None]:
    """A wait for the next time anyone opens `path` (Linux's inotify, IN_OPEN), set up now."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    watch = libc.inotify_init1(0)
    if watch < 0 or libc.inotify_add_watch(watch, path.encode(), 0x20) < 0:
        raise OSError(ctypes.get_errno(), "inotify")

    def wait() -> None:
        os.read(watch, 4096)
        os.close(watch)

    return wait


def swap_write(id: Any, session: str, argument: str) -> None:
    path, outside, fifo = argument.split()
    folder = os.path.dirname(path)
    opened = _opened(path)
    permission = {"toolCall": {"toolCallId": "t-swap", "title": "Generate the payload", "kind": "edit"}, "options": [{"optionId": "yes", "kind": "allow_once", "name": "Yes"}, {"optionId": "no", "kind": "reject_once", "name": "No"}]}
    send({"id": "sw-permission", "method": "session/request_permission", "params": {"sessionId": session, **permission}})
    send({"id": "sw-write", "method": "fs/write_text_file", "params": {"sessionId": session, "path": path, "content": "written by the agent\n"}})
    opened()  # the backend read the file to check the write
    os.rename(folder, folder + "-old")
    os.symlink(outside, folder)
    with open(fifo, "w") as done:
        done.write("swapped\n")
    answers: dict[str, str] = {}
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("id") in ("sw-permission", "sw-write") and "method" not in msg:
            error = msg.get("error")
            answers[msg["id"]] = json.dumps(msg.get("result")) if error is None and msg["id"] == "sw-permission" else "ok" if error is None else f"refused: {error.get('message')}"
            if len(answers) == 2:
                break
    say(session, f"permission: {answers.get('sw-permission')}\nwrite: {answers.get('sw-write')}")
    end_turn(id)


COMMANDS.update({"swap-write": swap_write})


# -- End of family: writes through the client ----------------------------------------------------


def main() -> None:
    flags = sys.argv[1:]
    ODD.extend(odd_fields(flags))
    silent = frozenset().union(*(SILENT_ON.get(flag, frozenset()) for flag in flags))
    refused = frozenset().union(*(REFUSED_ON.get(flag, frozenset()) for flag in flags))
    stubborn(flags)
    STAMPED.extend(["fork-points"] if "fork-points" in flags else [])
    for line in sys.stdin:
        msg = json.loads(line)
        method, id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method in silent:
            note_silence(method)
            continue
        if method in refused:
            send({"id": id, "error": {"code": -32603, "message": f"{method} is broken today"}})
            continue
        if method == "initialize":
            send({"id": id, "result": made_odd("initialize", {"protocolVersion": 1, "agentCapabilities": {**capabilities(flags), **metadata_capabilities(flags)}, **metadata_initialize(flags)})})
        elif method == "session/new":
            session = session_id(flags)
            for server in params.get("mcpServers") or []:
                if "--key" in server.get("args", []):
                    args = server["args"]
                    BRIDGES[session] = dict(zip(args[-4::2], args[-3::2], strict=False))
            if isinstance(params.get("additionalDirectories"), list):
                FOLDERS[session] = params["additionalDirectories"]
            send({"id": id, "result": made_odd("session/new", {"sessionId": session, **new_session_answer(flags), **metadata_new_session(flags)})})
        elif metadata_answer(flags, method, id, params) or answer_sessions(method, id, params):
            pass
        elif method == "session/prompt":
            text = " ".join(b.get("text", "") for b in params["prompt"]).strip()
            command, _, argument = text.partition(" ")
            handler = COMMANDS.get(command)
            if handler is None:
                echo(id, params["sessionId"], text)
            else:
                handler(id, params["sessionId"], argument)
        elif id is not None and method is not None:
            send({"id": id, "error": {"code": -32601, "message": f"not supported: {method}"}})
    outlive_input(flags)


if __name__ == "__main__":
    main()
