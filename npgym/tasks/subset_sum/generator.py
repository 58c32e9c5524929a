"""SubsetSum generator config, the published tiers, and the planted construction.

Revision 1 (NP-Bench version 1): ``n`` numbers are drawn uniformly from
``value_min..value_max``; a planted subset of ``solution_size`` distinct indices (at most ``n``)
is chosen at random and the target is its sum. Small numbers are plentiful there, so the shipped
smallest-first greedy was optimal on ~99% of instances at every tier.

Revision 2 (the published tiers today) keeps the sizes and value ranges and draws the values
with structure, chosen per tier by :data:`TIERS` (docs/tiers.md has the measured effect):

- ``solution_size`` *cores*, values ``1..core_max``: the planted subset, whose sum is the
  target. Its size is capped at ``n - 3``, so at least three numbers are left out and "take
  everything but one or two" is rarely the answer.
- *spares*, the numbers left out, values ``2..value_max`` (never 1, which would make almost any
  excess easy to drop).
- With ``parity`` (medium and up), a parity trap: cores are even (``2..core_max``), so the
  target is even; one *decoy*, an odd value in ``1..decoy_max``, is small enough for a
  smallest-first choice to take it; spares are even, and every other odd number is a *fixer* of
  at least ``fixer_min``. Taking the decoy forces a fixer, which uses up target that several
  small cores would have filled: the greedy ends short whenever the decoy and its fixer outweigh
  two cores. The gap between ``core_max`` and ``fixer_min`` sets how often that happens.

Every number is finally clipped to ``value_min..value_max``: below the easy tier the knob
shrinks ``value_max`` and the structure fades, until at difficulty 0 every number is 1.
The planted subset is not necessarily the largest one: the reference is the exact
(sum, count) dynamic programme.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, model_validator

from npgym.config import GeneratorConfig, range_growth

MAX_GENERATED_NUMBERS = 500
MAX_GENERATED_VALUE = 2000
"""The largest value a config may ask for; the planted subset's size must keep its sum (the
target) within the instance's limit of 100,000."""

REVISION_2_FIELDS = ("core_max", "parity", "decoy_max", "fixer_min")
"""Fields read only by revision 2 (left out of revision-1 dumps)."""


class SubsetSumConfig(GeneratorConfig):
    """How SubsetSum instances are drawn: how many numbers, the planted size, the value range,
    and (revision 2) the parity trap: core, decoy and fixer values."""

    latest_revision: ClassVar[int] = 2
    revision_fields: ClassVar[Mapping[int, tuple[str, ...]]] = {2: REVISION_2_FIELDS}
    optional_revision_fields: ClassVar[frozenset[str]] = frozenset({"decoy_max", "fixer_min"})

    growth: ClassVar[Mapping[str, float]] = range_growth(n=1.0, solution_size=0.5) | {
        "value_max": 2.0,
        "core_max": 2.0,
        "decoy_max": 2.0,
        "fixer_min": 2.0,
    }
    """At difficulty 2.0: 150-200 numbers up to 1500 and a planted subset of 32-47 of them, so
    the target (at most 70,500; revision 2: cores up to 400, at most 18,800) stays within the
    instance's limit. Revision 2's values all scale together, so the trap keeps its shape."""

    n_min: int = Field(ge=1, le=MAX_GENERATED_NUMBERS)
    n_max: int = Field(ge=1, le=MAX_GENERATED_NUMBERS)
    solution_size_min: int = Field(ge=1, le=MAX_GENERATED_NUMBERS)
    solution_size_max: int = Field(
        ge=1,
        le=MAX_GENERATED_NUMBERS,
        description="planted subset size, capped at n (revision 2: n - 3)",
    )
    value_min: int = Field(1, ge=1, le=MAX_GENERATED_VALUE)
    value_max: int = Field(ge=1, le=MAX_GENERATED_VALUE)
    core_max: int | None = Field(
        None, ge=1, le=MAX_GENERATED_VALUE, description="revision 2: planted values up to this"
    )
    parity: bool = Field(False, description="revision 2: plant the parity trap")
    decoy_max: int | None = Field(
        None, ge=1, le=MAX_GENERATED_VALUE, description="parity trap: the decoy is odd, 1..this"
    )
    fixer_min: int | None = Field(
        None, ge=1, le=MAX_GENERATED_VALUE, description="parity trap: other odd numbers >= this"
    )

    @model_validator(mode="after")
    def _trap_fields_given(self) -> SubsetSumConfig:
        if self.revision >= 2 and self.parity:
            self.trap()
        return self

    def core_values(self) -> int:
        """``core_max``, which revision 2 needs."""
        if self.core_max is None:
            raise ValueError("revision 2 needs core_max")
        return self.core_max

    def trap(self) -> tuple[int, int]:
        """``(decoy_max, fixer_min)``, which the parity trap needs."""
        if self.decoy_max is None or self.fixer_min is None:
            raise ValueError("the parity trap needs decoy_max and fixer_min")
        return self.decoy_max, self.fixer_min


EXCLUDED_MIN = 3
"""Revision 2 leaves at least this many numbers out of the planted subset."""


TIERS: dict[str, SubsetSumConfig] = {
    "easy": SubsetSumConfig(
        revision=2,
        n_min=7,
        n_max=10,
        solution_size_min=4,
        solution_size_max=8,
        value_max=5,
        core_max=5,
    ),
    "medium": SubsetSumConfig(
        revision=2,
        n_min=8,
        n_max=12,
        solution_size_min=4,
        solution_size_max=8,
        value_max=10,
        core_max=4,
        parity=True,
        decoy_max=3,
        fixer_min=5,
    ),
    "hard": SubsetSumConfig(
        revision=2,
        n_min=12,
        n_max=15,
        solution_size_min=8,
        solution_size_max=12,
        value_max=15,
        core_max=6,
        parity=True,
        decoy_max=3,
        fixer_min=9,
    ),
    "benchmark": SubsetSumConfig(
        revision=2,
        n_min=15,
        n_max=20,
        solution_size_min=10,
        solution_size_max=15,
        value_max=15,
        core_max=4,
        parity=True,
        decoy_max=3,
        fixer_min=9,
    ),
}
"""Revision 2 keeps the published sizes and value ranges (easy: n 7-10, documented in
docs/tiers.md). Easy plants no parity trap (values 1-5 leave it too little variety); from
medium on, the gap between cores and fixers widens, and benchmark pairs hard's fixers with
smaller cores."""


@dataclass(frozen=True)
class PlantedSubsetSum:
    """A drawn instance together with the subset it was planted from."""

    numbers: np.ndarray
    target: int
    planted: np.ndarray
    """Sorted indices whose numbers sum to ``target``."""


def plant(rng: np.random.Generator, config: SubsetSumConfig) -> PlantedSubsetSum:
    """Draw the numbers and the planted subset; the target is the planted subset's sum."""
    if config.revision >= 2:
        return _plant_revision_2(rng, config)
    n = int(rng.integers(config.n_min, config.n_max + 1))
    size = min(n, int(rng.integers(config.solution_size_min, config.solution_size_max + 1)))
    numbers = rng.integers(config.value_min, config.value_max + 1, size=n).astype(np.int64)
    planted = np.sort(rng.choice(n, size=size, replace=False)).astype(np.int64)
    return PlantedSubsetSum(numbers, int(numbers[planted].sum()), planted)


def _plant_revision_2(rng: np.random.Generator, config: SubsetSumConfig) -> PlantedSubsetSum:
    """Revision 2 (see the module docstring): cores, the decoy where the tier plants the parity
    trap, then spares and fixers, shuffled; every number clipped to the value range."""
    step = 2 if config.parity else 1
    n = int(rng.integers(config.n_min, config.n_max + 1))
    drawn_size = int(rng.integers(config.solution_size_min, config.solution_size_max + 1))
    size = max(1, min(drawn_size, n - EXCLUDED_MIN))
    cores = step * rng.integers(1, max(1, config.core_values() // step) + 1, size=size)
    values = np.arange(2, max(config.value_max, 2) + 1)
    if config.parity:
        decoy_max, fixer_min = config.trap()
        decoy = 2 * rng.integers(0, (decoy_max + 1) // 2, size=min(1, n - size)) + 1
        pool = values[(values % 2 == 0) | (values >= fixer_min)]
    else:
        decoy, pool = np.zeros(0, np.int64), values
    others = rng.choice(pool, size=n - size - decoy.size)
    numbers = np.clip(np.concatenate([cores, decoy, others]), config.value_min, config.value_max)
    order = rng.permutation(n)
    numbers = numbers[order].astype(np.int64)
    planted = np.sort(np.flatnonzero(order < size)).astype(np.int64)
    return PlantedSubsetSum(numbers, int(numbers[planted].sum()), planted)


def build(rng: np.random.Generator, config: SubsetSumConfig) -> dict[str, Any]:
    """The instance fields of :func:`plant` (the planted subset is not stored)."""
    drawn = plant(rng, config)
    return {"numbers": tuple(drawn.numbers.tolist()), "target": drawn.target}
