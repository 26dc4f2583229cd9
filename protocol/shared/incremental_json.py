"""Decoding a line at the cost of what is new in it. Pure, no I/O.

A chat request carries the whole conversation, and the next request of that conversation
carries it again with a turn more. Parsing all of it every time made one request at turn
1,000 cost several times one at turn 10, before any of our own work. But the bytes of a
message that was already read are the same bytes: so `Decoder` keeps, for a few named
arrays (a request's `params.messages`, say), the last few it read with the text of each
element, and reads a new line by comparing its text with them (a `str.startswith`, in C);
where a run of elements is equal as text, it takes the values already read (the same
objects, so later comparisons of them stop at identity) and parses only the rest.

What it returns is what `parse_line` returns for the line, value for value: it only takes
the fast road for a line that is valid within our limits, and hands every other line (any
surprise at all, a surrogate escape in what it reads afresh, a number we refuse, nesting
beyond the limit) to
`parse_line`, whose answer stands. The values it reuses are shared between requests, so
nothing may change them in place; nothing does (the wire readers build new objects).
"""

from __future__ import annotations

import json.decoder
from collections.abc import Iterable
from typing import Any

import attrs

from protocol.shared.jsonrpc import JSON, MAX_DEPTH, Invalid, _scan, nesting_depth, parse_line

Path = tuple[str, ...]

SMALLEST = 64 * 1024  # lines shorter than this are parsed whole: too short to win anything
KEPT = 8  # arrays kept for each path (the active conversations' last requests)
KEPT_CHARS = 32 * 1024 * 1024  # and at most this many characters of the lines they stand in (1 to 4 bytes each)
SEARCHES = 4  # binary searches for a shared run, per array, before going element by element
TINY = 32  # fresh elements shorter than this on average are parsed by `parse_line` instead

_string = json.decoder.scanstring  # type: ignore[attr-defined]  # the C scanner; not in the stubs
_BLANK = " \t\n\r"


class _Surprise(Exception):
    """Anything the fast road does not handle: `parse_line` decides."""


@attrs.frozen(eq=False)
class _Seen:
    """An array read earlier: the line it stands in (kept, not copied), and for each element its
    value and where it lies."""

    line: str
    base: int  # where the array begins in `line`
    values: list[Any]
    starts: list[int]  # offsets from `base`
    ends: list[int]

    def text(self, start: int, end: int) -> str:
        """The text from element `start`'s beginning to element `end`'s end."""
        return self.line[self.base + self.starts[start] : self.base + self.ends[end]]


def _skip(s: str, pos: int) -> int:
    while s[pos] in _BLANK:  # JSON.stringify writes no blanks: usually not a single turn
        pos += 1
    return pos


class Decoder:
    """`parse_line` that remembers the arrays at `paths` of the lines it read (see above)."""

    def __init__(self, paths: Iterable[Path]) -> None:
        self._paths = frozenset(paths)
        self._through = frozenset(path[:length] for path in self._paths for length in range(1, len(path)))
        self._seen: dict[Path, list[_Seen]] = {}

    def decode(self, line: bytes) -> JSON | Invalid:
        if len(line) < SMALLEST:
            return parse_line(line)
        try:
            s = line.decode()
            found: list[tuple[Path, _Seen, _Seen | None]] = []
            pos = _skip(s, 0) if s and s[0] in _BLANK else 0
            if s[pos] != "{":
                raise _Surprise
            value, pos = self._object(s, pos, (), 1, found)
            while pos < len(s) and s[pos] in _BLANK:
                pos += 1
            if pos != len(s):
                raise _Surprise
        except (_Surprise, ValueError, IndexError, StopIteration, RecursionError):  # ValueError covers bad UTF-8
            return parse_line(line)
        for path, seen, replaced in found:
            self._keep(path, seen, replaced)
        return value

    # The walk: objects on the way to a path member by member, the arrays at the paths element
    # by element, everything else by the C scanner in one call.

    def _object(self, s: str, pos: int, path: Path, depth: int, found: list[Any]) -> tuple[dict[str, Any], int]:
        result: dict[str, Any] = {}
        pos = _skip(s, pos + 1)
        if s[pos] == "}":
            return result, pos + 1
        while True:
            if s[pos] != '"':
                raise _Surprise
            key, end = _string(s, pos + 1, True)
            _plain(s, pos, end)
            pos = end
            pos = _skip(s, pos)
            if s[pos] != ":":
                raise _Surprise
            pos = _skip(s, pos + 1)
            inner = (*path, key)
            if inner in self._through and s[pos] == "{":
                result[key], pos = self._object(s, pos, inner, depth + 1, found)
            elif inner in self._paths and s[pos] == "[":
                result[key], pos = self._array(s, pos, inner, depth + 1, found)
            else:
                result[key], pos = _value(s, pos, depth)
            pos = _skip(s, pos)
            if s[pos] == ",":
                pos = _skip(s, pos + 1)
            elif s[pos] == "}":
                return result, pos + 1
            else:
                raise _Surprise

    def _array(self, s: str, pos: int, path: Path, depth: int, found: list[Any]) -> tuple[list[Any], int]:
        begin = pos
        values: list[Any] = []
        starts: list[int] = []
        ends: list[int] = []
        candidates = self._seen.get(path, [])
        chosen: _Seen | None = None
        searches = fresh = fresh_chars = 0
        pos = _skip(s, pos + 1)
        if s[pos] == "]":
            return values, pos + 1
        while True:
            index = len(values)
            run = 0
            for seen in (chosen,) if chosen is not None else candidates:
                if index < len(seen.values) and s.startswith(seen.text(index, index), pos):
                    chosen = seen
                    run = _shared_run(s, pos, seen, index, searches < SEARCHES)
                    searches += run < len(seen.values) - index
                    break
            if run:
                assert chosen is not None
                first = chosen.starts[index]
                shift = pos - begin - first
                values += chosen.values[index : index + run]
                if shift:  # what comes before changed length
                    starts += map(shift.__add__, chosen.starts[index : index + run])
                    ends += map(shift.__add__, chosen.ends[index : index + run])
                else:
                    starts += chosen.starts[index : index + run]
                    ends += chosen.ends[index : index + run]
                pos = begin + ends[-1]
            else:
                values_end = _value(s, pos, depth)
                values.append(values_end[0])
                starts.append(pos - begin)
                ends.append(values_end[1] - begin)
                fresh += 1
                fresh_chars += values_end[1] - pos
                if fresh % 1024 == 0 and fresh_chars < TINY * fresh:
                    raise _Surprise  # tiny elements: one Python step each would cost more than a whole parse
                pos = values_end[1]
            pos = _skip(s, pos)
            if s[pos] == ",":
                pos = _skip(s, pos + 1)
            elif s[pos] == "]":
                found.append((path, _Seen(s, begin, values, starts, ends), chosen))
                return values, pos + 1
            else:
                raise _Surprise

    def _keep(self, path: Path, seen: _Seen, replaced: _Seen | None) -> None:
        """Keep `seen` first for its path, in place of the array it continued, within bounds."""
        kept = [earlier for earlier in self._seen.get(path, []) if earlier is not replaced]
        self._seen[path] = [seen, *kept][:KEPT]
        total, counted = 0, set()  # a request's arrays (messages, tools) stand in one line: count it once
        for arrays in self._seen.values():
            for position, earlier in enumerate(arrays):
                if id(earlier.line) not in counted:
                    counted.add(id(earlier.line))
                    total += len(earlier.line)
                if total > KEPT_CHARS:
                    del arrays[position:]
                    break


def _shared_run(s: str, pos: int, seen: _Seen, index: int, search: bool) -> int:
    """How many elements of `seen` from `index` on (at least one: the caller matched it) have
    their text, separators included, at `pos` in `s` and end where an element may end."""
    low, high = 1, len(seen.values) - index  # `low` elements are shared; more than `high` are not
    if high > 1 and not s.startswith(seen.text(index, index + high - 1), pos):
        if not search:
            high = 1
        else:
            high -= 1
            while low < high:
                middle = (low + high + 1) // 2
                if s.startswith(seen.text(index, index + middle - 1), pos):
                    low = middle
                else:
                    high = middle - 1
    # The last element's text may be the start of a longer one (a number, say): it ends only
    # where a separator follows. Those before it are followed by separators that matched.
    return high if s[_skip(s, pos + seen.ends[index + high - 1] - seen.starts[index])] in ",]" else high - 1


def _plain(s: str, start: int, end: int) -> None:
    """Text read afresh may not hold a surrogate escape: `parse_line` replaces lone ones, and
    says so. (Reused text has none: it was read here before.)"""
    if s.find("\\ud", start, end) >= 0 or s.find("\\uD", start, end) >= 0:
        raise _Surprise


def _value(s: str, pos: int, depth: int) -> tuple[Any, int]:
    """One value by the C scanner, held to the nesting limit (counted from `depth`, the
    depth of what holds it)."""
    value, end = _scan(s, pos)
    _plain(s, pos, end)
    if s[pos] in "[{" and s.count("[", pos, end) + s.count("{", pos, end) + depth > MAX_DEPTH and nesting_depth(s[pos:end].encode()) + depth > MAX_DEPTH:
        raise _Surprise
    return value, end
