"""The layers' imports point one way: symposium → actors → protocol (docs/DESIGN.md, "Where to change what").

`protocol/` is wire formats and knows nothing of ours; `actors/` is the actor system and knows
only `protocol/`; `symposium/` is the application that wires them (and starts agents). Nothing
shipped imports `tests/` or `bench/`. Read from the source with `ast`, so an import inside a
function (a lazy one) or under `TYPE_CHECKING` counts as much as one at the top.
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


def test_the_reader_sees_lazy_relative_and_dynamic_imports() -> None:
    """The check itself: imports hidden in functions, relative ones and dynamic ones are found."""
    source = "def f():\n    from symposium.eliza import agent\n    from .. import bench\n    import importlib\n    importlib.import_module('tests.y')\n"
    assert {name for _, name in imported(source, "actors")} == {"symposium.eliza", "bench", "importlib", "tests.y"}
    assert {name for _, name in imported("from .rendering import x\nfrom . import y", "actors")} == {"actors.rendering", "actors.y"}
