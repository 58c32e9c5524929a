"""Knapsack's inverse problems (the ``inverse`` capability; see :mod:`npgym.inverse`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.heuristics.small_exact import knapsack_optimum
from npgym.inverse import InverseProblem, UniqueSelection, int64

UNIQUE_ITEMS = 8
"""Items of a candidate instance for the ``unique`` property (every selection is enumerated)."""


def draw_unique_candidate(rng: np.random.Generator) -> dict[str, Any]:
    """Fields of a small instance that may have exactly one optimal selection."""
    weights = rng.integers(1, 20, size=UNIQUE_ITEMS)
    values = rng.integers(1, 30, size=UNIQUE_ITEMS)
    capacity = int(weights.sum() // 2)
    return {"weights": weights.tolist(), "values": values.tolist(), "capacity": capacity}


def optimal_selections(instance: Any) -> list[tuple[int, ...]]:
    """Every optimal selection of a small instance, by enumeration."""
    n = instance.n
    masks = np.arange(1 << n, dtype=np.int64)
    bits = (masks[:, None] >> np.arange(n)) & 1
    weight = bits @ instance.weight_array
    value = np.where(weight <= instance.capacity, bits @ instance.value_array, -1)
    best = value.max()
    return [tuple(np.flatnonzero(bits[m]).tolist()) for m in np.flatnonzero(value == best)]


INVERSE = InverseProblem(
    unit="items",
    size_cap=40,
    fields='"weights": positive integers, "values": non-negative integers (one per item), '
    '"capacity": a non-negative integer',
    optimum="the largest total value of items whose total weight is at most the capacity",
    greedy="ratio greedy: go through the items by value/weight, highest first (lower number "
    "first on ties), taking each item that still fits; then, if the single most valuable item "
    "that fits on its own (lowest number on ties) is worth more than that selection, take it "
    "alone instead",
    exact_optimum=lambda instance: int(
        knapsack_optimum(int64(instance.weights), int64(instance.values), instance.capacity)
    ),
    unique=UniqueSelection(draw_unique_candidate, optimal_selections),
)
