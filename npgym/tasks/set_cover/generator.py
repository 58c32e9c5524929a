"""SetCover generator config, the published tiers, and the generator itself.

Construction, for a universe of ``u`` elements and ``m`` subsets:

1. each subset draws a size uniformly from ``2..max(2, round(subset_size_factor * u))`` and that
   many distinct elements (the published factor 0.4 in every tier);
2. every element that no subset holds is added to one subset chosen uniformly, so the subsets
   cover the universe;
3. with probability ``impossible_probability`` (0.1 in every tier, so about one instance in
   ten) one element chosen uniformly is removed from every subset. No cover exists then and the
   correct answer is ``Impossible``; since every subset has at least two elements before the
   removal, none becomes empty, and only checking every element of the universe reveals it.

``round`` is round-half-up of the float product (``floor(x + 0.5)``), the same on every platform.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig
from npgym.tasks.set_cover.instance import MAX_SUBSETS, MAX_UNIVERSE


class SetCoverConfig(GeneratorConfig):
    """How SetCover instances are drawn: universe size, number and size of subsets, and the
    share of instances without a cover."""

    growth: ClassVar[Mapping[str, float]] = {
        "universe_size_min": 1.0,
        "universe_size_max": 1.0,
        "subsets_min": 1.0,
        "subsets_max": 1.0,
    }

    universe_size_min: int = Field(ge=2, le=MAX_UNIVERSE)
    universe_size_max: int = Field(ge=2, le=MAX_UNIVERSE)
    subsets_min: int = Field(ge=1, le=MAX_SUBSETS)
    subsets_max: int = Field(ge=1, le=MAX_SUBSETS)
    subset_size_factor: float = Field(
        0.4, gt=0.0, le=1.0, description="largest drawn subset size as a share of the universe"
    )
    impossible_probability: float = Field(
        0.1, ge=0.0, le=1.0, description="chance that one element is left out of every subset"
    )


TIERS: dict[str, SetCoverConfig] = {
    "easy": SetCoverConfig(
        universe_size_min=10, universe_size_max=20, subsets_min=5, subsets_max=10
    ),
    "medium": SetCoverConfig(
        universe_size_min=20, universe_size_max=25, subsets_min=10, subsets_max=15
    ),
    "hard": SetCoverConfig(
        universe_size_min=25, universe_size_max=30, subsets_min=15, subsets_max=25
    ),
    "benchmark": SetCoverConfig(
        universe_size_min=30, universe_size_max=40, subsets_min=20, subsets_max=30
    ),
}


@dataclass(frozen=True)
class DrawnSetCover:
    """A drawn instance as a membership matrix, and the element left out if any."""

    membership: np.ndarray
    """``membership[j, e]``: subset j holds element e."""
    missing: int | None
    """The element removed from every subset (an instance without a cover), else ``None``."""


def draw(rng: np.random.Generator, config: SetCoverConfig) -> DrawnSetCover:
    """Draw the subsets (steps 1-3 of the module docstring)."""
    universe = int(rng.integers(config.universe_size_min, config.universe_size_max + 1))
    count = int(rng.integers(config.subsets_min, config.subsets_max + 1))
    largest = min(universe, max(2, math.floor(config.subset_size_factor * universe + 0.5)))
    sizes = rng.integers(2, largest + 1, size=count)
    membership = np.zeros((count, universe), dtype=np.bool_)
    for index, size in enumerate(sizes.tolist()):
        membership[index, rng.choice(universe, size=size, replace=False)] = True
    uncovered = np.flatnonzero(~membership.any(axis=0))
    membership[rng.integers(0, count, size=uncovered.size), uncovered] = True
    missing = None
    if rng.random() < config.impossible_probability:
        missing = int(rng.integers(0, universe))
        membership[:, missing] = False
    return DrawnSetCover(membership, missing)


def build(rng: np.random.Generator, config: SetCoverConfig) -> dict[str, Any]:
    """The instance fields of :func:`draw`."""
    drawn = draw(rng, config)
    return {
        "universe_size": drawn.membership.shape[1],
        "subsets": tuple(tuple(np.flatnonzero(row).tolist()) for row in drawn.membership),
    }
