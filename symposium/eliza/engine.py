"""Weizenbaum's ELIZA (CACM, January 1966) as a pure engine.

The engine knows nothing about psychotherapy: everything DOCTOR says lives
in ``doctor.toml``.  This module only implements the 1966 algorithm, so it
has no I/O beyond reading the script and no notion of sessions or time:

1. Cut the input into clauses and keep the first clause with a keyword in
   it (ELIZA answered one sentence at a time).
2. Lower-case and *repair* the words ("dont" becomes "don't").
3. Stack the keywords found, highest precedence first.
4. If the memory keyword ("my") is present, file a remark away for later.
5. Walk the keystack: the first transform whose decomposition pattern
   matches picks its next reassembly rule, which is either a reply, a jump
   to another keyword (``=kw``) or ``NEWKEY`` (try the next keyword).
6. If nothing answered, every fourth turn bring back a memory; otherwise
   use the ``none`` keyword's replies.

Replies rotate through each transform's reassembly list, as ELIZA's did.
Where the rotation starts is the only randomness, and ``seed=0`` removes it.
"""

from __future__ import annotations

import random
import re
import tomllib
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias

import attrs

__all__ = [
    "DEFAULT_SCRIPT_PATH",
    "Eliza",
    "Script",
    "ScriptError",
    "load_script",
    "parse_script",
]

#: DOCTOR, shipped beside this module (listed as package data in pyproject).
DEFAULT_SCRIPT_PATH = Path(__file__).with_name("doctor.toml")

#: What ELIZA says to silence, whatever the script.
EMPTY_REPLY = "Please tell me more."
#: Said only if the script's ``none`` keyword somehow produces nothing.
LAST_RESORT = "Please go on."
#: The keyword whose replies are used when nothing else matched.
NONE_KEYWORD = "none"
#: A reassembly rule meaning "this keyword has nothing to say; try the next".
NEWKEY = "NEWKEY"
#: Keyword visits per reply; ``=a`` / ``=b`` loops in a script end here.
MAX_VISITS = 10
#: A memory may come back only on every MEMORY_CADENCE-th turn (ELIZA's LIMIT).
MEMORY_CADENCE = 4
#: Memories kept; the oldest go first, so a long session cannot grow without bound.
MEMORY_CAPACITY = 32
#: Words of the chosen clause that are matched.  Patterns backtrack, so this
#: keeps a pasted novel from costing more than a sentence does.
MAX_WORDS = 100

_CLAUSE_BREAK = re.compile(r"[,.?!;:]")
_EDGE_CHARACTERS = "\"'`()[]{}<>*_“”‘’«»"
_SLOT = re.compile(r"\{([^{}]*)\}")


class ScriptError(ValueError):
    """The script cannot be read, or says something the engine cannot do."""


# ------------------------------------------------------------------ patterns


@attrs.frozen
class Span:
    """``..``, ``N`` or ``N..M``: a run of any words.

    Shorter runs are tried first, as ELIZA's matcher did, so ``.. my ..``
    splits at the *first* "my".
    """

    low: int
    high: int | None

    def lengths(self, words: Sequence[str], start: int) -> Iterable[int]:
        room = len(words) - start
        high = room if self.high is None else min(self.high, room)
        return range(self.low, high + 1)


@attrs.frozen
class OneOf:
    """One word out of a set: a literal, a ``{a, b}`` list or a ``#tag``."""

    options: frozenset[str]

    def lengths(self, words: Sequence[str], start: int) -> Iterable[int]:
        return (1,) if start < len(words) and words[start] in self.options else ()


Element: TypeAlias = Span | OneOf
Components: TypeAlias = list[tuple[str, ...]]


def match(pattern: Sequence[Element], words: Sequence[str]) -> Components | None:
    """Match the whole of ``words`` against ``pattern``.

    Returns one component (a tuple of words) per pattern element, or None.
    Failed (element, position) pairs are remembered so that patterns with
    several ``..`` stay polynomial.
    """
    dead_ends: set[tuple[int, int]] = set()

    def match_from(element: int, position: int) -> Components | None:
        if element == len(pattern):
            return [] if position == len(words) else None
        if (element, position) in dead_ends:
            return None
        for length in pattern[element].lengths(words, position):
            rest = match_from(element + 1, position + length)
            if rest is not None:
                return [tuple(words[position : position + length]), *rest]
        dead_ends.add((element, position))
        return None

    return match_from(0, 0)


# ------------------------------------------------------------------- scripts


@attrs.frozen
class Reply:
    """Text to say; ``{N}`` is component N, reflected into ELIZA's person."""

    template: str


@attrs.frozen
class Goto:
    """``=kw``: answer with keyword ``kw``'s transforms, on the same words."""

    keyword: str


@attrs.frozen
class NewKey:
    """``NEWKEY``: this keyword has nothing to say; try the next one."""


Rule: TypeAlias = Reply | Goto | NewKey


@attrs.frozen
class Transform:
    """A decomposition pattern and the reassembly rules it rotates through."""

    decomposition: tuple[Element, ...]
    reassembly: tuple[Rule, ...]


@attrs.frozen
class Keyword:
    """A word that goes on the keystack: it has transforms, or links to a keyword that does."""

    word: str
    precedence: int = 0
    transforms: tuple[Transform, ...] = ()
    link: str | None = None


@attrs.frozen
class Memory:
    """Remarks filed away when the user uses ``keyword``, for a quiet moment."""

    keyword: str
    transforms: tuple[Transform, ...]


@attrs.frozen
class Script:
    """A validated ELIZA script; immutable, so engines may share one."""

    hello: str
    goodbye: str | None
    keywords: Mapping[str, Keyword]
    repairs: Mapping[str, tuple[str, ...]]
    reflections: Mapping[str, str]
    memory: Memory | None


def load_script(path: str | PathLike[str] | None = None) -> Script:
    """Read and validate a script file; DOCTOR if ``path`` is None."""
    source = DEFAULT_SCRIPT_PATH if path is None else Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        raise ScriptError(f"cannot read script {source}: {error}") from error
    return parse_script(text, source=str(source))


def parse_script(text: str, *, source: str = "<script>") -> Script:
    """Validate a script given as TOML text.

    Every problem is reported as a ScriptError that names the keyword (and
    transform) at fault, because a script is data written by hand.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScriptError(f"{source}: not valid TOML: {error}") from error
    try:
        return _build_script(data)
    except ScriptError as error:
        raise ScriptError(f"{source}: {error}") from None


@cache
def _doctor() -> Script:
    """DOCTOR, read once: scripts are immutable, so every engine can share it."""
    return load_script()


# -------------------------------------------------------- script validation

_SCRIPT_FIELDS = frozenset({"hello", "goodbye", "keywords", "memory"})
_KEYWORD_FIELDS = frozenset({"word", "repair", "reflection", "precedence", "tags", "link", "transforms"})
_TRANSFORM_FIELDS = frozenset({"decomposition", "reassembly"})
_MEMORY_FIELDS = frozenset({"keyword", "transforms"})
_SPAN_ELEMENT = re.compile(r"(\d+)(\.\.(\d*))?")


def _build_script(data: Mapping[str, Any]) -> Script:
    _check_fields(data, _SCRIPT_FIELDS, "the script")
    entries = _entries(data.get("keywords"))
    tags = _tag_sets(entries)
    stackable = {entry["word"] for entry in entries if "transforms" in entry or "link" in entry}
    keywords = {
        entry["word"]: _keyword(entry, tags, stackable)
        for entry in entries
        if entry["word"] in stackable
    }
    if not keywords.get(NONE_KEYWORD, Keyword(NONE_KEYWORD)).transforms:
        raise ScriptError(f"keyword {NONE_KEYWORD!r} (the reply when nothing matches) needs transforms")
    return Script(
        hello=_text(data.get("hello"), "'hello'"),
        goodbye=None if data.get("goodbye") is None else _text(data["goodbye"], "'goodbye'"),
        keywords=MappingProxyType(keywords),
        repairs=MappingProxyType(_repairs(entries)),
        reflections=MappingProxyType(
            {entry["word"]: entry["reflection"] for entry in entries if "reflection" in entry}
        ),
        memory=_memory(data.get("memory"), tags, {entry["word"] for entry in entries}),
    )


def _entries(raw: Any) -> list[dict[str, Any]]:
    """Check the shape of every ``[[keywords]]`` table, apart from its transforms."""
    if not isinstance(raw, list) or not raw:
        raise ScriptError("'keywords' must be a non-empty array of tables")
    seen: set[str] = set()
    for number, entry in enumerate(raw, start=1):
        if not isinstance(entry, dict):
            raise ScriptError(f"keywords entry {number} is not a table")
        word = entry.get("word")
        if not isinstance(word, str) or not word.strip() or word != word.strip().lower() or " " in word:
            raise ScriptError(f"keywords entry {number}: 'word' must be one lower-case word, not {word!r}")
        where = f"keyword {word!r}"
        if word in seen:
            raise ScriptError(f"{where} is defined twice")
        seen.add(word)
        _check_fields(entry, _KEYWORD_FIELDS, where)
        _check_entry(entry, where)
    return raw


def _check_entry(entry: Mapping[str, Any], where: str) -> None:
    precedence = entry.get("precedence", 0)
    if not isinstance(precedence, int) or isinstance(precedence, bool):
        raise ScriptError(f"{where}: 'precedence' must be an integer")
    for name in ("repair", "reflection", "link"):
        if name in entry and (not isinstance(entry[name], str) or not entry[name].strip()):
            raise ScriptError(f"{where}: {name!r} must be a non-empty string")
    tags = entry.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) and tag for tag in tags):
        raise ScriptError(f"{where}: 'tags' must be a list of names")
    if "link" in entry and "transforms" in entry:
        raise ScriptError(f"{where}: has both 'link' and 'transforms'; use '=kw' rules instead")
    if "repair" in entry and ("link" in entry or "transforms" in entry):
        raise ScriptError(f"{where}: a repaired word never reaches the keystack; drop 'link'/'transforms'")


def _tag_sets(entries: Iterable[Mapping[str, Any]]) -> dict[str, frozenset[str]]:
    members: dict[str, set[str]] = {}
    for entry in entries:
        for tag in entry.get("tags", []):
            members.setdefault(tag.lower(), set()).add(entry["word"])
    return {tag: frozenset(words) for tag, words in members.items()}


def _repairs(entries: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    return {entry["word"]: tuple(entry["repair"].lower().split()) for entry in entries if "repair" in entry}


def _keyword(entry: Mapping[str, Any], tags: Mapping[str, frozenset[str]], stackable: set[str]) -> Keyword:
    word = entry["word"]
    where = f"keyword {word!r}"
    link = entry.get("link")
    if link is not None and link not in stackable:
        raise ScriptError(f"{where}: links to {link!r}, which is not a keyword with transforms or a link")
    raw_transforms = entry.get("transforms", [])
    if link is None and (not isinstance(raw_transforms, list) or not raw_transforms):
        raise ScriptError(f"{where}: 'transforms' must be a non-empty array of tables")
    transforms = tuple(
        _transform(raw, f"{where}, transform {number}", tags, stackable)
        for number, raw in enumerate(raw_transforms, start=1)
    )
    return Keyword(word, entry.get("precedence", 0), transforms, link)


def _transform(
    raw: Any,
    where: str,
    tags: Mapping[str, frozenset[str]],
    stackable: set[str] | None,
) -> Transform:
    """Parse one transform; ``stackable`` None means only replies are allowed (memory)."""
    if not isinstance(raw, dict):
        raise ScriptError(f"{where}: is not a table")
    _check_fields(raw, _TRANSFORM_FIELDS, where)
    decomposition = tuple(
        _element(item, where, tags) for item in _strings(raw.get("decomposition"), where, "decomposition")
    )
    reassembly = raw.get("reassembly")
    if stackable is None and isinstance(reassembly, str):
        reassembly = [reassembly]
    rules = tuple(
        _rule(item, where, len(decomposition), stackable)
        for item in _strings(reassembly, where, "reassembly")
    )
    if stackable is None and len(rules) != 1:
        raise ScriptError(f"{where}: a memory transform has exactly one reassembly")
    return Transform(decomposition, rules)


def _element(text: str, where: str, tags: Mapping[str, frozenset[str]]) -> Element:
    """Parse one decomposition element (see doctor.toml for the notation)."""
    item = text.strip()
    if item == "..":
        return Span(0, None)
    if span := _SPAN_ELEMENT.fullmatch(item):
        low = int(span[1])
        high = low if span[2] is None else (int(span[3]) if span[3] else None)
        if high is not None and high < low:
            raise ScriptError(f"{where}: pattern element {text!r} has its bounds backwards")
        return Span(low, high)
    if item.startswith("#"):
        tag = item[1:].lower()
        if tag not in tags:
            raise ScriptError(f"{where}: pattern element {text!r} names a tag no keyword has")
        return OneOf(tags[tag])
    if item.startswith("{") and item.endswith("}"):
        options = frozenset(option.strip().lower() for option in item[1:-1].split(","))
        if not options or "" in options or any(" " in option for option in options):
            raise ScriptError(f"{where}: pattern element {text!r} is not a list of single words")
        return OneOf(options)
    # Input is cut at ",.?!;:", so a word holding one of them could never match.
    if not item or any(character.isspace() or character in "{}#,.?!;:" for character in item):
        raise ScriptError(
            f"{where}: pattern element {text!r} is not a word, '..', 'N', 'N..M', '#tag' or '{{a, b}}'"
        )
    return OneOf(frozenset({item.lower()}))


def _rule(text: str, where: str, components: int, stackable: set[str] | None) -> Rule:
    """Parse one reassembly rule; check gotos and ``{N}`` slots now, not mid-conversation."""
    if stackable is not None and text.strip() == NEWKEY:
        return NewKey()
    if stackable is not None and text.startswith("="):
        target = text[1:].strip().lower()
        if target not in stackable:
            raise ScriptError(f"{where}: rule {text!r} jumps to {target!r}, which is not a keyword")
        return Goto(target)
    if not text.strip():
        raise ScriptError(f"{where}: empty reassembly rule")
    for slot in _SLOT.findall(text):
        if not slot.isdigit() or not 1 <= int(slot) <= components:
            raise ScriptError(
                f"{where}: rule {text!r} uses {{{slot}}}, but the decomposition has {components} component(s)"
            )
    if "{" in _SLOT.sub("", text) or "}" in _SLOT.sub("", text):
        raise ScriptError(f"{where}: rule {text!r} has an unmatched brace")
    return Reply(text)


def _memory(raw: Any, tags: Mapping[str, frozenset[str]], words: set[str]) -> Memory | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ScriptError("'memory' must be a table")
    _check_fields(raw, _MEMORY_FIELDS, "memory")
    keyword = raw.get("keyword")
    if keyword not in words:
        raise ScriptError(f"memory: 'keyword' must name a keywords entry, not {keyword!r}")
    where = f"memory keyword {keyword!r}"
    raw_transforms = raw.get("transforms")
    if not isinstance(raw_transforms, list) or not raw_transforms:
        raise ScriptError(f"{where}: 'transforms' must be a non-empty array of tables")
    transforms = tuple(
        _transform(item, f"{where}, transform {number}", tags, None)
        for number, item in enumerate(raw_transforms, start=1)
    )
    return Memory(keyword, transforms)


def _strings(raw: Any, where: str, name: str) -> list[str]:
    if not isinstance(raw, list) or not raw or not all(isinstance(item, str) for item in raw):
        raise ScriptError(f"{where}: {name!r} must be a non-empty list of strings")
    return raw


def _text(raw: Any, name: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ScriptError(f"{name} must be a non-empty string")
    return raw


def _check_fields(table: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    """Reject unknown fields: in a hand-written script they are nearly always typos."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ScriptError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}")


# ---------------------------------------------------------------- reading


def clauses(text: str) -> list[list[str]]:
    """Split input into clauses of lower-case words, trimming quotes and brackets."""
    text = text.replace("’", "'").replace("‘", "'")
    found = []
    for clause in _CLAUSE_BREAK.split(text):
        words = [word.strip(_EDGE_CHARACTERS).lower() for word in clause.split()]
        if words := [word for word in words if word]:
            found.append(words)
    return found


def repair(words: Iterable[str], repairs: Mapping[str, tuple[str, ...]]) -> list[str]:
    """Apply the script's repairs ("dont" → "don't", "i'm" → "i am")."""
    return [part for word in words for part in repairs.get(word, (word,))]


# ------------------------------------------------------------- reflecting

#: After these words a reflected "you" is a subject ("I"), elsewhere an
#: object ("me"): "you think I know", but "you told me".
_SUBJECT_LEADERS = frozenset(
    ["and", "or", "but", "because", "if", "when", "whenever", "while", "that", "so", "then", "unless", "until", "though", "although", "do", "does", "did", "can", "could", "will", "would", "should", "shall", "might", "may", "must", "are", "were", "was", "have", "has", "had", "what", "why", "how", "where", "who", "think", "know", "believe", "feel", "wish", "hope", "guess", "suppose", "say", "said"]
)
#: Verb agreement after swapping person: "you are" → "I are" → "I am".
_AGREEMENT = {
    ("i", "are"): ("I", "am"),
    ("are", "i"): ("am", "I"),
    ("i", "were"): ("I", "was"),
    ("were", "i"): ("was", "I"),
    ("i", "aren't"): ("I", "am not"),
    ("i", "weren't"): ("I", "wasn't"),
    ("you", "was"): ("you", "were"),
    ("was", "you"): ("were", "you"),
    ("you", "wasn't"): ("you", "weren't"),
}


def reflect(words: Sequence[str], reflections: Mapping[str, str]) -> str:
    """Put the user's words into ELIZA's mouth: "my mother hates me" → "your mother hates you".

    Weizenbaum swapped words one for one and lived with "YOU" being both
    subject and object; we also pick "I" or "me" and fix the verb after it.
    """
    reflected = [_reflect_word(words, index, reflections) for index in range(len(words))]
    for index in range(len(reflected) - 1):
        pair = (reflected[index].lower(), reflected[index + 1].lower())
        if pair in _AGREEMENT:
            reflected[index], reflected[index + 1] = _AGREEMENT[pair]
    return " ".join(reflected)


def _reflect_word(words: Sequence[str], index: int, reflections: Mapping[str, str]) -> str:
    word = reflections.get(words[index], words[index])
    if word.lower() != "i":
        return word
    is_last = index == len(words) - 1
    is_subject = index == 0 or words[index - 1] in _SUBJECT_LEADERS
    return "me" if is_last or not is_subject else "I"


def tidy(text: str) -> str:
    """Close the gaps that empty components leave, and capitalise the reply."""
    text = " ".join(text.split())
    text = re.sub(r"\s+([,.?!;:])", r"\1", text)
    text = re.sub(r",([.?!])", r"\1", text)
    text = text.strip()
    return text[:1].upper() + text[1:]


def utf8_sum(word: str) -> int:
    """ELIZA's hash for choosing a memory transform: the sum of the word's bytes."""
    return sum(word.encode("utf-8", "surrogatepass"))


# ----------------------------------------------------------------- engine


class Eliza:
    """One conversation with ELIZA: reply rotation, memories and turn count.

    ``seed=None`` starts each reply rotation at a random rule, another
    integer makes that reproducible, and ``seed=0`` starts every rotation at
    its first rule, so a transcript reads the same every time.
    """

    def __init__(self, script: Script | None = None, *, seed: int | None = None) -> None:
        self._script = _doctor() if script is None else script
        self._random = None if seed == 0 else random.Random(seed)
        self._next_rule_index: dict[tuple[str, int], int] = {}
        self._memories: deque[str] = deque(maxlen=MEMORY_CAPACITY)
        self._turns = 0

    @property
    def script(self) -> Script:
        return self._script

    @property
    def hello(self) -> str:
        """The script's opening line, for whoever starts the conversation."""
        return self._script.hello

    def respond(self, text: str) -> str:
        """ELIZA's reply to one line of input; never empty, never raises on odd text."""
        words = self._read(text)
        if not words:
            return EMPTY_REPLY
        self._turns += 1
        self._remember(words)
        reply = self._answer(self._keystack(words), words)
        return reply if reply is not None else self._fallback(words)

    # -- reading

    def _read(self, text: str) -> list[str]:
        """The words of the first clause with a keyword, else of the whole input."""
        repaired = [repair(clause, self._script.repairs) for clause in clauses(text)]
        for clause in repaired:
            if any(word in self._script.keywords for word in clause):
                return clause[:MAX_WORDS]
        return [word for clause in repaired for word in clause][:MAX_WORDS]

    def _keystack(self, words: Sequence[str]) -> list[str]:
        """Keywords in the input, highest precedence first, ties in reading order."""
        found = dict.fromkeys(word for word in words if word in self._script.keywords)
        return sorted(found, key=lambda word: -self._script.keywords[word].precedence)

    # -- answering

    def _answer(self, keystack: Iterable[str], words: Sequence[str]) -> str | None:
        visited: list[str] = []
        for keyword in keystack:
            if len(visited) >= MAX_VISITS:
                break
            if (reply := self._follow(keyword, words, visited)) is not None:
                return reply
        return None

    def _follow(self, keyword: str, words: Sequence[str], visited: list[str]) -> str | None:
        """Try ``keyword`` and whatever it jumps to; None means move down the keystack."""
        while len(visited) < MAX_VISITS:
            visited.append(keyword)
            entry = self._script.keywords[keyword]
            if entry.link is not None:
                keyword = entry.link
                continue
            outcome = self._apply(entry, words)
            if not isinstance(outcome, Goto):
                return outcome
            keyword = outcome.keyword
        return None

    def _apply(self, entry: Keyword, words: Sequence[str]) -> str | Goto | None:
        """Use the first matching transform's next rule."""
        for index, transform in enumerate(entry.transforms):
            components = match(transform.decomposition, words)
            if components is None:
                continue
            rule = self._next_rule(entry.word, index, transform.reassembly)
            if isinstance(rule, Reply):
                return self._assemble(rule, components) or None
            return rule if isinstance(rule, Goto) else None
        return None

    def _next_rule(self, keyword: str, transform: int, rules: Sequence[Rule]) -> Rule:
        """Rotate through a transform's rules so that ELIZA does not repeat herself."""
        key = (keyword, transform)
        if key not in self._next_rule_index:
            self._next_rule_index[key] = 0 if self._random is None else self._random.randrange(len(rules))
        index = self._next_rule_index[key]
        self._next_rule_index[key] = (index + 1) % len(rules)
        return rules[index]

    def _assemble(self, reply: Reply, components: Components) -> str:
        def fill(slot: re.Match[str]) -> str:
            return reflect(components[int(slot[1]) - 1], self._script.reflections)

        return tidy(_SLOT.sub(fill, reply.template))

    # -- memory

    def _remember(self, words: Sequence[str]) -> None:
        """File a remark about the user's "my ..." away, chosen by a hash of the last word."""
        memory = self._script.memory
        if memory is None or memory.keyword not in words:
            return
        transform = memory.transforms[utf8_sum(words[-1]) % len(memory.transforms)]
        components = match(transform.decomposition, words)
        reply = transform.reassembly[0]
        if components is not None and isinstance(reply, Reply) and (text := self._assemble(reply, components)):
            self._memories.append(text)

    def _fallback(self, words: Sequence[str]) -> str:
        """Nothing matched: a memory every MEMORY_CADENCE turns, else a ``none`` reply."""
        if self._turns % MEMORY_CADENCE == 0 and self._memories:
            return self._memories.popleft()
        return self._follow(NONE_KEYWORD, words, []) or LAST_RESORT
