"""Knapsack: hand-checked instances, kernel vs. pure twin, solvers vs. brute force, and the
planted construction."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym.config import TIER_DIFFICULTY
from npgym.heuristics import knapsack as solvers
from npgym.task import generation_stream
from npgym.tasks.knapsack import KnapsackInstance
from npgym.tasks.knapsack.generator import (
    REVISION_2_FIELDS,
    KnapsackConfig,
    PlantedKnapsack,
    correlated_ratio,
    plant,
)
from npgym.tasks.knapsack.verifier import check_selection, check_selection_python
from tests import helpers

TASK = npgym.get_task("Knapsack")

# Hand-checked: items 1 and 3 (weight 7, value 90) beat every other set within weight 10.
SMALL = KnapsackInstance(weights=[5, 4, 6, 3], values=[10, 40, 30, 50], capacity=10)


def brute_force(weights: list[int], values: list[int], capacity: int) -> int:
    best = 0
    for size in range(len(weights) + 1):
        for chosen in itertools.combinations(range(len(weights)), size):
            if sum(weights[i] for i in chosen) <= capacity:
                best = max(best, sum(values[i] for i in chosen))
    return best


@pytest.mark.parametrize(
    ("answer", "feasible", "objective", "reason"),
    [
        ([1, 3], True, 90, ""),
        ([3, 1], True, 90, ""),
        ([2, 3], True, 80, ""),
        ([1, 2], True, 70, ""),  # exactly at capacity
        ([], True, 0, ""),
        ([0, 1, 3], False, None, "total weight 12 > capacity 10"),
        ([0, 1, 2, 3], False, None, "total weight 18 > capacity 10"),
        ([1, 1], False, None, "item 1 listed twice"),
        ([3] * 1000, False, None, "item 3 listed twice"),
        ([4], False, None, "item 4 does not exist (items are 0 to 3)"),
        ([-1, 3], False, None, "item -1 does not exist (items are 0 to 3)"),
        ([1, 10**17], False, None, f"item {10**17} does not exist (items are 0 to 3)"),
        ([True], False, None, "expected integers in the list of items, got a boolean"),
        ("none", False, None, "expected a list for the list of items, got a word"),
    ],
)
def test_small_verdicts(answer: object, feasible: bool, objective: int, reason: str) -> None:
    helpers.assert_verdict(TASK, SMALL, answer, (feasible, objective, reason))


def test_small_reference_and_scores() -> None:
    helpers.assert_exact_reference(TASK, SMALL, 90, [[1, 3]])
    helpers.assert_rewards(
        TASK,
        SMALL,
        {
            "Answer: [3, 1]": 2.0,
            "Answer: [2, 3]": pytest.approx(1 + 80 / 90),
            "Answer: []": -0.5,  # the empty answer is no solution
            "Answer: [0, 1, 3]": -0.5,
        },
    )


def test_greedy_falls_back_to_the_best_single_item() -> None:
    # By ratio item 0 (2 per unit) comes first, after which item 1 no longer fits.
    weights, values = np.array([1, 10]), np.array([2, 15])
    assert solvers.greedy_knapsack(weights, values, 10).tolist() == [1]
    assert solvers.dantzig_bound(weights, values, 10) == 2 + 9 * 15 // 10


@st.composite
def items_and_answers(draw: st.DrawFn) -> tuple[list[int], list[int], int, list[int]]:
    n = draw(st.integers(1, 8))
    weights = draw(st.lists(st.integers(1, 50), min_size=n, max_size=n))
    values = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
    capacity = draw(st.integers(0, 200))
    ids = draw(
        st.lists(st.integers(-2, n + 1), max_size=n + 3)
        | st.permutations(range(n)).flatmap(lambda p: st.integers(0, n).map(lambda k: p[:k]))
    )
    return weights, values, capacity, ids


@given(case=items_and_answers())
def test_kernel_agrees_with_python_twin(case: tuple[list[int], list[int], int, list[int]]) -> None:
    helpers.assert_kernel_matches_twin(check_selection, check_selection_python, *case)


def test_solvers_agree_with_brute_force_on_tiny_instances() -> None:
    rng = np.random.default_rng(1)
    greedy_misses = 0
    for n in helpers.random_sizes(rng, 300, (1, 10)):
        weights = rng.integers(1, 30, size=n)
        values = rng.integers(0, 40, size=n)
        capacity = int(rng.integers(0, weights.sum() + 5))
        optimum = brute_force(weights.tolist(), values.tolist(), capacity)
        for items in (
            solvers.dp_knapsack(weights, values, capacity),
            solvers.exact_knapsack(weights, values, capacity, max_dp_cells=0).witness,
        ):
            assert int(values[items].sum()) == optimum
            assert int(weights[items].sum()) <= capacity
            assert len(set(items.tolist())) == items.size
        greedy = solvers.greedy_knapsack(weights, values, capacity)
        assert int(weights[greedy].sum()) <= capacity
        assert (
            int(values[greedy].sum()) <= optimum <= solvers.dantzig_bound(weights, values, capacity)
        )
        greedy_misses += int(values[greedy].sum()) < optimum
    assert greedy_misses > 0


def test_large_capacities_use_cp_sat() -> None:
    # Weights in thousands: the table would need 40 * 10^7 cells; scaling by 1000 gives the
    # same optimum with a small table.
    rng = np.random.default_rng(2)
    weights = rng.integers(1000, 500_000, size=40) // 1000 * 1000
    values = rng.integers(1, 1000, size=40)
    capacity = int(weights.sum() // 2 // 1000 * 1000)
    instance = KnapsackInstance(weights=weights.tolist(), values=values.tolist(), capacity=capacity)
    reference = TASK.reference(instance)
    assert reference.solver == "CP-SAT" and reference.proven_optimal
    scaled = solvers.dp_knapsack(weights // 1000, values, capacity // 1000)
    assert reference.objective == int(values[scaled].sum())
    assert TASK.verify(instance, reference.solution).objective == reference.objective


def test_unproven_reference_reports_heuristic_bound_and_gap() -> None:
    rng = np.random.default_rng(0)
    weights = rng.integers(10**5, 10**6, size=1000)
    instance = KnapsackInstance(
        weights=weights.tolist(),
        values=(weights + 10**5).tolist(),
        capacity=int(weights.sum() // 2),
    )
    reference = TASK.reference(instance, time_limit=0.01)
    helpers.assert_unproven_reference(TASK, instance, reference)
    assert reference.bound > reference.objective >= TASK.reference(instance, exact=False).objective


def test_exact_reference_is_deterministic() -> None:
    for seed in range(3):
        helpers.solved_twice(TASK, TASK.generate(seed, tier="benchmark"))


def _draws(tier: str, revision: int, seeds: range = range(20)) -> tuple[KnapsackConfig, list]:
    config = TASK.config(tier, overrides={"revision": revision})
    stream = (generation_stream(seed, TIER_DIFFICULTY[tier]) for seed in seeds)
    return config, [plant(np.random.default_rng(s), config) for s in stream]


def _check_common(config: KnapsackConfig, drawn: PlantedKnapsack) -> np.ndarray:
    """Counts, planted ratios and weights, and the capacity factor; the planted mask."""
    n = drawn.weights.size
    assert config.items_min <= n <= config.items_max
    assert config.planted_min <= drawn.planted.size <= min(n, config.planted_max)
    ratio = drawn.values / drawn.weights
    slack = 0.5 / drawn.weights  # values are rounded to integers
    planted = np.zeros(n, dtype=bool)
    planted[drawn.planted] = True
    assert (ratio[planted] >= config.ratio_min - slack[planted]).all()
    assert (ratio[planted] <= config.ratio_max + slack[planted]).all()
    fillers = ~planted
    fillers[drawn.decoys] = False
    assert (ratio[fillers] <= config.ratio_min * config.filler_ratio_max + slack[fillers]).all()
    assert (drawn.weights[planted] >= config.weight_min).all()
    assert not planted[drawn.decoys].any()
    planted_weight = int(drawn.weights[planted].sum())
    factor = drawn.capacity / planted_weight
    assert config.capacity_factor_min - 1e-9 <= factor + 0.5 / planted_weight
    assert factor - 0.5 / planted_weight <= config.capacity_factor_max + 1e-9
    return planted


@pytest.mark.parametrize("tier", npgym.TIERS)
def test_revision_1_follows_its_planted_construction(tier: str) -> None:
    config, draws = _draws(tier, revision=1)
    for drawn in draws:
        planted = _check_common(config, drawn)
        ratio = drawn.values / drawn.weights
        slack = 0.5 / drawn.weights
        others = ~planted
        assert (ratio[others] <= config.ratio_min * config.filler_ratio_max + slack[others]).all()
        assert (drawn.weights[planted] <= config.weight_max).all()
        assert (drawn.weights[drawn.decoys] >= config.weight_max).all()
        assert (drawn.weights[drawn.decoys] <= config.decoy_weight_factor * config.weight_max).all()


@pytest.mark.parametrize("tier", npgym.TIERS)
def test_generator_follows_the_planted_construction(tier: str) -> None:
    config, draws = _draws(tier, revision=2)
    assert TASK.config(tier) == config
    span = config.weight_max - config.weight_min
    margin = (1 - config.ratio_width) / 2 * (config.ratio_max - config.ratio_min)
    for seed, drawn in enumerate(draws):
        planted = _check_common(config, drawn)
        assert (drawn.weights <= config.weight_max).all() and (drawn.weights >= 1).all()
        light = config.weight_min + math.floor(config.planted_weight_share * span + 0.5)
        assert (drawn.weights[planted] <= light).all()
        assert (
            drawn.weights[drawn.decoys]
            >= config.weight_max - math.floor(config.decoy_weight_share * span + 0.5)
        ).all()
        band = np.concatenate([drawn.planted, drawn.decoys])
        ratio = drawn.values[band] / drawn.weights[band]
        slack = 0.5 / drawn.weights[band]
        assert (ratio >= config.ratio_min + margin - slack - 1e-9).all()
        assert (ratio <= config.ratio_max - margin + slack + 1e-9).all()
        instance = TASK.generate(seed, tier=tier)
        assert instance.weights == tuple(drawn.weights.tolist())
        assert instance.values == tuple(drawn.values.tolist())
        assert instance.capacity == drawn.capacity
        assert instance.config["revision"] == 2
        planted_value = int(drawn.values[planted].sum())
        assert TASK.reference(instance).objective >= planted_value


def test_correlated_ratio_runs_from_the_top_of_the_band_to_its_bottom() -> None:
    config = TASK.config("benchmark")
    weights = np.array([config.weight_min, 100, config.weight_max], dtype=np.int64)
    law = correlated_ratio(weights, 1.3, 1.5, config)
    assert law[0] == pytest.approx(1.5) and law[-1] == pytest.approx(1.3)
    value = weights * law  # strongly correlated: value = a * weight + c
    assert value[1] - value[0] == pytest.approx((value[2] - value[0]) * 50 / 150)
    flat = TASK.config("benchmark", overrides={"weight_min": 7, "weight_max": 7})
    assert correlated_ratio(np.array([7]), 1.3, 1.5, flat).tolist() == [1.5]


def test_benchmark_decoys_leave_the_greedy_an_unusable_gap() -> None:
    """The trap: at the benchmark tier the greedy takes the light items and stops at a decoy,
    and everything after it is too heavy for the gap, which the optimum fills."""
    lost = []
    for seed in range(30):
        instance = TASK.generate(seed, tier="benchmark")
        greedy = TASK.verify(instance, TASK.greedy_solution(instance)).objective
        optimum = TASK.reference(instance).objective
        gap = instance.capacity - sum(instance.weights[i] for i in TASK.greedy_solution(instance))
        left = [
            w for i, w in enumerate(instance.weights) if i not in TASK.greedy_solution(instance)
        ]
        assert gap < min(left)
        lost.append(1 - greedy / optimum)
    assert np.mean(lost) > 0.02, np.mean(lost)


def test_planted_items_are_not_listed_first() -> None:
    positions = [plant(np.random.default_rng(s), TASK.tiers["hard"]).planted for s in range(5)]
    assert all(p.tolist() != list(range(p.size)) for p in positions)


def test_prompt_lists_every_item_and_the_capacity() -> None:
    instance = TASK.generate(4, tier="benchmark")
    items = zip(instance.weights, instance.values, strict=True)
    lines = [
        f"{item}: weight {weight}, value {value}" for item, (weight, value) in enumerate(items)
    ]
    prompt = helpers.assert_prompt_has_lines(TASK, instance, lines)
    assert f"at most {instance.capacity}." in prompt


@pytest.mark.parametrize(
    ("weights", "values", "capacity", "message"),
    [
        ([], [], 5, "1 to"),
        ([1, 2], [3], 5, "2 weights but 1 values"),
        ([1, 0], [3, 4], 5, "item 1 weighs 0"),
        ([1, 10**10], [3, 4], 5, "item 1 weighs"),
        ([1, 2], [3, -4], 5, "item 1 is worth -4"),
        ([1, 2], [3, 4], -1, "capacity -1"),
        ([1, 2], [3, 4], 10**13, "capacity"),
        ([1, 2.5], [3, 4], 5, "integer"),
        ([1, 2], [3, 4], "5", "integer"),
    ],
)
def test_bad_instances_are_rejected(
    weights: list[object], values: list[object], capacity: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        KnapsackInstance(weights=weights, values=values, capacity=capacity)


def test_revision_2_fields_stay_out_of_revision_1_dumps() -> None:
    revision_1 = TASK.generate(0, tier="benchmark", overrides={"revision": 1}).config
    revision_2 = TASK.generate(0, tier="benchmark").config
    assert not set(REVISION_2_FIELDS) & set(revision_1) and "revision" not in revision_1
    assert set(REVISION_2_FIELDS) <= set(revision_2) and revision_2["revision"] == 2


def test_greedy_is_rarely_optimal_at_difficulty_two() -> None:
    optimal = 0
    for seed in range(20):
        instance = TASK.generate(seed, difficulty=2.0)
        reference = TASK.reference(instance)
        assert reference.proven_optimal
        optimal += TASK.verify(instance, TASK.greedy_solution(instance)).objective == (
            reference.objective
        )
    assert optimal <= 10, optimal
