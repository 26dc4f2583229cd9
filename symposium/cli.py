"""The `symposium` command line: vscodelm, chat, eliza."""

from __future__ import annotations

import argparse
import ctypes
import gc
import logging
import math
import os
import signal
import sys
from collections.abc import Awaitable, Callable

import trio

from actors.shared.stdio import stdio_stream
from protocol.shared.settings import MAX_CONVERSATIONS, Settings

DEFAULTS = Settings()  # the one place the backend's defaults are written is protocol/shared/settings.py


def default_max_conversations() -> int:
    """256, or a quarter of the soft open-file limit when that is lower.

    A live conversation holds no descriptor of its own, but an agent that keeps its MCP
    connection to `vscode_tools` open costs one socket per live conversation; a quarter of
    the limit leaves the rest for agents' pipes, relays connecting and the backend itself.
    Windows has no such limit (`resource` does not exist there): 256.
    """
    try:
        import resource
    except ImportError:
        return MAX_CONVERSATIONS
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONVERSATIONS
    return max(1, min(MAX_CONVERSATIONS, soft // 4))


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


SIGNAL_GRACE = 10.0  # after SIGTERM/SIGINT, how long the backend may take to answer and stop its agents


async def _until_signalled(main: Callable[[trio.StapledStream[trio.abc.SendStream, trio.abc.ReceiveStream]], Awaitable[None]]) -> None:
    """Serve stdio with `main` until its input ends, or until SIGTERM/SIGINT.

    A signal ends the input, as if it had reached its end: what was read is answered and the
    agents are stopped, as at EOF, within SIGNAL_GRACE. A second signal, or the grace running
    out, cancels `main`, whose cleanup (stopping agents) still runs.
    """
    stream = stdio_stream()
    async with trio.open_nursery() as nursery:

        async def watch() -> None:
            with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for signum in signals:
                    logging.getLogger("symposium").info("received signal %d; shutting down", signum)
                    if nursery.cancel_scope.deadline != math.inf:
                        nursery.cancel_scope.cancel()
                        return
                    nursery.cancel_scope.deadline = trio.current_time() + SIGNAL_GRACE
                    await stream.receive_stream.aclose()  # the reader sees the input end

        nursery.start_soon(watch)
        await main(stream)
        nursery.cancel_scope.cancel()


# An agent streams thousands of small JSON values a second into the backend, each held for a
# moment in a channel between actors. With the default young-generation threshold (700
# allocations) that is collected several times per read, and what waits in the channels is
# promoted until a full collection over every imported module (tens of ms, more than a whole
# flood of chunks takes) lands inside the stream. Fewer, larger young collections; and what
# start-up imported lives as long as the process, so it is frozen out of the collector's way.
GC_THRESHOLDS = (10_000, 10, 10)

# A long conversation's request is read into a few buffers of hundreds of KiB (the line, its
# text, the part compared with the previous request). glibc serves blocks that size by mmap,
# or gives freed ones back to the system at once, so every request paid page faults on fresh
# memory: a fifth of a millisecond at 430 KB, a tenth of the whole turn. Up to 16 MiB of freed
# memory is kept for reuse instead.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
KEPT_FREE = 16 << 20
MMAP_FROM = 4 << 20


def _keep_freed_memory() -> None:
    if not sys.platform.startswith("linux"):  # glibc's; on Windows CDLL(None) raises TypeError
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc: its allocator decides
        return
    mallopt(M_MMAP_THRESHOLD, MMAP_FROM)
    mallopt(M_TRIM_THRESHOLD, KEPT_FREE)


def _vscodelm(args: argparse.Namespace) -> int:
    # Before the backend's modules are imported: defining their classes allocates enough to run
    # dozens of young collections at the default threshold, a tenth of the start-up (`make bench`,
    # "cold start"). What they import is then frozen.
    gc.set_threshold(*GC_THRESHOLDS)
    from actors.store.transcript import Recorder
    from protocol.shared.redact import RedactingFilter, Redactor
    from symposium.vscodelm import serve

    gc.freeze()
    _keep_freed_memory()

    settings = Settings(
        agent_idle=args.agent_idle,
        cancel_timeout=args.cancel_timeout,
        agent_timeout=args.agent_timeout,
        forward_system=args.forward_system,
        max_conversations=args.max_conversations or default_max_conversations(),
        conversation_idle=args.conversation_idle,
    )
    secrets = Redactor()  # what no log line may hold: the agents' env values, added as they start
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter(secrets))
    recorder = Recorder(args.trace_dir) if args.trace_dir else None
    try:
        trio.run(_until_signalled, lambda stream: serve(stream, cwd=os.getcwd(), settings=settings, recorder=recorder, secrets=secrets))
    finally:
        if recorder is not None:
            recorder.close()
    return 0


def _eliza(args: argparse.Namespace) -> int:
    from symposium.eliza.agent import serve_eliza

    trio.run(_until_signalled, lambda stream: serve_eliza(stream, args.deterministic))
    return 0


def _chat(args: argparse.Namespace) -> int:
    from symposium.chat import run_chat

    return run_chat(args)


def _replay(args: argparse.Namespace) -> int:
    from symposium.replay import main

    return main(args.file)


def _at_least(low: float, kind: Callable[[str], float]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value >= low:  # also refuses NaN
            raise argparse.ArgumentTypeError(f"must be at least {low:g}: {text!r}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="symposium", description="ACP agents as VS Code language models.")
    parser.add_argument("--log-level", default=os.environ.get("SYMPOSIUM_LOG", "warning"), help="stderr log level (default: warning)")
    commands = parser.add_subparsers(dest="command", required=True)

    vscodelm = commands.add_parser("vscodelm", help="serve the VS Code extension on stdio (JSON-RPC, one object per line)")
    vscodelm.add_argument("--trace-dir", help="record every message on every channel as JSONL in this folder")
    # Durations, each a Settings field of the same name (actors' defaults).
    for flag, help in (
        ("--agent-idle", "stop agents unused this long (default %(default)g)"),
        ("--cancel-timeout", "wait this long for a cancelled prompt to stop (default %(default)g)"),
        ("--agent-timeout", "fail a turn whose agent does not answer a request other than a prompt (session/new, load, list, set an option) this long (default %(default)g)"),
        ("--conversation-idle", "release conversations unused this long (default %(default)g); a released one comes back on its next request"),
    ):
        default = getattr(DEFAULTS, flag[2:].replace("-", "_"))
        vscodelm.add_argument(flag, type=_at_least(0, float), default=default, metavar="SECONDS", help=help)
    vscodelm.add_argument("--forward-system", action="store_true", help="send VS Code's system messages to the agent")
    vscodelm.add_argument(
        "--max-conversations",
        type=_at_least(1, int),
        metavar="N",
        help=f"release the least recently used conversations beyond N (default {MAX_CONVERSATIONS}, or a quarter of the open-file limit if lower)",
    )
    vscodelm.set_defaults(run=_vscodelm)

    eliza = commands.add_parser("eliza", help="serve the built-in Eliza as an ACP agent on stdio")
    eliza.add_argument("--deterministic", action="store_true", help="reproducible replies")
    eliza.set_defaults(run=_eliza)

    replay = commands.add_parser("replay", help="replay a recorded transcript against the backend; report the first divergence")
    replay.add_argument("file", help="a JSONL transcript written by --trace-dir")
    replay.set_defaults(run=_replay)

    chat = commands.add_parser("chat", help="chat in the terminal through the real backend")
    chat.add_argument("--agent-command", help="an ACP agent command line (default: the built-in Eliza)")
    chat.add_argument("--agent-env", action="append", default=[], metavar="NAME=VALUE", help="environment for the agent (repeatable)")
    chat.add_argument("--deterministic", action="store_true", help="reproducible Eliza replies")
    chat.add_argument("--trace-dir", help="passed to the backend")
    chat.set_defaults(run=_chat)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _configure_logging(args.log_level)
    return args.run(args)
