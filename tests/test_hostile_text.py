"""Hostile completions: separators and control characters never crash a reward (issue: score()
raised on ``\\x1c``-``\\x1f``).

Every step of the parser gives whitespace one meaning. These tests try every character of the
Unicode categories Zs, Zl, Zp and Cc, and every character that ``str.split()``, ``str.strip()``,
``\\s`` and ``int()`` disagree on, as the separator inside an answer, as padding around it and
next to the ``Answer:`` marker, on every task; then fuzz with hypothesis and, in the slow suite,
with 100,000 seeded completions per task. The autouse fixture in ``conftest.py`` fails any test
in which :data:`npgym.scoring.GUARD_TRIPS` moves, so the last-resort guard can never hide a bug.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym.answer import AnswerFormatError, parse_answer
from npgym.integrations import trl as npgym_trl
from npgym.scoring import GUARD_TRIPS, MEMOS_KEY, SCORE_MEMO_SIZE

TASK_NAMES = npgym.list_tasks()
SEPARATOR_CATEGORIES = ("Zs", "Zl", "Zp", "Cc")
FORMAT_FAILURE = -2.5


def _int_accepts_as_padding(char: str) -> bool:
    try:
        int(char + "1" + char)
    except ValueError:
        return False
    return True


@cache
def hostile_characters() -> tuple[str, ...]:
    """Every Zs/Zl/Zp/Cc character, plus each character the four whitespace rules disagree on."""
    chosen = []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if unicodedata.category(char) in SEPARATOR_CATEGORIES:
            chosen.append(char)
            continue
        if unicodedata.category(char) == "Nd":  # int() reads every decimal digit: covered below
            continue
        rules = {
            bool(re.fullmatch(r"\s", char)),
            char.isspace(),
            len(f"a{char}b".split()) == 2,
            f"{char}a{char}".strip() == "a",
            _int_accepts_as_padding(char),
        }
        if len(rules) > 1:
            chosen.append(char)
    return tuple(chosen)


UNICODE_DIGITS = ("\u0663", "\u06f3", "\u0969", "\uff13", "\U0001d7d1")
"""Decimal digits outside ASCII: ``int()`` reads them, the parser must not."""

TEMPLATES = (
    "Answer: [0,{c}1]",
    "Answer: [0{c},{c}1{c}]{c}",
    "Answer:{c}[0, 1]",
    "{c}Answer{c}:{c}[0, 1]",
    "Answer: [[0,{c}1],{c}[2]]",
    "Answer: [{c}[0{c},1{c}]{c},[2]]",
    "Answer: ({c}0{c},{c}1{c})",
    "Answer: [0,{c}1,{c}]",
    "Answer:{c}Impossible{c}",
    "\\boxed{{{c}[0,{c}1]{c}}}",
    "Answer: {c}",
    "Answer: [{c}]",
)


@cache
def _instance(task_name: str) -> tuple[npgym.Task, npgym.Instance, npgym.Reference]:
    task = npgym.get_task(task_name)
    instance = task.generate(0, tier="easy")
    return task, instance, task.reference(instance, exact=False)


def _parsed(text: str) -> object:
    try:
        return parse_answer(text)
    except AnswerFormatError:
        return AnswerFormatError


def test_the_disagreeing_characters_are_covered() -> None:
    characters = hostile_characters()
    assert {"\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u2028", "\u3000"} <= set(characters)
    assert "\x00" in characters and "\t" in characters


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_separator_reads_as_a_space_or_fails_the_format(template: str) -> None:
    spaced = _parsed(template.format(c=" "))
    for char in hostile_characters():
        parsed = _parsed(template.format(c=char))
        if char.isspace():
            assert parsed == spaced, f"{char!r} in {template!r}"
        else:
            assert parsed in (spaced, AnswerFormatError), f"{char!r} in {template!r}"


@pytest.mark.parametrize("digit", UNICODE_DIGITS)
def test_unicode_digits_are_a_format_failure(digit: str) -> None:
    with pytest.raises(AnswerFormatError):
        parse_answer(f"Answer: [0, {digit}]")
    with pytest.raises(AnswerFormatError):
        parse_answer(f"Answer: {digit}")


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_score_survives_every_separator_in_every_position(task_name: str) -> None:
    task, instance, reference = _instance(task_name)
    for char in hostile_characters():
        for template in TEMPLATES:
            text = template.format(c=char)
            score = task.score(instance, text, reference)
            assert score.format_ok or score.reward == FORMAT_FAILURE
            assert "internal error" not in score.reason, (text, score.reason)
            if char.isspace():
                plain = task.score(instance, template.format(c=" "), reference)
                assert (score.reward, score.reason) == (plain.reward, plain.reason), text


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_score_many_and_non_text_inputs_are_format_failures(task_name: str) -> None:
    task, instance, reference = _instance(task_name)
    hostile = [None, 7, 1.5, ["Answer: [0]"], {"content": "Answer: [0]"}, object()]
    for score in task.score_many(instance, hostile, reference):  # type: ignore[arg-type]
        assert not score.format_ok and score.reward == FORMAT_FAILURE
        assert score.reason == "completion is not text"
    texts = ["Answer: [0,\x1c1]", b"Answer: [0,\x1f1]", "no answer"]
    many = task.score_many(instance, texts, reference)  # type: ignore[arg-type]
    assert [s.reward for s in many] == [task.score(instance, t, reference).reward for t in texts]


def test_the_guard_names_the_failing_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in a step becomes a format failure that says where; the counter records it."""
    task, instance, reference = _instance("TSP")

    def broken(*_: object) -> None:
        raise ZeroDivisionError("boom")

    before = GUARD_TRIPS.copy()
    cover_task, cover, cover_reference = _instance("SetCover")
    optimal = task.format_answer(reference.solution)
    cases = (  # the fused path, then the parser's path (a bare integer, the word Impossible)
        (task, instance, reference, optimal, "scan", "check_answer"),
        (task, instance, reference, optimal, "reward", "verdict"),
        (task, instance, reference, "Answer: 5", "shape", "to_solution"),
        (cover_task, cover, cover_reference, "Answer: Impossible", "verify", "check"),
    )
    for step_task, step_instance, step_reference, answer, step, method in cases:
        monkeypatch.setattr(step_task, method, broken)
        fresh = step_instance.model_copy()  # no memoised score: every step runs
        score = step_task.score(fresh, answer, step_reference)
        monkeypatch.undo()
        assert not score.format_ok and score.reward == FORMAT_FAILURE
        assert f"internal error in the {step} step (ZeroDivisionError)" in score.reason
        key = (step_task.name, step)
        assert GUARD_TRIPS[key] == before[key] + 1
    GUARD_TRIPS.clear()
    GUARD_TRIPS.update(before)  # the trips above were on purpose: the autouse check ignores them


def test_trl_and_verl_rewards_take_any_completion() -> None:
    task, instance, reference = _instance("Knapsack")
    hostile = [None, 3, ["x", 1], [{"role": "assistant", "content": None}], "Answer: [0,\x1e1]"]
    columns = {
        "task": ["Knapsack"] * len(hostile),
        "instance": [instance.to_json()] * len(hostile),
        "reference": [reference.model_dump_json()] * len(hostile),
    }
    rewards = npgym_trl.npgym_reward(prompts=[""] * len(hostile), completions=hostile, **columns)
    assert rewards[:4] == [FORMAT_FAILURE] * 4
    assert rewards[4] == task.score(instance, "Answer: [0, 1]", reference).reward
    for part in npgym_trl.reward_parts():
        assert len(part(prompts=[""] * len(hostile), completions=hostile, **columns)) == 5
    verl = pytest.importorskip("npgym.integrations.verl")
    info = {"task": "Knapsack", "instance": columns["instance"][0]}
    info["reference"] = columns["reference"][0]
    for completion in hostile:
        result = verl.compute_score("npgym/Knapsack-easy", completion, None, info)
        assert isinstance(result["score"], float)


_SEPARATORS = st.sampled_from(hostile_characters())
_GLUE = st.lists(_SEPARATORS | st.sampled_from([" ", ",", "[", "]", "(", ")"]), max_size=4).map(
    "".join
)


@st.composite
def _hostile_completions(draw: st.DrawFn) -> str:
    """An answer list whose separators, padding and marker neighbours are hostile characters."""
    items = draw(st.lists(st.integers(-3, 40) | st.lists(st.integers(0, 40), max_size=4)))
    separator = draw(_SEPARATORS)
    parts = []
    for item in items:
        body = (
            str(item)
            if isinstance(item, int)
            else "[" + f",{separator}".join(str(value) for value in item) + "]"
        )
        parts.append(draw(_GLUE) + body + draw(_GLUE))
    marker = draw(st.sampled_from(["Answer:", "answer :", "**Answer:**", "\\boxed{"]))
    return (
        draw(st.text(max_size=20))
        + draw(_SEPARATORS)
        + marker
        + draw(_SEPARATORS)
        + "["
        + f",{separator}".join(parts)
        + "]"
        + draw(_GLUE)
    )


@pytest.mark.parametrize("task_name", TASK_NAMES)
@given(text=_hostile_completions())
def test_hypothesis_hostile_separators_never_trip_the_guard(task_name: str, text: str) -> None:
    task, instance, reference = _instance(task_name)
    score = task.score(instance, text, reference)
    assert "internal error" not in score.reason
    assert score.format_ok or score.reward == FORMAT_FAILURE


FUZZ_COMPLETIONS_PER_TASK = 100_000


def _fuzz_corpus(task: npgym.Task, instance: npgym.Instance, seed: int, count: int) -> list[str]:
    """``count`` seeded completions: near-valid answers of the task's shape, mangled."""
    rng = np.random.default_rng(seed)
    characters = hostile_characters()
    shapes = [task.format_answer(task.greedy_solution(instance))]
    shapes += [task.format_answer(task.random_solution(instance, rng)) for _ in range(20)]
    shapes.append(json.dumps(["Answer:", 1]))
    corpus = []
    for _ in range(count):
        text = list(shapes[int(rng.integers(len(shapes)))])
        for _ in range(int(rng.integers(1, 6))):
            position = int(rng.integers(len(text) + 1))
            roll = rng.random()
            if roll < 0.5:
                replacement = characters[int(rng.integers(len(characters)))]
            elif roll < 0.7:
                replacement = "[],()-0123456789 "[int(rng.integers(17))]
            else:
                replacement = ""
            if position < len(text) and rng.random() < 0.5:
                text[position] = replacement
            else:
                text.insert(position, replacement)
        corpus.append("".join(text))
    return corpus


@pytest.mark.slow
@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_fuzz_100k_completions_per_task(task_name: str) -> None:
    task, instance, reference = _instance(task_name)
    corpus = _fuzz_corpus(task, instance, seed=15, count=FUZZ_COMPLETIONS_PER_TASK)
    assert len(corpus) >= 100_000
    scores = task.score_many(instance, corpus, reference)
    assert len(scores) == len(corpus)
    assert not [s.reason for s in scores if "internal error" in s.reason]
    assert {s.format_ok for s in scores} == {True, False}, "the corpus should exercise both paths"


def test_parser_whitespace_is_exactly_what_isspace_and_backslash_s_match() -> None:
    from npgym.answer import WHITESPACE

    every = [chr(code) for code in range(sys.maxunicode + 1)]
    assert sorted(WHITESPACE) == [c for c in every if c.isspace()]
    assert sorted(WHITESPACE) == [c for c in every if re.fullmatch(r"\s", c)]


def test_kept_scores_are_bounded_and_change_nothing() -> None:
    """score() keeps at most SCORE_MEMO_SIZE scores per instance however many distinct answers
    it sees, and a kept score equals a fresh one."""
    task, instance, reference = _instance("SubsetSum")
    answers = [f"Answer: [{i}, {i + 1}]" for i in range(3 * SCORE_MEMO_SIZE)]
    answers += [f"Answer: word{chr(97 + i % 26) * (i % 50)}" for i in range(600)]
    scores = [task.score(instance, text, reference) for text in answers]
    kept = [memo for _, memo in instance.__pydantic_private__["_cache"][MEMOS_KEY].values()]
    assert kept and all(len(memo) <= SCORE_MEMO_SIZE for memo in kept)
    fresh = [task.score(instance.model_copy(), text, reference) for text in answers[-50:]]
    assert scores[-50:] == fresh
    assert [task.score(instance, text, reference) for text in answers] == scores
