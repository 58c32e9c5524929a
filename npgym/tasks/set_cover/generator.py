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

Above the benchmark tier (a config whose ``universe_size_max`` exceeds the benchmark's 40, which
the difficulty knob gives above 0.8) random subsets like these make the greedy optimal on nearly
every instance and the optimum hard to prove, so such configs draw a *planted* instance instead:

1. ``k = round(2 / subset_size_factor)`` (at most the subset count and half the universe) blocks:
   the shuffled universe cut into ``k`` near-equal parts, each one subset. They cover the
   universe; the subset size factor shrinks as the instance grows (``growth``), so ``k`` grows
   from 6 at difficulty 1.0 to 16 at 2.0;
2. *traps*: Binomial(``k // 2``, 1/4) groups of 2 or 3 distinct blocks, each tiled by *decoys*,
   disjoint subsets that each take ``r // g + 1`` of the ``r`` still untaken elements of every
   block of its group of ``g``. Each decoy is larger than what is left of any block of the group,
   so the greedy takes decoys, about ``log(r) / log(g / (g - 1))`` of them (4 to 6 at 2.0),
   where two or three blocks do (blocks of 7 elements or more; smaller ones can be tiled by as
   few decoys as blocks). No more traps are set once the decoys would not fit in the subset
   count;
3. every other subset is a *filler*: a uniform size from ``2`` to the smallest block, and that
   many distinct elements. No filler is larger than a block, so the LP relaxation stays at ``k``
   and proves the blocks optimal (measured: every instance at 1.0, 1.2, 1.5 and 2.0);
4. the subsets are listed in a random order, and step 3 of the published construction removes
   an element with probability ``impossible_probability``.

So the optimum is at most ``k`` (the blocks; it is below ``k`` only by chance), the greedy needs
more on every instance with a trap, and the share of instances without one falls as ``k`` grows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig, range_growth
from npgym.tasks.set_cover.instance import MAX_SUBSETS, MAX_UNIVERSE


class SetCoverConfig(GeneratorConfig):
    """How SetCover instances are drawn: universe size, number and size of subsets, and the
    share of instances without a cover."""

    growth: ClassVar[Mapping[str, float]] = range_growth(universe_size=1.0, subsets=1.0) | {
        "subset_size_factor": -0.5
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

PLANTED_ABOVE_UNIVERSE = TIERS["benchmark"].universe_size_max
"""A config whose ``universe_size_max`` exceeds this (the benchmark's) draws a planted instance."""
TRAP_PROBABILITY = 0.25
"""Chance of each of the ``k // 2`` tries to set a trap in a planted instance."""


@dataclass(frozen=True)
class DrawnSetCover:
    """A drawn instance as a membership matrix, and the element left out if any."""

    membership: np.ndarray
    """``membership[j, e]``: subset j holds element e."""
    missing: int | None
    """The element removed from every subset (an instance without a cover), else ``None``."""


def draw(rng: np.random.Generator, config: SetCoverConfig) -> DrawnSetCover:
    """Draw the subsets (steps 1-3 of the module docstring; the planted construction for a
    config beyond the benchmark sizes)."""
    universe = int(rng.integers(config.universe_size_min, config.universe_size_max + 1))
    count = int(rng.integers(config.subsets_min, config.subsets_max + 1))
    if config.universe_size_max > PLANTED_ABOVE_UNIVERSE:
        return _remove_one_element(rng, config, _planted(rng, config, universe, count))
    largest = min(universe, max(2, math.floor(config.subset_size_factor * universe + 0.5)))
    sizes = rng.integers(2, largest + 1, size=count)
    membership = np.zeros((count, universe), dtype=np.bool_)
    for index, size in enumerate(sizes.tolist()):
        membership[index, rng.choice(universe, size=size, replace=False)] = True
    uncovered = np.flatnonzero(~membership.any(axis=0))
    membership[rng.integers(0, count, size=uncovered.size), uncovered] = True
    return _remove_one_element(rng, config, membership)


def _remove_one_element(
    rng: np.random.Generator, config: SetCoverConfig, membership: np.ndarray
) -> DrawnSetCover:
    """Step 3: with probability ``impossible_probability`` no subset keeps one element."""
    missing = None
    if rng.random() < config.impossible_probability:
        missing = int(rng.integers(0, membership.shape[1]))
        membership[:, missing] = False
    return DrawnSetCover(membership, missing)


def _planted(
    rng: np.random.Generator, config: SetCoverConfig, universe: int, count: int
) -> np.ndarray:
    """Steps 1-4 of the planted construction (module docstring) as a membership matrix."""
    block_count = planted_cover_size(config, universe, count)
    blocks = np.array_split(rng.permutation(universe), block_count)
    subsets: list[list[int]] = [block.tolist() for block in blocks]
    spare = count - block_count
    untrapped = rng.permutation(block_count).tolist()
    for _ in range(int(rng.binomial(block_count // 2, TRAP_PROBABILITY))):
        group = int(rng.integers(2, 4))
        if len(untrapped) < group:
            break
        decoys = tile_with_decoys([blocks[untrapped.pop()].tolist() for _ in range(group)])
        if len(decoys) > spare:
            break
        subsets.extend(decoys)
        spare -= len(decoys)
    largest = max(2, min(block.size for block in blocks))
    for size in rng.integers(2, largest + 1, size=spare).tolist():
        subsets.append(rng.choice(universe, size=min(size, universe), replace=False).tolist())
    membership = np.zeros((count, universe), dtype=np.bool_)
    for row, index in enumerate(rng.permutation(count).tolist()):
        membership[row, subsets[index]] = True
    return membership


def planted_cover_size(config: SetCoverConfig, universe: int, count: int) -> int:
    """``k``, the number of blocks of a planted instance (step 1 of the planted construction)."""
    return max(1, min(math.floor(2 / config.subset_size_factor + 0.5), count, universe // 2))


def tile_with_decoys(rows: list[list[int]]) -> list[list[int]]:
    """Disjoint subsets tiling ``rows`` (blocks), each taking ``r // g + 1`` of the ``r`` untaken
    elements of every one of the ``g`` rows: each is larger than what is left of any row. A last
    decoy of one element joins the one before, so that every decoy has two."""
    decoys: list[list[int]] = []
    while any(rows):
        decoy: list[int] = []
        for row in rows:
            taken = min(len(row), len(row) // len(rows) + 1)
            decoy.extend(row[:taken])
            del row[:taken]
        decoys.append(decoy)
    if len(decoys) > 1 and len(decoys[-1]) < 2:  # every subset keeps two elements (step 3)
        decoys[-2].extend(decoys.pop())
    return decoys


def build(rng: np.random.Generator, config: SetCoverConfig) -> dict[str, Any]:
    """The instance fields of :func:`draw`."""
    drawn = draw(rng, config)
    return {
        "universe_size": drawn.membership.shape[1],
        "subsets": tuple(tuple(np.flatnonzero(row).tolist()) for row in drawn.membership),
    }
