"""The ELIZA engine and the DOCTOR script (symposium/eliza/engine.py, doctor.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symposium.eliza.engine import (
    DEFAULT_SCRIPT_PATH,
    EMPTY_REPLY,
    Eliza,
    Script,
    ScriptError,
    load_script,
    parse_script,
)

NONE_REPLIES = {
    "I am not sure I understand you fully.",
    "Please go on.",
    "What does that suggest to you?",
    "Do you feel strongly about discussing such things?",
}

MINIMAL = """
hello = "Hi."

[[keywords]]
word = "none"
[[keywords.transforms]]
decomposition = [".."]
reassembly = ["Go on."]
"""


def script(extra: str) -> Script:
    return parse_script(MINIMAL + extra)


# ------------------------------------------------------------------ script


def test_doctor_script_loads_and_validates() -> None:
    doctor = load_script()
    assert doctor == load_script(DEFAULT_SCRIPT_PATH)
    assert doctor.hello == "How do you do. Please tell me your problem."
    assert doctor.memory is not None and doctor.memory.keyword == "my"
    for word in ("sorry", "remember", "if", "dreamt", "dream", "perhaps", "name", "xforeign",
                 "hello", "computer", "am", "are", "your", "was", "i", "you", "yes", "no",
                 "my", "can", "what", "because", "why", "everyone", "always", "like", "dit", "none"):
        assert word in doctor.keywords, word
    assert doctor.keywords["how"].link == "what"
    assert doctor.reflections["my"] == "your"
    assert doctor.repairs["dont"] == ("don't",)


def bad_keyword(decomposition: str = '[".."]', reassembly: str = '["x"]') -> str:
    """A keyword "bad" with one transform, for breaking one piece at a time."""
    return (
        '[[keywords]]\nword = "bad"\n[[keywords.transforms]]\n'
        f"decomposition = {decomposition}\nreassembly = {reassembly}\n"
    )


@pytest.mark.parametrize(
    "extra",
    [
        bad_keyword(decomposition='["3..1"]'),
        bad_keyword(decomposition='["#nosuchtag"]'),
        bad_keyword(decomposition='["{a, }"]'),
        bad_keyword(decomposition="[]"),
        bad_keyword(reassembly='["Say {2}."]'),
        bad_keyword(reassembly='["=nowhere"]'),
        bad_keyword(reassembly='["{x}"]'),
        bad_keyword(reassembly='["unmatched }"]'),
        '[[keywords]]\nword = "bad"\nlink = "nowhere"\n',
        '[[keywords]]\nword = "bad"\nprecedence = "high"\n',
        '[[keywords]]\nword = "bad"\ntransform = []\n',
    ],
)
def test_malformed_script_names_the_keyword(extra: str) -> None:
    with pytest.raises(ScriptError, match="keyword 'bad'"):
        script(extra)


def test_malformed_script_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(MINIMAL + bad_keyword(decomposition='["N..M"]'), encoding="utf-8")
    with pytest.raises(ScriptError, match="keyword 'bad'"):
        load_script(path)
    with pytest.raises(ScriptError, match="not valid TOML"):
        parse_script("hello = ")
    with pytest.raises(ScriptError, match="cannot read"):
        load_script(tmp_path / "missing.toml")


def test_script_needs_a_none_keyword() -> None:
    with pytest.raises(ScriptError, match="'none'"):
        parse_script('hello = "Hi."\n[[keywords]]\nword = "x"\nreflection = "y"\n')


# --------------------------------------------------------------- responses


def test_hello_gives_first_hello_reply() -> None:
    assert Eliza(seed=0).respond("Hello") == "How do you do. Please state your problem."


def test_empty_input() -> None:
    eliza = Eliza(seed=0)
    assert eliza.respond("") == EMPTY_REPLY == "Please tell me more."
    assert eliza.respond("   \n\t") == EMPTY_REPLY


def test_feelings_are_echoed() -> None:
    reply = Eliza(seed=0).respond("I feel sad")
    assert "sad" in reply
    assert reply == "Do you often feel sad?"


def test_pronouns_are_reflected() -> None:
    eliza = Eliza(seed=0)
    replies = [eliza.respond("My mother hates me") for _ in range(4)]
    assert "your mother" in replies[0].lower()
    assert all("my mother" not in reply.lower() for reply in replies)
    assert "hates you" in replies[0]


def test_remember() -> None:
    reply = Eliza(seed=0).respond("I remember my dog")
    assert "your dog" in reply
    assert reply == "Do you often think of your dog?"


def test_sorry_and_computer() -> None:
    eliza = Eliza(seed=0)
    assert eliza.respond("sorry") == "Please don't apologize."
    assert "apolog" in eliza.respond("Sorry!").lower()
    assert eliza.respond("computers scare me") == "Do computers worry you?"
    # "machine" links to "computer", so it continues the same rotation.
    assert eliza.respond("I hate this machine") == "Why do you mention computers?"


def test_first_letter_is_capitalised_and_i_is_upper_case() -> None:
    eliza = Eliza(seed=0)
    assert eliza.respond("you are a program") == "What makes you think I am a program?"
    assert eliza.respond("I think you hate me") == "Why do you think I hate you?"


def test_only_the_first_clause_with_a_keyword_is_used() -> None:
    eliza = Eliza(seed=0)
    assert eliza.respond("Well, I am doing well, thanks!") == (
        "Is it because you are doing well that you came to me?"
    )


def test_repairs_apply_before_matching() -> None:
    assert Eliza(seed=0).respond("I cant sleep") == "How do you know you can't sleep?"


def test_goto_and_link() -> None:
    eliza = Eliza(seed=0)
    assert eliza.respond("Why is the sky blue") == "Why do you ask?"  # why → =what
    assert eliza.respond("How is the weather") == "Does that question interest you?"  # how links what
    assert eliza.respond("We are alike") == "In what way?"  # alike links dit
    assert eliza.respond("Sprechen Sie deutsch") == "I am sorry, I speak only English."


def test_newkey_falls_through_to_the_next_keyword() -> None:
    # "like" outranks "i" but has nothing to say about plain liking.
    assert Eliza(seed=0).respond("I like cheese") == "You say you like cheese?"


def test_goto_cycles_are_broken() -> None:
    loop = script(
        '[[keywords]]\nword = "a"\n[[keywords.transforms]]\ndecomposition = [".."]\nreassembly = ["=b"]\n'
        '[[keywords]]\nword = "b"\n[[keywords.transforms]]\ndecomposition = [".."]\nreassembly = ["=a"]\n'
    )
    assert Eliza(loop, seed=0).respond("a b") == "Go on."


def test_memory_comes_back_when_nothing_matches() -> None:
    eliza = Eliza(seed=0)
    eliza.respond("My car is red")
    replies = [eliza.respond("the weather is nice") for _ in range(4)]
    memories = [reply for reply in replies if "your car is red" in reply]
    assert len(memories) == 1
    assert memories[0].startswith(("Lets discuss", "Earlier", "But", "Does that"))
    assert all(reply in NONE_REPLIES for reply in replies if reply not in memories)


def test_rules_rotate() -> None:
    eliza = Eliza(seed=0)
    first, second = eliza.respond("sorry"), eliza.respond("sorry")
    assert first != second
    assert second == "Apologies are not necessary."


def test_seed_zero_is_fully_deterministic() -> None:
    inputs = ["Hello", "I feel sad", "sorry", "sorry", "yes", "blah", "blah", "blah"]
    runs = [[engine.respond(text) for text in inputs] for engine in (Eliza(seed=0), Eliza(seed=0))]
    assert runs[0] == runs[1]
    assert runs[0][:5] == [
        "How do you do. Please state your problem.",
        "Do you often feel sad?",
        "Please don't apologize.",  # every rotation starts at its first rule...
        "Apologies are not necessary.",  # ...and moves on
        "You seem quite positive.",
    ]


def test_same_seed_same_sequence() -> None:
    inputs = ["Hello", "I feel sad", "My mother hates me", "sorry", "sorry", "yes", "blah", "why not"]
    for seed in (1, 7, 12345):
        first, second = Eliza(seed=seed), Eliza(seed=seed)
        assert [first.respond(text) for text in inputs] == [second.respond(text) for text in inputs]


def test_unseeded_engines_still_answer() -> None:
    assert Eliza().respond("sorry") in {
        "Please don't apologize.",
        "Apologies are not necessary.",
        "What feelings do you have when you apologize?",
        "I've told you that apologies are not required.",
    }


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(),
            st.text(alphabet=st.characters(codec="utf-8"), max_size=50),
            st.text(alphabet=" ,.?!;:'\"-my you i am are me your remember", max_size=200),
            st.text(min_size=2000, max_size=5000),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_respond_never_fails(lines: list[str]) -> None:
    eliza = Eliza(seed=3)
    for line in lines:
        reply = eliza.respond(line)
        assert isinstance(reply, str) and reply.strip()


def test_respond_copes_with_very_long_input() -> None:
    eliza = Eliza(seed=0)
    assert eliza.respond("i feel i think you " * 5000)
    assert eliza.respond("my " * 100_000)
