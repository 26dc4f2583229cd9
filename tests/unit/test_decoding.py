"""`protocol.shared.incremental_json.Decoder` reads every line exactly as `parse_line` does, whatever came
before it, and reads a request that repeats the previous one's messages without parsing them
again (the values are the very objects read before)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.shared import incremental_json as decoding
from protocol.shared.incremental_json import Decoder
from protocol.shared.jsonrpc import Invalid, parse_line

PATHS = [("params", "messages"), ("params", "options", "tools")]


def _same(got: Any, expected: Any) -> bool:
    """Equal as JSON text, so that 1, 1.0 and true, or member order, are told apart."""
    if isinstance(expected, Invalid):
        return got == expected
    return json.dumps(got) == json.dumps(expected)


def _line(id: int, messages: list[Any], *, pad: int = 0, tools: list[Any] | None = None, **dumps: Any) -> bytes:
    params = {"modelId": "m", "messages": messages, "options": {"tools": tools or []}, "pad": "p" * pad}
    line = json.dumps({"jsonrpc": "2.0", "id": id, "method": "lm/chat", "params": params}, **dumps)
    return line.encode("utf-8", "surrogatepass")  # a lone surrogate: escaped, or (ensure_ascii=False) invalid UTF-8


def _message(turn: int, size: int = 200) -> dict[str, Any]:
    return {"role": "user" if turn % 2 else "assistant", "content": [{"type": "text", "value": f"turn {turn} " + "x" * size}]}


def test_a_request_that_repeats_the_last_one_reuses_its_messages() -> None:
    decoder = Decoder(PATHS)
    history = [_message(turn) for turn in range(400)]
    first = decoder.decode(_line(1, history))
    history.append(_message(400))
    second = decoder.decode(_line(2, history))
    assert _same(second, parse_line(_line(2, history)))
    assert all(a is b for a, b in zip(first["params"]["messages"], second["params"]["messages"][:400], strict=False))


def test_a_changed_system_message_and_a_moved_breakpoint_only_cost_themselves() -> None:
    decoder = Decoder(PATHS)
    history = [_message(turn) for turn in range(400)]
    first = decoder.decode(_line(1, [{"role": "system", "content": "one"}, *history]))
    history[-1] = {**history[-1], "cache": True}
    line = _line(2, [{"role": "system", "content": "two, longer"}, *history, _message(400)])
    second = decoder.decode(line)
    assert _same(second, parse_line(line))
    shared = [a is b for a, b in zip(first["params"]["messages"], second["params"]["messages"], strict=False)]
    assert shared == [False, *[True] * 399, False]


def test_interleaved_conversations_each_reuse_their_own() -> None:
    decoder = Decoder(PATHS)
    a = [_message(turn, 300) for turn in range(300)]
    b = [{"role": "user", "content": f"other {turn} " + "y" * 300} for turn in range(300)]
    decoder.decode(_line(1, a))
    read_b = decoder.decode(_line(2, b))
    read_a = decoder.decode(_line(3, [*a, _message(300)]))
    again_b = decoder.decode(_line(4, [*b, _message(301)]))
    assert _same(read_a, parse_line(_line(3, [*a, _message(300)])))
    assert all(x is y for x, y in zip(read_b["params"]["messages"], again_b["params"]["messages"][:300], strict=False))


def test_a_number_that_grew_is_not_taken_for_the_old_one() -> None:
    decoder = Decoder([("params", "messages")])
    values = [12] * 20_000
    decoder.decode(_line(1, values))
    line = _line(2, [12] * 19_999 + [123])
    assert _same(decoder.decode(line), parse_line(line))


# Any line, after any lines: the same as parse_line. Lines are made long enough for the fast
# road (padding) and share messages with each other (drawn from a small pool), in any layout.

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8) | st.text(st.characters(max_codepoint=0x7FF), max_size=8)
    | st.just("lone \udc80"),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(st.characters(max_codepoint=0x7FF), max_size=4), inner, max_size=4),
    max_leaves=12,
)
pool = st.lists(json_values, min_size=1, max_size=8)


@st.composite
def lines(draw: st.DrawFn) -> list[bytes]:
    shared = draw(pool)
    layout = draw(st.sampled_from([{}, {}, {"indent": 1}, {"separators": (",", ":")}, {"ensure_ascii": False}]))
    messages: list[Any] = []
    out = []
    for id in range(draw(st.integers(1, 6))):
        how = draw(st.sampled_from(["grow", "grow", "edit", "anew"]))
        more = draw(st.lists(st.sampled_from(shared) | json_values, max_size=6))
        if how == "grow":
            messages = [*messages, *more]
        elif how == "edit" and messages:
            messages = [*messages]
            messages[draw(st.integers(0, len(messages) - 1))] = draw(json_values)
        else:
            messages = more
        line = _line(id, messages, pad=decoding.SMALLEST, tools=draw(st.lists(st.sampled_from(shared), max_size=3)), **layout)
        damage = draw(st.sampled_from(["", "", "", "", "cut", "nan", "extra", "deep"]))
        if damage == "cut":
            line = line[: draw(st.integers(0, len(line)))]
        elif damage == "nan":
            line = line.replace(b'"modelId"', b'"x": NaN, "modelId"', 1)
        elif damage == "extra":
            line += b" {}"
        elif damage == "deep":
            line = line.replace(b'"modelId"', b'"x": ' + b"[" * 300 + b"]" * 300 + b', "modelId"', 1)
        out.append(line)
    return out


@settings(max_examples=150, deadline=None)
@given(lines())
def test_every_line_reads_as_parse_line_reads_it(sequence: list[bytes]) -> None:
    decoder = Decoder(PATHS)
    for line in sequence:
        assert _same(decoder.decode(line), parse_line(line))
