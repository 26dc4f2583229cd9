"""Strict structuring of wire JSON into attrs classes, with errors that name wire paths.

Every attrs class structured through `converter` maps its snake_case attributes to
camelCase keys. Validation is strict (a number is not a string, a bool is not a number),
and a failure becomes one `WireError` whose message names the offending field the way
the sender wrote it: `messages[0].content[1].toolCallId`, never a Python attribute.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.errors import ClassValidationError, IterableValidationError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

T = TypeVar("T")


def canonical_json(value: Any, *, escaped: bool = False) -> str:
    """One text per JSON value (keys sorted, no spaces, characters as they are): what keys and
    digests over wire values are taken from, so equal values always give equal keys.

    `escaped`: non-ASCII characters as `\\u` escapes, the form agent keys have always been
    stored in (`protocol/vscode/agent_identity.agent_key`); another form would forget what the state
    folder remembers of an agent whose definition has non-ASCII text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=escaped)


class WireError(ValueError):
    """Invalid wire data; `path` is where (wire names), `problem` is what."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path
        self.problem = problem

    def under(self, prefix: str) -> WireError:
        if not self.path:
            return WireError(prefix, self.problem)
        joiner = "" if self.path.startswith("[") else "."
        return WireError(f"{prefix}{joiner}{self.path}" if prefix else self.path, self.problem)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _strict(kind: type, label: str) -> Callable[[Any, type], Any]:
    def structure(value: Any, _: type) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise WireError("", f"expected {label}, got a boolean")
        if not isinstance(value, kind):
            raise WireError("", f"expected {label}, got {_describe(value)}")
        return value

    return structure


def _describe(value: Any) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "an array"
        case dict():
            return "an object"
    return type(value).__name__


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=False, detailed_validation=True)
    conv.register_structure_hook(str, _strict(str, "a string"))
    conv.register_structure_hook(bool, _strict(bool, "a boolean"))
    conv.register_structure_hook(int, _strict(int, "an integer"))
    conv.register_structure_hook(float, lambda v, _: float(_strict((int, float), "a number")(v, float)))  # type: ignore[arg-type]

    def structure_tuple(value: Any, cl: Any) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise WireError("", f"expected an array, got {_describe(value)}")
        (item_type, _) = cl.__args__
        if item_type is Any:
            return tuple(value)  # JSON values, read later (chat messages: `protocol/history/reading.py`)
        items = []
        for index, item in enumerate(value):
            try:
                items.append(conv.structure(item, item_type))
            except Exception as exc:
                raise _as_wire_error(exc).under(f"[{index}]") from None
        return tuple(items)

    conv.register_structure_hook_func(
        lambda t: getattr(t, "__origin__", None) is tuple and len(getattr(t, "__args__", ())) == 2 and t.__args__[1] is Ellipsis,
        structure_tuple,
    )

    def structure_attrs_factory(cl: type) -> Callable[[Any, type], Any]:
        renames: dict[str, Any] = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cl)}
        inner: Callable[[Any, type], Any] = make_dict_structure_fn(cl, conv, **renames)

        def structure(value: Any, _: type) -> Any:
            if not isinstance(value, dict):
                raise WireError("", f"expected an object, got {_describe(value)}")
            try:
                return inner(value, cl)
            except ClassValidationError as exc:
                raise _as_wire_error(exc) from None

        return structure

    conv.register_structure_hook_factory(attrs.has, structure_attrs_factory)

    def unstructure_attrs_factory(cl: type) -> Callable[[Any], Any]:
        renames: dict[str, Any] = {a.name: override(rename=camel(a.name), omit_if_default=a.default is None) for a in attrs.fields(cl)}
        return make_dict_unstructure_fn(cl, conv, **renames)

    conv.register_unstructure_hook_factory(attrs.has, unstructure_attrs_factory)
    return conv


def _noted(exc: BaseException, kind: type, attribute: str) -> Any:
    """What the last of cattrs' notes of `kind` on `exc` says about `attribute` (where it failed)."""
    value = None
    for note in getattr(exc, "__notes__", []):
        if isinstance(note, kind):
            value = getattr(note, attribute)
    return value


def _as_wire_error(exc: BaseException) -> WireError:
    """Flatten cattrs' exception groups into the first error, with its wire path."""
    if isinstance(exc, WireError):
        return exc
    if isinstance(exc, ClassValidationError):
        for sub in exc.exceptions:
            name = _noted(sub, cattrs.AttributeValidationNote, "name")
            inner = _as_wire_error(sub)
            if name is not None:
                key = camel(name)
                if isinstance(sub, KeyError):
                    return WireError(key, "required field missing")
                return inner.under(key)
            return inner
    if isinstance(exc, IterableValidationError):
        for sub in exc.exceptions:
            index = _noted(sub, cattrs.IterableValidationNote, "index")
            inner = _as_wire_error(sub)
            return inner.under(f"[{index}]") if index is not None else inner
    if isinstance(exc, KeyError):
        return WireError("", "required field missing")
    return WireError("", str(exc) or type(exc).__name__)


converter = _make_converter()


def structure(value: Any, cl: type[T], path: str = "") -> T:
    """Structure `value` as `cl`; raises WireError with a wire path under `path`."""
    try:
        return converter.structure(value, cl)
    except Exception as exc:
        raise _as_wire_error(exc).under(path) from None


def unstructure(value: Any) -> Any:
    return converter.unstructure(value)


def expect_object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireError(path, f"expected an object, got {_describe(value)}")
    return value


def describe(value: Any) -> str:
    return _describe(value)
