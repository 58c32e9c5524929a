"""Answer extraction and tokenising: the rules of docs/contract.md, hostile input, bounded time."""

from __future__ import annotations

import contextlib
import json
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
from npgym.instance import Instance
from npgym.results import Score
from npgym.task import Task


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


# --- JSON nesting: an explicit bound, never the interpreter's stack ----------------------------

_JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab\n\u2028')
_JSON_VALUES = st.recursive(
    _JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=40,
)


def _json_depth(value: object) -> int:
    """How deep arrays and objects nest in ``value`` (0 for a scalar)."""
    if isinstance(value, list):
        return 1 + max(map(_json_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_json_depth, value.values()), default=0)
    return 0


@given(_JSON_VALUES, st.sampled_from([1, 7, answer._DEPTH_CHUNK]), st.booleans())
def test_the_json_depth_scan_is_exact_on_valid_json(
    value: object, chunk: int, vectorised: bool
) -> None:
    """Brackets inside strings (escaped quotes and backslashes too) never count; the scan
    refuses exactly the values nested deeper than the bound, whatever its chunk size, in
    numpy and in the Python walk of small texts alike."""
    text, depth = json.dumps(value, ensure_ascii=False), _json_depth(value)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(answer, "_DEPTH_CHUNK", chunk)
        patch.setattr(answer, "_SMALL_SCAN", -1 if vectorised else 10**9)
        answer.check_json_depth(text, depth)
        if depth:  # brackets after the first value closes are not its own
            answer.check_json_depth(text + " ]" + "[" * 50, depth, first_value=True)
            with pytest.raises(answer.JSONDepthError):
                answer.check_json_depth(text, depth - 1)


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_json_at_the_depth_limit_is_read_and_one_past_is_refused(opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    limit = answer.MAX_JSON_DEPTH
    at_limit = opener * limit + "1" + closer * limit
    assert _json_depth(answer.loads_json(at_limit)) == limit
    with pytest.raises(answer.JSONDepthError, match=f"more than {limit} deep"):
        answer.loads_json(opener + at_limit + closer)
    with pytest.raises(answer.JSONDepthError):  # unclosed: a decoder would descend all the same
        answer.loads_json(opener * 200_000)
    assert answer.loads_json(f'["{"[" * 200_000}"]') == ["[" * 200_000]  # inside a string


def test_loads_json_refuses_lone_surrogates_and_keeps_pairs() -> None:
    assert answer.loads_json('["\\ud83d\\ude00", "\\\\ud800"]') == ["\U0001f600", "\\ud800"]
    for text in ['"\\ud800 Answer: [0]"', '{"\\udc00": 1}', '["\\ude00\\ud83d"]']:
        with pytest.raises(ValueError, match="lone surrogate"):
            answer.loads_json(text)
    assert answer.loads_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # a byte-order mark
    with pytest.raises(UnicodeDecodeError):
        answer.loads_json(b'{"a": "\xff"}')


def _invert_answer(depth: int) -> str:
    """An Invert-TSP answer (a JSON object) whose one field nests ``depth - 1`` lists deep."""
    return 'Answer: {"distances": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def _score_deeper(task: Task, instance: Instance, completion: str, frames: int) -> Score:
    """``task.score`` called ``frames`` Python frames deeper than here."""
    if frames:
        return _score_deeper(task, instance, completion, frames - 1)
    return task.score(instance, completion)


def test_an_invert_answer_scores_the_same_at_any_stack_depth() -> None:
    """A 2 KB answer nested 960 deep scored -0.5 at the top level (decoded, then not a valid
    instance) and -2.5 forty frames deeper (the decoder hit the recursion limit). Now the
    bound decides: past it, a format failure that says so, at every depth of the stack."""
    import npgym

    task = npgym.get_task("Invert-TSP")
    instance = task.generate(0, tier="easy")
    limit = answer.MAX_JSON_DEPTH
    completions = {
        "reference": task.format_answer(task.reference(instance).solution),
        "at the limit": _invert_answer(limit),
        "one past": _invert_answer(limit + 1),
        "960 deep": _invert_answer(960),
    }
    assert len(completions["960 deep"]) > 1900
    for name, completion in completions.items():
        scores = [_score_deeper(task, instance, completion, frames) for frames in (0, 40, 400)]
        assert scores[0] == scores[1] == scores[2], name
        deep = "nested more than" in (scores[0].reason or "")
        assert deep == (name in ("one past", "960 deep")), (name, scores[0].reason)
    assert _score_deeper(task, instance, completions["reference"], 0).reward > 0
    assert not _score_deeper(task, instance, completions["960 deep"], 0).format_ok
