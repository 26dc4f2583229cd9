"""The layers' imports point one way: symposium → actors → protocol (docs/DESIGN.md, "Layers").

`protocol/` is the pure layer (wire formats and every decision) and knows nothing of ours
outside it; `actors/` is the trio and I/O layer and knows only `protocol/`; `symposium/` is
the application that wires them (and starts agents). Nothing shipped imports `tests/` or
`bench/`. `protocol/` imports no trio, anyio, socket, subprocess, sqlite3 nor threading, and
does no file I/O, so its modules are tested as plain functions. Read from the source with
`ast`, so an import inside a function (a lazy one) or under `TYPE_CHECKING` counts as much as
one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = {"protocol", "actors", "symposium", "tests", "bench"}
ALLOWED = {
    "protocol": {"protocol"},
    "actors": {"actors", "protocol"},
    "symposium": {"symposium", "actors", "protocol"},
}
DYNAMIC = {"import_module", "__import__"}  # importlib.import_module("x"), __import__("x")


def imported(source: str, package: str) -> list[tuple[int, str]]:
    """Every module `source` imports, as (line, dotted name); `package` (dotted) is where it
    lives, to resolve relative imports."""
    here = package.split(".")
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                if node.module:
                    found.append((node.lineno, ".".join([*base, node.module])))
                else:  # `from .. import x`: x is a module (or a name in the package)
                    found += [(node.lineno, ".".join([*base, alias.name])) for alias in node.names]
            elif node.module:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in DYNAMIC:
                found.append((node.lineno, node.args[0].value))
    return found


def violations(layer: str) -> list[str]:
    out = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        package = ".".join(path.parent.relative_to(ROOT).parts)
        for line, name in imported(path.read_text(), package):
            top = name.split(".")[0]
            if top in OURS and top not in ALLOWED[layer]:
                out.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return out


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    assert list((ROOT / layer).rglob("*.py")), f"no modules found under {layer}/"
    assert violations(layer) == []


# What the pure layer may not reach: an event loop, processes, sockets, threads, databases,
# files. `importlib.metadata` reads the installed package's files; `resource` asks the kernel.
IMPURE_MODULES = {
    "trio", "anyio", "asyncio", "socket", "ssl", "selectors", "select", "subprocess", "multiprocessing",
    "sqlite3", "threading", "concurrent", "queue", "shutil", "tempfile", "glob", "fcntl", "signal",
    "resource", "importlib.metadata", "mcp", "io",
}
IMPURE_CALLS = {"open", "input", "print", "exec", "eval", "breakpoint", "__import__"}  # builtins
# `os.X` that touch files, processes or the environment (os.path's string functions stay allowed).
IMPURE_OS = {
    "open", "fdopen", "read", "write", "close", "remove", "unlink", "rename", "replace", "mkdir", "makedirs",
    "rmdir", "removedirs", "listdir", "scandir", "walk", "stat", "lstat", "chmod", "chown", "utime", "link",
    "symlink", "readlink", "truncate", "getcwd", "chdir", "environ", "getenv", "putenv", "system", "popen",
    "kill", "killpg", "fork", "spawnv", "execv", "pipe", "dup", "dup2", "urandom",
}
IMPURE_OS_PATH = {"exists", "lexists", "isfile", "isdir", "islink", "ismount", "getsize", "getmtime", "getatime", "getctime", "realpath", "abspath", "samefile", "expanduser", "expandvars"}
# `pathlib.Path` methods that touch the file system (PurePath's are plain string work).
IMPURE_METHODS = {
    "read_text", "write_text", "read_bytes", "write_bytes", "iterdir", "touch", "mkdir", "rmdir", "unlink",
    "glob", "rglob", "resolve", "exists", "is_file", "is_dir", "chmod", "symlink_to", "hardlink_to", "expanduser",
}


def impurities(source: str) -> list[tuple[int, str]]:
    """What in `source` reaches beyond plain computation: an impure import, a builtin that does
    I/O, an `os` call on files or processes, a file-system method, `pathlib.Path` itself."""
    found: list[tuple[int, str]] = []
    for line, name in imported(source, "protocol"):
        if any(name == bad or name.startswith(bad + ".") for bad in IMPURE_MODULES):
            found.append((line, f"imports {name}"))
    for node in ast.walk(_with_parents(ast.parse(source))):
        if isinstance(node, ast.ImportFrom) and node.module == "pathlib" and any(a.name == "Path" for a in node.names):
            found.append((node.lineno, "imports pathlib.Path (PurePath is the pure one)"))
        elif isinstance(node, ast.ImportFrom) and node.module in {"os", "os.path"}:
            banned = IMPURE_OS if node.module == "os" else IMPURE_OS_PATH
            found += [(node.lineno, f"imports {node.module}.{a.name}") for a in node.names if a.name in banned]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in IMPURE_CALLS:
            found.append((node.lineno, f"calls {node.func.id}()"))
        elif isinstance(node, ast.Attribute):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id == "os" and node.attr in IMPURE_OS:
                found.append((node.lineno, f"uses os.{node.attr}"))
            elif isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and (owner.value.id, owner.attr) == ("os", "path") and node.attr in IMPURE_OS_PATH:
                found.append((node.lineno, f"uses os.path.{node.attr}"))
            elif isinstance(owner, ast.Name) and owner.id == "pathlib" and node.attr == "Path":
                found.append((node.lineno, "uses pathlib.Path"))
            elif node.attr in IMPURE_METHODS and isinstance(node.ctx, ast.Load) and _called(node):
                found.append((node.lineno, f"calls .{node.attr}()"))
    return found


def _called(node: ast.Attribute) -> bool:
    parent = getattr(node, "parent", None)
    return isinstance(parent, ast.Call) and parent.func is node


def _with_parents(tree: ast.AST) -> ast.AST:
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            child.parent = parent  # type: ignore[attr-defined]
    return tree


def test_the_pure_layer_does_no_io() -> None:
    """Every decision and wire format is a plain function or class: no event loop, no
    processes, sockets, threads, databases or files (docs/DESIGN.md, "Layers")."""
    out = []
    for path in sorted((ROOT / "protocol").rglob("*.py")):
        out += [f"{path.relative_to(ROOT)}:{line} {what}" for line, what in impurities(path.read_text())]
    assert out == []


def test_the_purity_check_sees_io() -> None:
    """The check itself: each way into the outside world is found, lazy ones too."""
    source = """
import trio
from sqlite3 import connect
from pathlib import Path, PurePath
import importlib.metadata
import os
def f(p):
    import subprocess
    open("x")
    os.stat("x")
    os.path.isdir("x")
    os.path.join("a", "b")
    PurePath("a").as_uri()
    p.read_text()
"""
    found = {what for _, what in impurities(source)}
    assert found == {
        "imports trio", "imports sqlite3", "imports pathlib.Path (PurePath is the pure one)", "imports importlib.metadata",
        "imports subprocess", "calls open()", "uses os.stat", "uses os.path.isdir", "calls .read_text()",
    }


def test_the_reader_sees_lazy_relative_and_dynamic_imports() -> None:
    """The check itself: imports hidden in functions, relative ones and dynamic ones are found."""
    source = "def f():\n    from symposium.eliza import agent\n    from .. import bench\n    import importlib\n    importlib.import_module('tests.y')\n"
    assert {name for _, name in imported(source, "actors")} == {"symposium.eliza", "bench", "importlib", "tests.y"}
    assert {name for _, name in imported("from .rendering import x\nfrom . import y", "actors")} == {"actors.rendering", "actors.y"}


# Owners explicit (docs/DESIGN.md, "Layers") ---------------------------------------------------

SHIPPED = ("protocol", "actors", "symposium")
# Attributes set on objects the library hands over for that purpose: a trio cancel scope's
# deadline and shield, a log record a `logging.Filter` rewrites.
LIBRARY_ATTRIBUTES = {"deadline", "shield", "msg", "args", "exc_text"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for layer in SHIPPED for path in (ROOT / layer).rglob("*.py")}


def declared(tree: ast.AST) -> set[str]:
    """The attributes the classes of a module declare: class-body fields, and what their
    methods set on `self`."""
    names: set[str] = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for statement in cls.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                names.add(statement.target.id)
            elif isinstance(statement, ast.Assign):
                names |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
    return {name.lstrip("_") for name in names}


def foreign_attribute_writes(source: str) -> list[tuple[int, str]]:
    """Where `source` sets an attribute that no class of its own declares, on something other
    than `self`: reaching into another module's object (a service locator's way of wiring)."""
    tree = ast.parse(source)
    own = declared(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr.lstrip("_") not in own and node.attr not in LIBRARY_ATTRIBUTES:
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_sets_an_attribute_on_another_modules_object() -> None:
    """Dependencies are passed in (constructor arguments), never parked on an object by a
    module that does not own it (`pool.spares = self` was one)."""
    out = []
    for _name, path in sorted(_modules().items()):
        out += [f"{path.relative_to(ROOT)}:{line} sets {what}" for line, what in foreign_attribute_writes(path.read_text())]
    assert out == []


def test_the_attribute_check_sees_a_write_into_another_object() -> None:
    source = "class Spares:\n    def __init__(self, pool):\n        self._pool = pool\n        pool.spares = self\n        self._pool.catalog = None\n"
    assert foreign_attribute_writes(source) == [(4, "pool.spares"), (5, "self._pool.catalog")]
    assert foreign_attribute_writes("class A:\n    x: int\ndef f(a: A):\n    a.x = 1\n") == []


def import_graph() -> dict[str, set[str]]:
    """Which of our modules each of our shipped modules imports (lazy and TYPE_CHECKING ones too)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        tree = ast.parse(path.read_text())
        for _line, imported_name in imported(path.read_text(), package):
            if imported_name in modules and imported_name != name:
                edges.add(imported_name)
        for node in ast.walk(tree):  # `from protocol import acp`: the module is the name
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                edges |= {f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules}
        graph[name] = {edge for edge in edges if not edge.endswith("__init__") and modules[edge].name != "__init__.py"}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, as the path that closes it (one per module it starts from, at most)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    return found


def test_no_import_circle() -> None:
    """No two of our modules need each other, not even for a type (`actors/agent/process.py` and
    `actors/conversation/spares.py` once did): an owner passes what is needed in."""
    assert cycles(import_graph()) == []


def test_the_circle_check_sees_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


# Concepts as folders (docs/DESIGN.md, "Layers") -------------------------------------------------

# Each layer's folders, lowest first: a folder imports only itself and the folders before it.
FOLDERS = {
    "protocol": ("shared", "vscode", "acp", "host", "bridge", "history", "turn"),
    "actors": ("shared", "store", "bridge", "agent", "conversation"),
}
MAX_MODULES = 20  # a folder a reader can take in at a glance


def folder_of(module: str) -> tuple[str, str] | None:
    parts = module.split(".")
    return (parts[0], parts[1]) if parts[0] in FOLDERS and len(parts) > 2 else None


def folder_order_violations(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for module, edges in sorted(graph.items()):
        here = folder_of(module)
        if here is None:
            continue
        floors = FOLDERS[here[0]]
        for edge in sorted(edges):
            there = folder_of(edge)
            if there and there[0] == here[0] and floors.index(there[1]) > floors.index(here[1]):
                out.append(f"{module} ({here[1]}/) imports {edge} ({there[1]}/), a folder above it")
    return out


@pytest.mark.parametrize("layer", sorted(FOLDERS))
def test_every_module_sits_in_one_of_its_layers_folders(layer: str) -> None:
    """No flat modules beside the folders, no folder the order does not name, none too wide."""
    loose = [p.name for p in (ROOT / layer).glob("*.py") if p.name != "__init__.py"]
    folders = sorted(p.name for p in (ROOT / layer).iterdir() if p.is_dir() and p.name != "__pycache__")
    assert loose == []
    assert folders == sorted(FOLDERS[layer])
    wide = {f: n for f in folders if (n := len([p for p in (ROOT / layer / f).glob("*.py") if p.name != "__init__.py"])) > MAX_MODULES}
    assert wide == {}


def test_each_folder_imports_only_the_folders_below_it() -> None:
    assert folder_order_violations(import_graph()) == []


def test_the_folder_check_sees_an_import_upwards() -> None:
    graph = {"protocol.acp.auth": {"protocol.turn.machine", "protocol.shared.jsonrpc"}, "protocol.turn.machine": {"protocol.acp.auth"}}
    assert folder_order_violations(graph) == ["protocol.acp.auth (acp/) imports protocol.turn.machine (turn/), a folder above it"]


def test_every_worker_thread_of_the_backend_is_counted() -> None:
    """The replay's clock waits for worker threads it can count (docs/wire-protocol.md,
    "Transcripts and replay"): the backend hands work to a thread only through actors/shared/threads.py."""
    allowed = {ROOT / "actors" / "shared" / "threads.py", ROOT / "symposium" / "chat.py"}  # chat: a terminal's stdin, never replayed
    direct = [f"{path.relative_to(ROOT)}:{n}" for folder in ("actors", "protocol", "symposium") for path in sorted((ROOT / folder).rglob("*.py"))
              if path not in allowed for n, line in enumerate(path.read_text().splitlines(), 1) if "to_thread.run_sync" in line]
    assert direct == []


MAX_LINES = 600  # a module a reader takes in at one sitting; past it, a concern is hiding in another's
LONG_ON_PURPOSE = {"symposium/eliza/engine.py"}  # Weizenbaum's 1966 program, ported as the one program it is


def test_no_shipped_module_is_over_its_length() -> None:
    long = {str(path.relative_to(ROOT)): n for path in _modules().values() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert {name: n for name, n in long.items() if name not in LONG_ON_PURPOSE} == {}
