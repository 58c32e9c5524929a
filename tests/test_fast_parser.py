"""The fast parser against the reference tokenizer: the same verdict on every input.

``parse_value_fast`` (numba scanner, arrays out) must return what ``parse_value_reference``
returns, or raise the same :class:`AnswerFormatError` message, on the existing corpora (the
answer tests, the hostile-separator templates, the seeded fuzz corpus) and on hypothesis-made
answers built from lists, integers, words and the hostile separators. Also: only the last
``MAX_SCAN_CHARS`` of a completion are searched, so a 10 MB completion scores quickly.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym.answer import (
    _BOXED,
    _MARKER,
    MAX_ANSWER_CHARS,
    MAX_SCAN_CHARS,
    AnswerFormatError,
    IntRows,
    _boxed_content,
    _skip_noise,
    answer_key,
    extract_answer,
    parse_value_fast,
    parse_value_reference,
    to_python,
)
from npgym.results import NOT_SCANNED
from npgym.testing import ContractError, check_fused_kernel, parser_path
from tests.test_answer import HOSTILE
from tests.test_hostile_text import TEMPLATES, _fuzz_corpus, _instance, hostile_characters


def _verdict(parse: object, segment: str) -> object:
    """What a parser makes of ``segment``: the plain value, or the error message."""
    try:
        return ("value", to_python(parse(segment)))  # type: ignore[operator]
    except AnswerFormatError as error:
        return ("error", str(error))


def _assert_same(segment: str) -> None:
    fast = _verdict(parse_value_fast, segment)
    assert fast == _verdict(parse_value_reference, segment), ascii(segment[:200])


def _assert_same_on_completion(text: str) -> None:
    try:
        segment = extract_answer(text)
    except AnswerFormatError:
        return
    _assert_same(segment)


def test_shapes_of_the_fast_path() -> None:
    flat = parse_value_fast("[3, -1, 007,]")
    assert isinstance(flat, np.ndarray) and flat.dtype == np.int64
    assert flat.tolist() == [3, -1, 7]
    nested = parse_value_fast("[(0, 1, 540), [2,\u30003, 4],]")
    assert isinstance(nested, IntRows) and nested.tolist() == [[0, 1, 540], [2, 3, 4]]
    assert nested.first_row_not_of_length(3) == -1 and nested.first_row_not_of_length(2) == 0
    assert nested.row_length(1) == 3
    assert parse_value_fast("Impossible") == "Impossible"  # not a list: the reference reads it


CORNERS = [
    "[]",
    "[ ]",
    "[,]",
    "[1,,2]",
    "[[]]",
    "[[],[1]]",
    "[[1],2]",
    "[1,[2]]",
    "[[[1]]]",
    "[(1, 2]]",
    "[(1, 2)",
    "(1, 2]",
    "[1 2]",
    "[1-2]",
    "[--1]",
    "[-]",
    "[- 1]",
    "[1e5]",
    "[1.5]",
    "[" + "9" * 18 + "]",
    "[-" + "9" * 18 + "]",
    "[" + "9" * 19 + "]",
    "[" + "0" * 19 + "]",
    "[\u0663]",
    "[1,\ud8002]",
    "[1]\ud800",
    "\x1c[1,\x1f2]\x1e",
    "[1,\u20282]",
    "[1,\u20272]",
    "[1,\u200b2]",
    "['a', 1]",
    "[1, 2] trailing prose [3]",
    "",
    " ",
    "[",
    "(",
    "42",
    "-7",
    "word",
]


@pytest.mark.parametrize("segment", CORNERS)
def test_corner_cases_agree(segment: str) -> None:
    _assert_same(segment)


def test_hostile_corpus_agrees() -> None:
    for text in HOSTILE:
        _assert_same_on_completion(text)


def test_separator_templates_agree() -> None:
    for char in hostile_characters():
        for template in TEMPLATES:
            _assert_same_on_completion(template.format(c=char))


@pytest.mark.parametrize("task_name", npgym.list_tasks())
def test_fuzz_corpus_agrees(task_name: str) -> None:
    task, instance, _ = _instance(task_name)
    for text in _fuzz_corpus(task, instance, seed=10, count=2_000):
        _assert_same_on_completion(text)


_GLUE = st.sampled_from(
    [" ", "", ",", "\n", "\t", "\x1c", "\x1f", "\x85", "\xa0", "\u3000", "\u200b"]
)
_ATOMS = st.one_of(
    st.integers(-(10**19), 10**19).map(str),
    st.sampled_from(["-", "--1", "007", "x", "Impossible", "1.5", "\u0663", "'a'", '"b"']),
)


@st.composite
def _lists(draw: st.DrawFn, depth: int = 0) -> str:
    opener = draw(st.sampled_from(["[", "(", "["]))
    closer = draw(st.sampled_from(["]", ")"])) if draw(st.integers(0, 9)) == 0 else None
    closer = closer or {"[": "]", "(": ")"}[opener]
    items = []
    for _ in range(draw(st.integers(0, 6))):
        if depth < 3 and draw(st.integers(0, 3)) == 0:
            items.append(draw(_lists(depth + 1)))
        else:
            items.append(draw(_ATOMS))
    separator = draw(st.sampled_from([",", ", ", ",\x1c", ",\u3000", " ", ",,"]))
    body = separator.join(draw(_GLUE) + item + draw(_GLUE) for item in items)
    trailing = draw(st.sampled_from(["", ",", " ,", "x"]))
    return opener + body + trailing + closer


@given(answer=_lists(), before=_GLUE, after=st.text(max_size=5))
def test_hypothesis_answers_agree(answer: str, before: str, after: str) -> None:
    _assert_same(before + answer + after)
    if len(answer) > 2:  # the same answer cut short
        _assert_same(answer[: len(answer) // 2])


_SOUP = st.sampled_from("[](),-0123456789 \x1c\u3000\ud800ab")


@given(segment=st.text(alphabet=_SOUP, max_size=40))
def test_hypothesis_bracket_soup_agrees(segment: str) -> None:
    _assert_same(segment)


@pytest.mark.parametrize("task_name", ["TSP", "MeetingScheduling", "MinBisection"])
def test_only_the_last_window_is_scanned(task_name: str) -> None:
    task, instance, reference = _instance(task_name)
    answer = task.format_answer(reference.solution)
    far_back = answer + "x" * MAX_SCAN_CHARS
    assert not task.score(instance, far_back, reference).format_ok
    inside = "x" * (MAX_SCAN_CHARS + 10) + answer + "x" * 1000
    assert task.score(instance, inside, reference).reward == 2.0


@pytest.mark.parametrize(
    "filler",
    ["x", "answer", "Answer ", "\u0130", "\\boxed{", "[1, "],
    ids=["letters", "words", "near-markers", "lowercase-grows", "boxed", "lists"],
)
def test_a_10mb_completion_scores_within_a_second(filler: str) -> None:
    task, instance, reference = _instance("TSP")
    text = filler * (10_000_000 // len(filler)) + task.format_answer(reference.solution)
    task.score(instance, text[-1000:], reference)  # load the kernels first: time the text alone
    started = time.perf_counter()
    task.score(instance, text, reference)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("task_name", npgym.list_tasks())
def test_score_many_equals_score_in_a_loop(task_name: str) -> None:
    """Sharing work between completions with the same answer changes no score."""
    task, instance, reference = _instance(task_name)
    rng = np.random.default_rng(1)
    answers = [task.format_answer(reference.solution), "Answer: I am not sure.", "no marker"]
    answers += [task.format_answer(task.random_solution(instance, rng)) for _ in range(3)]
    group: list[object] = [f"Reasoning {i}. " + answers[i % len(answers)] for i in range(24)]
    group += [answers[0].encode(), None, "\\boxed{[0, 1", answers[0] + " answer: [0]"]
    many = task.score_many(instance, group, reference)  # type: ignore[arg-type]
    assert many == [task.score(instance, text, reference) for text in group]  # type: ignore[arg-type]


# --- the fused kernel (scan and check in one call) against the parser's path -----------------


def _assert_same_score(task_name: str, completions: Iterable[str]) -> None:
    task, instance, reference = _instance(task_name)
    slow = parser_path(task)
    for text in completions:
        fused = task.score(instance.model_copy(), text, reference)
        assert fused == slow.score(instance.model_copy(), text, reference), ascii(text[-200:])


@pytest.mark.parametrize("task_name", npgym.list_tasks())
def test_fused_kernel_scores_the_fuzz_corpus_like_the_parser(task_name: str) -> None:
    task, instance, _ = _instance(task_name)
    _assert_same_score(task_name, _fuzz_corpus(task, instance, seed=11, count=500))


@pytest.mark.parametrize("task_name", npgym.list_tasks())
@given(answer=_lists(), before=_GLUE)
def test_fused_kernel_scores_hypothesis_answers_like_the_parser(
    task_name: str, answer: str, before: str
) -> None:
    _assert_same_score(task_name, ["Answer: " + before + answer, "Answer: " + answer[:-1]])


@pytest.mark.parametrize("task_name", npgym.list_tasks())
def test_the_fused_kernel_serves_every_well_formed_answer(task_name: str) -> None:
    """The parser's path is for other shapes and malformed text: a feasible answer in the
    task's shape never needs it (SetCover's ``Impossible`` is a word, not a list)."""
    task, instance, reference = _instance(task_name)
    answer = task.format_answer(reference.solution)[len("Answer: ") :]
    result = task.check_answer(instance, answer.encode())
    assert result is not None and result[0] != NOT_SCANNED
    assert task.verdict(instance, result) == task.verify(instance, reference.solution)


def test_a_lying_fused_kernel_fails_the_contract() -> None:
    class Lying(type(npgym.get_task("SubsetSum"))):  # type: ignore[misc]
        """Its fused kernel counts one index too many on every feasible answer."""

        def check_answer(self, instance: Any, answer: bytes) -> tuple[int, ...]:
            code, a, b, count = super().check_answer(instance, answer)
            return code, a, b, count + 1 if code == 0 else count

    with pytest.raises(ContractError, match="the fused kernel scores"):
        check_fused_kernel(Lying(), "easy")


_PIECES = st.sampled_from(
    [
        "answer",
        "Answer",
        "ANSWER:",
        "answer :",
        "**Answer**:",
        "\\boxed{",
        "}",
        "{",
        ":",
        " ",
        "\n",
        "\u0130",
        "[1, 2]",
        "x",
        "Answer:",
    ]
)


def _extracted(text: str) -> tuple[str, str]:
    try:
        return ("answer", extract_answer(text))
    except AnswerFormatError as error:
        return ("error", str(error))


@given(
    first=st.lists(_PIECES, max_size=8).map("".join),
    second=st.lists(_PIECES, max_size=8).map("".join),
    tail=st.lists(_PIECES, max_size=8).map("".join),
)
def test_equal_answer_keys_mean_equal_answers(first: str, second: str, tail: str) -> None:
    """score_many keys completions by answer_key: what precedes the key must never matter,
    and completions without a key (no marker, no box) all fail alike."""
    one, two = first + "Answer:" + tail, second + "Answer:" + tail
    assert answer_key(one) == answer_key(two) is not None
    assert _extracted(one) == _extracted(two)
    one, two = first + tail, second + tail
    if answer_key(one) == answer_key(two):
        assert _extracted(one) == _extracted(two)
    if answer_key(one) is None:
        assert _extracted(one) == ("error", "no 'Answer:' marker found")


def _extracted_by_definition(text: str) -> tuple[str, str]:
    """extract_answer as the contract defines it: the last marker's regex match, unless a
    ``\\boxed{`` starts after it; no shortcut."""
    marker_end = max((match.end() for match in _MARKER.finditer(text)), default=-1)
    boxed = text.rfind(_BOXED)
    try:
        if boxed >= 0 and boxed >= marker_end:
            return ("answer", _boxed_content(text, boxed + len(_BOXED), MAX_ANSWER_CHARS))
        if marker_end < 0:
            return ("error", "no 'Answer:' marker found")
        return ("answer", _skip_noise(text[marker_end : marker_end + MAX_ANSWER_CHARS + 64]))
    except AnswerFormatError as error:
        return ("error", str(error))


@given(pieces=st.lists(_PIECES, max_size=12))
def test_extraction_follows_its_definition(pieces: list[str]) -> None:
    """The one-character shortcuts (the plain marker at the last colon, a backslash before
    any \\boxed{ search) find what the marker regex and the last box find."""
    text = "".join(pieces)
    assert _extracted(text) == _extracted_by_definition(text)


def test_a_text_without_a_marker_or_a_box_has_no_key() -> None:
    assert answer_key("Attempt 1: no marker here, [1, 2]") is None
    assert answer_key("a \\ backslash but no box: [1]") is None
    assert answer_key("so \\boxed{[1]}") == "{[1]}"
    assert answer_key("x Answer: [1]") == ": [1]"
    assert answer_key("x ANSWER : [1] \\boxed{[2]}") == ": [1] \\boxed{[2]}"


_MARKER_PIECES = st.sampled_from(
    [
        "answer",
        "ANSWER",
        "Answer",
        "nswer",
        "a",
        ":",
        "::",
        " ",
        "*",
        "_",
        "**",
        "\n",
        "\u2028",
        "\u0130",
        "x",
        "answer :",
        "answer**:",
        "answer  \t :",
        "[1]",
    ]
)


@given(pieces=st.lists(_MARKER_PIECES, max_size=60))
def test_the_last_marker_is_the_last_regex_match(pieces: list[str]) -> None:
    """The colon-first search finds what the marker's definition (the regex) finds last, on
    texts with few and with many colons (past the probes, the chunked search takes over)."""
    text = "".join(pieces)
    matches = [match.end() for match in _MARKER.finditer(text)]
    assert answer_key(text) == (text[matches[-1] - 1 :] if matches else None)
    padded = text + " :" * 20  # more colons than the probes: the chunked search decides
    matches = [match.end() for match in _MARKER.finditer(padded)]
    assert answer_key(padded) == (padded[matches[-1] - 1 :] if matches else None)
