"""The contract every registered task and tier must meet (TASKS.md, "Common rules")."""

from __future__ import annotations

import json
import math
import string
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym.answer import render_value
from tests import golden

CASES = [(task, tier) for task in npgym.list_tasks() for tier in npgym.TIERS]
TASK_NAMES = npgym.list_tasks()

# TASKS.md, "Canonical instance fields": what users read exported files through.
CANONICAL_FIELDS = {
    "TSP": {"distances"},
    "HamiltonianCycle": {"n", "edges"},
    "MaxClique": {"n", "edges"},
    "MaxIndependentSet": {"n", "edges"},
    "GraphColoring": {"n", "edges"},
    "MinBisection": {"n", "edges"},
    "SubsetSum": {"numbers", "target"},
    "SetCover": {"universe_size", "subsets"},
    "Knapsack": {"weights", "values", "capacity"},
    "MeetingScheduling": {"meetings", "availability", "rooms", "slot"},
}
CATEGORIES = {
    "graph clustering",
    "resource scheduling",
    "graph partitioning",
    "subset selection",
    "path planning",
}

# Rewards with the default weights: format failure, infeasible, feasible in [1, 2].
FORMAT_FAILURE, INFEASIBLE = -2.5, -0.5


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_check_env_passes(task_name: str, tier: str) -> None:
    env = gym.make(npgym.env_id(task_name, tier), exact_reference=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_generation_matches_golden_hash(task_name: str, tier: str) -> None:
    pinned = golden.load().get(f"{task_name}/{tier}")
    assert pinned is not None, f"no golden hash for {task_name}/{tier}: run python tests/golden.py"
    assert golden.digest(task_name, tier) == pinned["sha256"]


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_same_seed_same_instance_and_prompt(task_name: str, tier: str) -> None:
    task = npgym.get_task(task_name)
    first, second = task.generate(11, tier=tier), task.generate(11, tier=tier)
    assert first == second
    assert first.to_json() == second.to_json()
    assert task.prompt(first) == task.prompt(second)
    assert task.generate(12, tier=tier).to_json() != first.to_json()


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_json_round_trip_is_lossless_and_canonical(task_name: str, tier: str) -> None:
    task = npgym.get_task(task_name)
    instance = task.generate(3, tier=tier)
    restored = task.from_json(instance.to_json())
    assert restored == instance
    assert restored.to_json() == instance.to_json()
    assert task.prompt(restored) == task.prompt(instance)
    data = json.loads(instance.to_json())
    assert CANONICAL_FIELDS[task_name] <= data.keys()
    assert set(type(instance).canonical_fields) == CANONICAL_FIELDS[task_name]
    assert (data["task"], data["tier"], data["seed"]) == (task_name, tier, 3)
    bare = instance.model_copy(update=dict.fromkeys(type(instance).meta_fields))
    assert bare.fingerprint() == instance.fingerprint()


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_reference_is_accepted_and_scores_two(task_name: str, tier: str) -> None:
    task = npgym.get_task(task_name)
    instance = task.generate(golden.SEEDS[0], tier=tier)
    reference = task.reference(instance)
    verdict = task.verify(instance, reference.solution)
    assert verdict.feasible, verdict.reason
    assert verdict.objective == reference.objective
    assert reference.objective == golden.load()[f"{task_name}/{tier}"]["reference_objective"]
    if reference.proven_optimal:
        assert reference.method in ("exact", "planted")
    else:
        assert reference.method == "heuristic"
        assert reference.bound is not None
        assert reference.gap is not None
    score = task.score(instance, "Let me think.\n" + task.format_answer(reference.solution))
    assert (score.reward, score.ratio, score.optimality) == (2.0, 1.0, 1.0)
    heuristic = task.reference(instance, exact=False)
    assert task.verify(instance, heuristic.solution).feasible
    sign = 1 if task.sense == "min" else -1
    assert reference.objective is None or sign * heuristic.objective >= sign * reference.objective


@pytest.mark.parametrize(("task_name", "tier"), CASES)
def test_env_reset_matches_generate(task_name: str, tier: str) -> None:
    env = gym.make(npgym.env_id(task_name, tier), exact_reference=False)
    task = npgym.get_task(task_name)
    prompt, info = env.reset(seed=5)
    assert info["instance"] == task.generate(5, tier=tier)
    assert prompt == task.prompt(info["instance"])
    answer = task.format_answer(info["reference"].solution)
    feedback, reward, terminated, truncated, step_info = env.step(answer)
    assert (reward, terminated, truncated) == (2.0, True, False)
    assert step_info["feasible"] and step_info["format_ok"]
    assert step_info["reference_objective"] == info["reference"].objective
    assert set(feedback) <= set(string.printable)


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_prompt_is_ascii_and_ends_with_the_answer_instruction(task_name: str) -> None:
    task = npgym.get_task(task_name)
    assert task.category in CATEGORIES
    for tier in npgym.TIERS:
        prompt = task.prompt(task.generate(0, tier=tier))
        assert set(prompt) <= set(string.printable)
        last_line = prompt.rstrip().splitlines()[-1]
        assert "step by step" in prompt
        assert "Answer:" in last_line


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_difficulty_knob_spans_zero_to_one(task_name: str) -> None:
    task = npgym.get_task(task_name)
    for difficulty in np.linspace(0.0, 1.0, 11):
        instance = task.generate(1, difficulty=float(difficulty))
        assert instance.difficulty == pytest.approx(difficulty)
        assert instance.tier is None
        assert task.from_json(instance.to_json()) == instance
    for tier, anchor in npgym.config.TIER_DIFFICULTY.items():
        assert task.config(difficulty=anchor) == task.config(tier=tier)


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_bad_config_gets_an_error_naming_the_field(task_name: str) -> None:
    task = npgym.get_task(task_name)
    with pytest.raises(ValueError, match="no_such_field"):
        task.config("easy", overrides={"no_such_field": 1})
    with pytest.raises(ValueError, match="difficulty"):
        task.config(difficulty=2.5)
    with pytest.raises(ValueError, match="tier"):
        task.config("impossible")


GARBAGE_SOLUTIONS = [
    None,
    "abc",
    "",
    3,
    -1,
    2.5,
    True,
    [],
    [None],
    [1.5],
    [True, False],
    ["a", "b"],
    [[[[1]]]],
    {"a": 1},
    [10**30],
    [-(10**30)],
    [0] * 1000,
    list(range(-5, 500)),
    [[0, 1], [2, 3], [4]],
    np.zeros((2, 2), dtype=np.int64),
    np.array([0.5, 1.5]),
]


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_verify_rejects_garbage_without_raising(task_name: str) -> None:
    task = npgym.get_task(task_name)
    instance = task.generate(0, tier="easy")
    for garbage in GARBAGE_SOLUTIONS:
        verdict = task.verify(instance, garbage)
        assert isinstance(verdict.reason, str)
        if not verdict.feasible:
            assert verdict.reason, f"no reason for rejecting {garbage!r}"


values = st.recursive(
    st.integers(-(10**20), 10**20) | st.sampled_from(["Impossible", "x", "None"]),
    lambda children: st.lists(children, max_size=12),
    max_leaves=60,
)
noise = st.text(max_size=40)


def _text_strategy() -> st.SearchStrategy[str]:
    structured = st.builds(
        lambda before, value, after, marker: before + marker + _render_loose(value) + after,
        noise,
        values,
        noise,
        st.sampled_from(["Answer: ", "**Answer:** ", "answer:", "\\boxed{", "Answer: ```json\n"]),
    )
    return st.text(max_size=300) | structured


def _render_loose(value: object) -> str:
    try:
        return render_value(value)
    except TypeError:
        return str(value)


@pytest.mark.parametrize("task_name", TASK_NAMES)
@given(data=st.data())
def test_score_never_raises_and_rewards_are_consistent(task_name: str, data: st.DataObject) -> None:
    task = npgym.get_task(task_name)
    instance = task.generate(data.draw(st.integers(0, 3)), tier="easy")
    reference = task.reference(instance, exact=False)
    completion = data.draw(_text_strategy())
    score = task.score(instance, completion, reference)
    if not score.format_ok:
        assert score.reward == FORMAT_FAILURE and not score.feasible
    elif not score.feasible:
        assert score.reward == INFEASIBLE and score.reason
    else:
        assert 1.0 <= score.reward <= 2.0
        assert math.isclose(score.reward, 1.0 + score.optimality)
        assert task.verify(instance, task.parse(completion)).objective == score.objective


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_baseline_agents_give_answers_in_the_task_shape(task_name: str) -> None:
    task = npgym.get_task(task_name)
    rng = np.random.default_rng(0)
    for tier in npgym.TIERS:
        instance = task.generate(2, tier=tier)
        reference = task.reference(instance, exact=False)
        greedy = task.score(instance, task.format_answer(task.greedy_solution(instance)), reference)
        assert greedy.format_ok and greedy.feasible, greedy.reason
        for _ in range(5):
            answer = task.format_answer(task.random_solution(instance, rng))
            assert task.score(instance, answer, reference).format_ok
