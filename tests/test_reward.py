"""Reward arithmetic (docs/contract.md, "Reward")."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest
from pydantic import ValidationError

import npgym
from npgym.reward import RewardConfig, clip_ratio, optimality_ratio


@pytest.mark.parametrize(
    ("objective", "reference", "sense", "expected"),
    [
        (10, 10, "min", 1.0),
        (20, 10, "min", 0.5),
        (5, 10, "min", 2.0),
        (10, 10, "max", 1.0),
        (5, 10, "max", 0.5),
        (20, 10, "max", 2.0),
        (0, 0, "min", 1.0),
        (0, 0, "max", 1.0),
        (0, 5, "min", math.inf),
        (3, 0, "max", math.inf),
        (0, 5, "max", 0.0),
    ],
)
def test_optimality_ratio(objective: int, reference: int, sense: str, expected: float) -> None:
    assert optimality_ratio(objective, reference, sense) == expected


def test_clip_ratio() -> None:
    assert clip_ratio(math.inf) == 1.0
    assert clip_ratio(1.3) == 1.0
    assert clip_ratio(0.25) == 0.25
    assert clip_ratio(-1.0) == 0.0


def test_reward_weights_are_parameters() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, tier="easy")
    reference = task.reference(instance)
    weights = RewardConfig(format_ok=0.5, format_fail=-2.0, infeasible=-3.0, optimality_weight=4.0)
    optimal = task.format_answer(reference.solution)
    assert task.score(instance, optimal, reference, weights).reward == 0.5 + 4.0
    assert task.score(instance, "garbage", reference, weights).reward == -2.0 - 3.0
    assert task.score(instance, "Answer: [0, 0]", reference, weights).reward == 0.5 - 3.0


def test_suboptimal_answer_earns_the_ratio() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, tier="easy")
    reference = task.reference(instance)
    tour = [*range(instance.n), 0]
    score = task.score(instance, task.format_answer(tour), reference)
    length = task.verify(instance, tour).objective
    assert score.feasible and score.objective == length
    assert score.ratio == pytest.approx(reference.objective / length)
    assert score.reward == pytest.approx(1.0 + score.ratio)


def test_answer_beating_the_reference_is_clipped_but_reported() -> None:
    task = npgym.get_task("TSP")
    instance = task.generate(0, tier="easy")
    reference = task.reference(instance)
    worse_reference = reference.objective + 10
    score = task.score(instance, task.format_answer(reference.solution), worse_reference)
    assert score.ratio == pytest.approx(worse_reference / reference.objective)
    assert score.ratio > 1.0
    assert score.optimality == 1.0 and score.reward == 2.0


@pytest.mark.parametrize("weight", ["format_ok", "format_fail", "infeasible", "optimality_weight"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_reward_weights_must_be_finite(weight: str, bad: float) -> None:
    with pytest.raises(ValidationError, match=f"{weight}\n  Input should be a finite number"):
        RewardConfig(**{weight: bad})
    with pytest.raises(ValidationError, match="finite number"):
        gym.make("npgym/TSP-easy", reward={weight: bad})
