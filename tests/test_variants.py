"""Variants keep the optimum, map answers back exactly, and feed the consistency metric."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import testing
from npgym.results import Score
from npgym.variants import consistency, expand_variants, variant, verdict_label

VARIANT_TASKS = testing.tasks_declaring("variant_maker")
CASES = [(task, tier) for task in VARIANT_TASKS for tier in npgym.TIERS]


@pytest.mark.parametrize(("task_name", "tier"), CASES)
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 2**20), variant_seed=st.integers(0, 2**31))
def test_variant_keeps_the_optimum_and_maps_the_optimum_back(
    task_name: str, tier: str, seed: int, variant_seed: int
) -> None:
    task = npgym.get_task(task_name)
    original = task.generate(seed, tier=tier)
    reference = task.reference(original)
    transformed = variant(original, variant_seed)
    variant_reference = task.reference(transformed.instance)
    assert reference.proven_optimal and variant_reference.proven_optimal
    # the variant's optimum is the original's, under the stated objective map
    assert transformed.objective_to_original(variant_reference.objective) == reference.objective
    # the variant's optimal solution, mapped back, is optimal on the original
    mapped = transformed.to_original(task.to_solution(variant_reference.solution))
    verdict = task.verify(original, mapped)
    assert verdict.feasible and verdict.objective == reference.objective
    answer = task.format_answer(variant_reference.solution)
    assert transformed.score_on_original(answer).reward == 2.0


@pytest.mark.parametrize("task_name", VARIANT_TASKS)
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**20), variant_seed=st.integers(0, 2**31))
def test_every_answer_keeps_its_verdict_through_the_map(
    task_name: str, seed: int, variant_seed: int
) -> None:
    """Random and greedy answers to the variant: same feasibility and mapped objective."""
    task = npgym.get_task(task_name)
    original = task.generate(seed, tier="easy")
    transformed = variant(original, variant_seed)
    rng = np.random.default_rng(seed)
    answers = [
        task.random_solution(transformed.instance, rng),
        task.greedy_solution(transformed.instance),
    ]
    for answer in answers:
        on_variant = task.verify(transformed.instance, answer)
        on_original = task.verify(original, transformed.to_original(task.to_solution(answer)))
        assert on_variant.feasible == on_original.feasible
        if on_variant.feasible:
            assert transformed.objective_to_original(on_variant.objective) == on_original.objective


def test_variants_are_deterministic_and_change_the_instance() -> None:
    task = npgym.get_task("TSP")
    original = task.generate(1, tier="medium")
    first, second = variant(original, 5), variant(original, 5)
    assert first.instance.to_json() == second.instance.to_json()
    assert first.instance != original
    assert variant(original, 6).instance.to_json() != first.instance.to_json()


def test_ids_out_of_range_stay_infeasible_on_the_original() -> None:
    task = npgym.get_task("MaxClique")
    original = task.generate(2, tier="easy")
    transformed = variant(original, 1)
    score = transformed.score_on_original(f"Answer: [0, {original.n}]")
    assert score.format_ok and not score.feasible
    assert transformed.score_on_original("no answer here").format_ok is False


def test_expand_variants_is_deterministic_per_instance() -> None:
    task = npgym.get_task("Knapsack")
    a, b = task.generate(1, tier="easy"), task.generate(2, tier="easy")
    together = expand_variants([a, b], 3, seed=7)
    alone = expand_variants([b], 3, seed=7)
    assert [len(group) for group in together] == [3, 3]
    assert [v.instance.to_json() for v in together[1]] == [v.instance.to_json() for v in alone[0]]
    assert len({v.instance.to_json() for v in together[0]}) == 3
    with pytest.raises(ValueError, match="at least 1"):
        expand_variants([a], 0)


def _score(format_ok: bool, feasible: bool, optimality: float) -> Score:
    return Score(0.0, format_ok, feasible, None, None, None, optimality, "", 0.0, 0.0)


def test_consistency_is_the_share_of_agreeing_instances() -> None:
    assert consistency([["optimal", "optimal"], ["optimal", "infeasible"]]) == 0.5
    assert consistency({"a": [1, 1, 1], "b": [2, 2, 2]}) == 1.0
    optimal, suboptimal = _score(True, True, 1.0), _score(True, True, 0.5)
    assert consistency([[optimal, optimal], [optimal, suboptimal]]) == 0.5
    assert verdict_label(_score(False, False, 0.0)) == "format_error"
    assert verdict_label(_score(True, False, 0.0)) == "infeasible"
    with pytest.raises(ValueError, match="no instances"):
        consistency([])
    with pytest.raises(ValueError, match="need at least 2"):
        consistency([["optimal"]])
