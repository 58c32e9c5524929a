"""SubsetSum generator config, the published tiers, and the planted construction.

``n`` numbers are drawn uniformly from ``value_min..value_max``; a planted subset of
``solution_size`` distinct indices (at most ``n``) is chosen at random and the target is its
sum, so a solution always exists. The planted subset is not necessarily the largest one: the
reference is the exact (sum, count) dynamic programme. Below the easy tier the difficulty knob
shrinks ``value_max`` to its bound, so at difficulty 0 every number is 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig

MAX_GENERATED_NUMBERS = 500
MAX_GENERATED_VALUE = 2000
"""The largest value a config may ask for; the planted subset's size must keep its sum (the
target) within the instance's limit of 100,000."""


class SubsetSumConfig(GeneratorConfig):
    """How SubsetSum instances are drawn: how many numbers, the planted size, the value range."""

    growth: ClassVar[Mapping[str, float]] = {
        "n_min": 1.0,
        "n_max": 1.0,
        "solution_size_min": 0.5,
        "solution_size_max": 0.5,
        "value_max": 2.0,
    }
    """At difficulty 2.0: 150-200 numbers up to 1500 and a planted subset of 32-47 of them, so
    the target (at most 70,500) stays within the instance's limit."""

    n_min: int = Field(ge=1, le=MAX_GENERATED_NUMBERS)
    n_max: int = Field(ge=1, le=MAX_GENERATED_NUMBERS)
    solution_size_min: int = Field(ge=1, le=MAX_GENERATED_NUMBERS)
    solution_size_max: int = Field(
        ge=1, le=MAX_GENERATED_NUMBERS, description="planted subset size, capped at n"
    )
    value_min: int = Field(1, ge=1, le=MAX_GENERATED_VALUE)
    value_max: int = Field(ge=1, le=MAX_GENERATED_VALUE)


TIERS: dict[str, SubsetSumConfig] = {
    "easy": SubsetSumConfig(
        n_min=7, n_max=10, solution_size_min=4, solution_size_max=6, value_max=5
    ),
    "medium": SubsetSumConfig(
        n_min=8, n_max=12, solution_size_min=4, solution_size_max=8, value_max=10
    ),
    "hard": SubsetSumConfig(
        n_min=12, n_max=15, solution_size_min=8, solution_size_max=12, value_max=15
    ),
    "benchmark": SubsetSumConfig(
        n_min=15, n_max=20, solution_size_min=10, solution_size_max=15, value_max=15
    ),
}


@dataclass(frozen=True)
class PlantedSubsetSum:
    """A drawn instance together with the subset it was planted from."""

    numbers: np.ndarray
    target: int
    planted: np.ndarray
    """Sorted indices whose numbers sum to ``target``."""


def plant(rng: np.random.Generator, config: SubsetSumConfig) -> PlantedSubsetSum:
    """Draw the numbers and the planted subset; the target is the planted subset's sum."""
    n = int(rng.integers(config.n_min, config.n_max + 1))
    size = min(n, int(rng.integers(config.solution_size_min, config.solution_size_max + 1)))
    numbers = rng.integers(config.value_min, config.value_max + 1, size=n).astype(np.int64)
    planted = np.sort(rng.choice(n, size=size, replace=False)).astype(np.int64)
    return PlantedSubsetSum(numbers, int(numbers[planted].sum()), planted)


def build(rng: np.random.Generator, config: SubsetSumConfig) -> dict[str, Any]:
    """The instance fields of :func:`plant` (the planted subset is not stored)."""
    drawn = plant(rng, config)
    return {"numbers": tuple(drawn.numbers.tolist()), "target": drawn.target}
