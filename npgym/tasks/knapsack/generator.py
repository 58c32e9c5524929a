"""Knapsack generator config, the published tiers, and the planted construction.

Revision 1 (NP-Bench version 1). For ``n`` items of which ``k`` are planted (at most ``n``):

- planted items: weight uniform in ``weight_min..weight_max``, value/weight ratio uniform in
  ``[ratio_min, ratio_max]``;
- the capacity is the planted weight times a factor uniform in
  ``[capacity_factor_min, capacity_factor_max]`` (at least 1, so the planted set fits);
- every other item is less attractive than any planted one: its value/weight ratio is a share
  uniform in ``[filler_ratio_min, filler_ratio_max]`` of ``ratio_min``. Most are fillers,
  weighing like the planted items, that compete for the slack the capacity factor leaves; with
  probability ``decoy_share`` an item is a decoy instead: heavy (weight uniform in
  ``weight_max..round(decoy_weight_factor * weight_max)``), so its value is among the largest,
  but taking it crowds out several planted items (bait for picking by value rather than
  value per weight; the exact optimum rarely holds one).

Ratios and factors are floats from ``rng.random()``; values are ``round(weight * ratio)`` and
the capacity ``round(planted weight * factor)``, with ``round(x) = floor(x + 0.5)`` on IEEE
doubles (the same on every platform). Items are shuffled. The planted set is a good solution
but, as the capacity leaves slack for fillers, rarely the optimum (5-15% below it at the
published tiers): the reference is the exact dynamic programme, never the planted set.

Revision 1's ratio greedy lost at most about one item's value, a share that shrank as the
knapsack grew: its mean ratio rose with the tier (0.993 easy, 0.997 benchmark).

Revision 2 (the published tiers today) keeps every weight in the published range and sets, per
tier, how strongly value follows weight, so that the greedy's unusable slack grows tier by tier:

- planted items weigh ``weight_min`` up to ``weight_min + planted_weight_share * span`` (light;
  ``span = weight_max - weight_min``); decoys weigh ``weight_max - decoy_weight_share * span``
  up to ``weight_max`` (heavy, so their values are the largest); an item that is not planted is
  a decoy with probability ``decoy_item_share``, else a filler (weight anywhere in the range,
  value/weight as in revision 1, below every planted one);
- planted and decoy ratios lie in the central ``ratio_width`` share of
  ``[ratio_min, ratio_max]``: ``correlation`` of each is set by the weight, a strongly correlated
  law ``a + c / w`` (``value ~ a * weight + c``) that runs from the top of that band at
  ``weight_min`` to its bottom at ``weight_max``, the rest is uniform in the band.

With a strong correlation the ratio order is the weight order: the greedy takes the light items
first and stops at a heavy one that no longer fits, and every item after it is heavier, so the
gap stays empty (up to a decoy's weight). The optimum swaps light items for heavy ones of
nearly the same value per weight and fills the capacity. Fillers, a wide ratio band and a weak
correlation let the greedy fill the gap, so the easy tier uses them and the benchmark does not.
The capacity, the rounding and the shuffle are as in revision 1. Seeds 0-199: the greedy is
optimal on 33 / 20 / 6.5 / 0% of easy / medium / hard / benchmark instances, mean ratio
0.990 / 0.984 / 0.976 / 0.960 (docs/tiers.md).

Below the easy tier the difficulty knob shrinks the weight range down to its bound, so under
about 0.11 every planted and filler item weighs 1 (revision 1: decoys 1 to 3): a valid, very
easy instance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig, range_growth
from npgym.tasks.knapsack.instance import MAX_ITEMS

MAX_GENERATED_WEIGHT = 10**6


REVISION_2_FIELDS = (
    "planted_weight_share",
    "decoy_weight_share",
    "decoy_item_share",
    "ratio_width",
    "correlation",
)
"""Fields read only by revision 2 (left out of revision-1 dumps)."""


class KnapsackConfig(GeneratorConfig):
    """How Knapsack instances are drawn: item counts, weights, ratio bands and the capacity,
    and (revision 2) the correlated trap: light planted items, heavy decoys in the range."""

    latest_revision: ClassVar[int] = 2
    revision_fields: ClassVar[Mapping[int, tuple[str, ...]]] = {2: REVISION_2_FIELDS}

    growth: ClassVar[Mapping[str, float]] = range_growth(items=1.0, planted=1.0)

    items_min: int = Field(ge=1, le=MAX_ITEMS)
    items_max: int = Field(ge=1, le=MAX_ITEMS)
    planted_min: int = Field(ge=1, le=MAX_ITEMS)
    planted_max: int = Field(ge=1, le=MAX_ITEMS, description="planted items, capped at n")
    weight_min: int = Field(ge=1, le=MAX_GENERATED_WEIGHT)
    weight_max: int = Field(ge=1, le=MAX_GENERATED_WEIGHT)
    ratio_min: float = Field(gt=0.0, le=100.0, description="planted value/weight, lowest")
    ratio_max: float = Field(gt=0.0, le=100.0, description="planted value/weight, highest")
    capacity_factor_min: float = Field(ge=1.0, le=10.0)
    capacity_factor_max: float = Field(ge=1.0, le=10.0)
    filler_ratio_min: float = Field(0.6, gt=0.0, le=1.0, description="share of ratio_min")
    filler_ratio_max: float = Field(0.95, gt=0.0, le=1.0, description="share of ratio_min")
    decoy_share: float = Field(0.2, ge=0.0, le=1.0)
    decoy_weight_factor: float = Field(3.0, ge=1.0, le=10.0, description="revision 1 only")
    planted_weight_share: float = Field(
        1.0, gt=0.0, le=1.0, description="revision 2: planted weights in this lightest share"
    )
    decoy_weight_share: float = Field(
        1.0, gt=0.0, le=1.0, description="revision 2: decoy weights in this heaviest share"
    )
    decoy_item_share: float = Field(
        0.2, ge=0.0, le=1.0, description="revision 2: share of the other items that are decoys"
    )
    ratio_width: float = Field(
        1.0, ge=0.0, le=1.0, description="revision 2: central share of the ratio band used"
    )
    correlation: float = Field(
        0.0, ge=0.0, le=1.0, description="revision 2: share of a ratio that the weight sets"
    )


TIERS: dict[str, KnapsackConfig] = {
    "easy": KnapsackConfig(
        revision=2,
        items_min=15,
        items_max=25,
        planted_min=6,
        planted_max=10,
        weight_min=5,
        weight_max=25,
        ratio_min=1.8,
        ratio_max=2.5,
        capacity_factor_min=1.1,
        capacity_factor_max=1.4,
        planted_weight_share=1.0,
        decoy_weight_share=0.4,
        decoy_item_share=0.2,
        ratio_width=1.0,
        correlation=0.0,
    ),
    "medium": KnapsackConfig(
        revision=2,
        items_min=25,
        items_max=35,
        planted_min=8,
        planted_max=12,
        weight_min=20,
        weight_max=80,
        ratio_min=1.5,
        ratio_max=2.0,
        capacity_factor_min=1.05,
        capacity_factor_max=1.25,
        planted_weight_share=0.6,
        decoy_weight_share=0.35,
        decoy_item_share=0.5,
        ratio_width=0.9,
        correlation=0.2,
    ),
    "hard": KnapsackConfig(
        revision=2,
        items_min=35,
        items_max=60,
        planted_min=15,
        planted_max=25,
        weight_min=50,
        weight_max=200,
        ratio_min=1.2,
        ratio_max=1.6,
        capacity_factor_min=1.02,
        capacity_factor_max=1.15,
        planted_weight_share=0.35,
        decoy_weight_share=0.25,
        decoy_item_share=0.9,
        ratio_width=0.4,
        correlation=0.7,
    ),
    "benchmark": KnapsackConfig(
        revision=2,
        items_min=55,
        items_max=80,
        planted_min=25,
        planted_max=35,
        weight_min=50,
        weight_max=200,
        ratio_min=1.2,
        ratio_max=1.6,
        capacity_factor_min=1.02,
        capacity_factor_max=1.15,
        planted_weight_share=0.1,
        decoy_weight_share=0.2,
        decoy_item_share=1.0,
        ratio_width=0.25,
        correlation=1.0,
    ),
}


@dataclass(frozen=True)
class PlantedKnapsack:
    """A drawn instance together with the item set it was planted from."""

    weights: np.ndarray
    values: np.ndarray
    capacity: int
    planted: np.ndarray
    """Sorted indices of the planted items (they fit within the capacity)."""
    decoys: np.ndarray
    """Sorted indices of the decoy items."""


def _round(x: np.ndarray) -> np.ndarray:
    """Round half up to int64, the same on every platform."""
    return np.floor(x + 0.5).astype(np.int64)


def _uniform(rng: np.random.Generator, low: float, high: float, size: int) -> np.ndarray:
    return low + (high - low) * rng.random(size)


def plant(rng: np.random.Generator, config: KnapsackConfig) -> PlantedKnapsack:
    """Draw the items and the capacity with the config's revision (see the module docstring)."""
    if config.revision == 1:
        return _plant_revision_1(rng, config)
    return _plant_revision_2(rng, config)


def _plant_revision_1(rng: np.random.Generator, config: KnapsackConfig) -> PlantedKnapsack:
    """Revision 1, byte for byte as NP-Bench version 1 drew it."""
    n = int(rng.integers(config.items_min, config.items_max + 1))
    k = min(n, int(rng.integers(config.planted_min, config.planted_max + 1)))
    planted = np.arange(n) < k
    decoy = ~planted & (rng.random(n) < config.decoy_share)
    heaviest = max(
        config.weight_max, math.floor(config.decoy_weight_factor * config.weight_max + 0.5)
    )
    weights = np.where(
        decoy,
        rng.integers(config.weight_max, heaviest + 1, size=n),
        rng.integers(config.weight_min, config.weight_max + 1, size=n),
    )
    attractive = _uniform(rng, config.ratio_min, config.ratio_max, n)
    lesser = config.ratio_min * _uniform(rng, config.filler_ratio_min, config.filler_ratio_max, n)
    values = _round(weights * np.where(planted, attractive, lesser))
    return _packed(rng, config, weights, values, planted, decoy)


def _packed(
    rng: np.random.Generator,
    config: KnapsackConfig,
    weights: np.ndarray,
    values: np.ndarray,
    planted: np.ndarray,
    decoy: np.ndarray,
) -> PlantedKnapsack:
    """Both revisions' last draws: the capacity around the planted weight, then a shuffle."""
    factor = _uniform(rng, config.capacity_factor_min, config.capacity_factor_max, 1)
    capacity = int(_round(weights[planted].sum() * factor)[0])
    order = rng.permutation(len(weights))
    return PlantedKnapsack(
        weights=weights[order].astype(np.int64),
        values=values[order],
        capacity=capacity,
        planted=np.flatnonzero(planted[order]),
        decoys=np.flatnonzero(decoy[order]),
    )


def correlated_ratio(
    weights: np.ndarray, low: float, high: float, config: KnapsackConfig
) -> np.ndarray:
    """The strongly correlated law ``a + c / w``: ``high`` at ``weight_min``, ``low`` at
    ``weight_max`` (``high`` everywhere when the range is one weight)."""
    lightest, heaviest = 1.0 / config.weight_min, 1.0 / config.weight_max
    if lightest == heaviest:
        return np.full(weights.shape, high)
    return low + (high - low) * (1.0 / weights - heaviest) / (lightest - heaviest)


def _plant_revision_2(rng: np.random.Generator, config: KnapsackConfig) -> PlantedKnapsack:
    """Revision 2: light planted items, heavy decoys in the range, correlated ratios."""
    n = int(rng.integers(config.items_min, config.items_max + 1))
    k = min(n, int(rng.integers(config.planted_min, config.planted_max + 1)))
    planted = np.arange(n) < k
    decoy = ~planted & (rng.random(n) < config.decoy_item_share)
    span = config.weight_max - config.weight_min
    lightest_top = config.weight_min + math.floor(config.planted_weight_share * span + 0.5)
    heavy_bottom = config.weight_max - math.floor(config.decoy_weight_share * span + 0.5)
    weights = np.where(
        planted,
        rng.integers(config.weight_min, lightest_top + 1, size=n),
        np.where(
            decoy,
            rng.integers(heavy_bottom, config.weight_max + 1, size=n),
            rng.integers(config.weight_min, config.weight_max + 1, size=n),
        ),
    )
    margin = (1.0 - config.ratio_width) / 2 * (config.ratio_max - config.ratio_min)
    low, high = config.ratio_min + margin, config.ratio_max - margin
    attractive = config.correlation * correlated_ratio(weights, low, high, config) + (
        1.0 - config.correlation
    ) * _uniform(rng, low, high, n)
    lesser = config.ratio_min * _uniform(rng, config.filler_ratio_min, config.filler_ratio_max, n)
    values = _round(weights * np.where(planted | decoy, attractive, lesser))
    return _packed(rng, config, weights, values, planted, decoy)


def build(rng: np.random.Generator, config: KnapsackConfig) -> dict[str, Any]:
    """The instance fields of :func:`plant` (the planted set is not stored)."""
    drawn = plant(rng, config)
    return {
        "weights": tuple(drawn.weights.tolist()),
        "values": tuple(drawn.values.tolist()),
        "capacity": drawn.capacity,
    }
