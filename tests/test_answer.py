"""Answer extraction and tokenising: the rules of docs/contract.md, hostile input, bounded time."""

from __future__ import annotations

import contextlib
import re
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npgym import answer
from npgym.answer import (
    MAX_ANSWER_CHARS,
    MAX_DEPTH,
    AnswerFormatError,
    as_int_array,
    extract_answer,
    parse_answer,
    parse_value,
    render_value,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: [0, 3, 1, 2, 0]", [0, 3, 1, 2, 0]),
        ("answer: [1,2]", [1, 2]),
        ("ANSWER : [1]", [1]),
        ("**Answer:** [1, 2, 3]", [1, 2, 3]),
        ("**Answer**: [1, 2, 3]", [1, 2, 3]),
        ("Answer: [1, 2, 3].", [1, 2, 3]),
        ("Answer: `[1, 2]`", [1, 2]),
        ("Answer:\n```json\n[[0, 1], [2, 3]]\n```", [[0, 1], [2, 3]]),
        ("Answer:\n```\n[4, 5]\n```", [4, 5]),
        ("Answer: $[1, 2]$", [1, 2]),
        ("The format is Answer: YOUR ANSWER. ... Answer: [7, 8]", [7, 8]),
        ("Answer: [1, 2] and later I said Answer: [3]", [3]),
        ("thinking... \\boxed{[1, 2]}", [1, 2]),
        ("Answer: [9] then \\boxed{[1, 2]}", [1, 2]),
        ("Answer: \\boxed{[5, 6]}", [5, 6]),
        ("Answer: [(0, 1, 540), (1, 0, 600)]", [[0, 1, 540], [1, 0, 600]]),
        ("Answer: [1, 2, 3,]", [1, 2, 3]),
        ("Answer: []", []),
        ("Answer: [ ]", []),
        ("Answer: Impossible", "Impossible"),
        ('Answer: "Impossible".', "Impossible"),
        ("Answer: 42", 42),
        ("Answer: [-1, 007]", [-1, 7]),
        ("Answer: [1, 2] (length 12)", [1, 2]),
    ],
)
def test_extracts_and_parses(text: str, expected: object) -> None:
    assert parse_answer(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no marker here [1, 2]", "no 'Answer:' marker"),
        ("Answer:", "empty"),
        ("Answer: [1, 2", "end of answer"),
        ("Answer: [1 2]", "expected ','"),
        ("Answer: [1.5, 2]", "expected ','"),
        ("Answer: [\u0663]", "unexpected"),
        ("Answer: [\uff11]", "unexpected"),
        ("Answer: [1, 2}", "expected ','"),
        ("Answer: (1, 2]", "expected ',' or ')'"),
        ("Answer: {1: 2}", "unexpected"),
        ("Answer: [" + "9" * 19 + "]", "more than 18 digits"),
        ("Answer: " + "[" * (MAX_DEPTH + 1) + "1" + "]" * (MAX_DEPTH + 1), "nested"),
        ("Answer: ['a b']", "single word"),
        ("Answer: [,]", "unexpected"),
        ("\\boxed{[1, 2]", "unterminated"),
    ],
)
def test_format_failures_have_reasons(text: str, message: str) -> None:
    with pytest.raises(AnswerFormatError, match=re.escape(message)):
        parse_answer(text)


def test_non_text_is_a_format_failure() -> None:
    for value in (None, 12, b"Answer: [1]", ["Answer: [1]"]):
        with pytest.raises(AnswerFormatError):
            parse_answer(value)  # type: ignore[arg-type]


def test_answer_longer_than_the_cap_is_rejected() -> None:
    long_list = "[" + ", ".join(["1"] * (MAX_ANSWER_CHARS // 3 + 10)) + "]"
    assert len(long_list) > MAX_ANSWER_CHARS
    with pytest.raises(AnswerFormatError):
        parse_answer("Answer: " + long_list)
    assert parse_answer("Answer: " + long_list, max_chars=2 * MAX_ANSWER_CHARS)[0] == 1


HOSTILE = [
    "x" * 10_000_000 + "Answer: [1]",
    "Answer: " * 500_000,
    "answer" * 1_000_000,
    "Answer: [" + " " * 60_000 + "x",
    "Answer: [1, 2" + " " * 65_000,
    "Answer: " + "[" * 100_000,
    "Answer: [" + "1," * 30_000 + "x]",
    "Answer: [" + "1 " * 30_000 + "]",
    "Answer: [" + "1" * 65_000 + "]",
    "\\boxed{" * 100_000,
    "\\boxed{" + "{" * 60_000,
    "Answer: ```" + "`" * 100_000,
    "Answer:" + " \t\n*_" * 100_000 + "[1]",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_is_handled_in_bounded_time(text: str) -> None:
    started = time.perf_counter()
    with contextlib.suppress(AnswerFormatError):
        parse_answer(text)
    # Linear-time parsing takes milliseconds here; quadratic or backtracking blow-ups take
    # minutes, so this generous bound separates the two without timing noise.
    assert time.perf_counter() - started < 2.0


values = st.recursive(
    st.integers(-(10**18) + 1, 10**18 - 1) | st.from_regex(r"[A-Za-z]{1,8}", fullmatch=True),
    lambda children: st.lists(children, max_size=6),
    max_leaves=40,
).filter(lambda value: _depth(value) <= MAX_DEPTH)


def _depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    return 0


@given(value=values, before=st.text(max_size=50), after=st.sampled_from(["", ".", " done", "\n"]))
def test_render_then_parse_round_trips(value: object, before: str, after: str) -> None:
    text = before.replace("nswer", "") + "\nAnswer: " + render_value(value) + after
    assert parse_answer(text) == value


@given(text=st.text(max_size=400))
def test_arbitrary_text_only_ever_raises_format_errors(text: str) -> None:
    try:
        parse_answer(text)
        parse_answer("Answer: " + text)
        parse_answer("\\boxed{" + text)
    except AnswerFormatError:
        pass


@given(items=st.lists(st.integers(-(10**18) + 1, 10**18 - 1), max_size=60), spaces=st.booleans())
def test_fast_path_agrees_with_the_full_parser(items: list[int], spaces: bool) -> None:
    separator = ", " if spaces else ","
    text = "[" + separator.join(map(str, items)) + "]"
    assert parse_value(text) == items
    assert parse_value(" " + text) == items  # the leading space skips the fast path


@given(
    lists=st.lists(st.lists(st.integers(-(10**18) + 1, 10**18 - 1), max_size=8), max_size=8),
    spaces=st.booleans(),
    trailing=st.booleans(),
)
def test_nested_fast_path_agrees_with_the_full_parser(
    lists: list[list[int]], spaces: bool, trailing: bool
) -> None:
    separator = ", " if spaces else ","
    inner = [("[" + separator.join(map(str, items)) + "]") for items in lists]
    text = "[" + separator.join(inner) + ("," if trailing and lists else "") + "]"
    assert parse_value(text) == lists
    assert parse_value(" " + text) == lists  # the leading space skips the fast paths


def test_extract_answer_skips_markdown_noise() -> None:
    assert extract_answer("Answer: ** `[1]`").startswith("[1]")


def _skip_noise_by_character(segment: str) -> str:
    """The reference for answer._skip_noise: one character at a time (its first version)."""
    start = 0
    while True:
        while start < len(segment) and segment[start] in answer._LEADING_NOISE:
            start += 1
        if start >= 3 and segment[start - 3 : start] == "```":
            tag = answer._FENCE_TAG.match(segment, start)
            if tag is not None and tag.end() > start:
                start = tag.end()
                continue
        return segment[start:]


_NOISE_PIECES = ["```", "```json\n", "```c++ \n", "`", " ", "\t", "\n", "\u00a0", "*", "_", "$"]
_NOISE_PIECES += [">", "#", "json", "[1]"]


@given(st.lists(st.sampled_from(_NOISE_PIECES), max_size=12).map("".join))
def test_skip_noise_matches_the_character_loop(segment: str) -> None:
    """Stripping noise a run at a time skips exactly what the character loop skips, fences too."""
    assert answer._skip_noise(segment) == _skip_noise_by_character(segment)


@pytest.mark.parametrize(
    "value",
    [None, "12", 3, [1.0], [True], [[1]], [10**19], np.array([[1, 2]]), np.array([1.5])],
)
def test_as_int_array_rejects_non_integer_lists(value: object) -> None:
    with pytest.raises(AnswerFormatError):
        as_int_array(value, "tour")


def test_as_int_array_accepts_lists_tuples_and_integer_arrays() -> None:
    for value in ([1, 2], (1, 2), np.array([1, 2], dtype=np.int32), [np.int64(1), 2]):
        result = as_int_array(value, "tour")
        assert result.dtype == np.int64 and result.tolist() == [1, 2]


def test_only_n_lower_cases_to_n() -> None:
    """extract_answer skips ``tail.lower()`` when the tail holds no "n" or "N": sound only while
    no other character's lower case contains "n" (Unicode's case tables, as this Python has
    them)."""
    assert [c for c in map(chr, range(0x110000)) if "n" in c.lower()] == ["N", "n"]


@pytest.mark.parametrize("word", ["ANSWER", "Answer", "aNsWeR", "answer"])
def test_a_later_answer_word_in_any_case_still_counts(word: str) -> None:
    """The shortcut sees the "N" or "n" and falls back to the full search."""
    assert extract_answer(f"Answer: [1] then {word}: [2]") == "[2]"
