"""Knapsack's variants that keep the optimum (its ``variant_maker``; see
:mod:`npgym.variants` for what each transformation keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.tasks.knapsack.instance import MAX_CAPACITY, MAX_VALUE, MAX_WEIGHT
from npgym.variants import Variant, map_ids, permutation, rebuild


def make_variant(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_of_new = permutation(rng, instance.n)
    value_factor, weight_factor = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if max(instance.values) * value_factor > MAX_VALUE:
        value_factor = 1
    if (
        max(instance.weights) * weight_factor > MAX_WEIGHT
        or instance.capacity * weight_factor > MAX_CAPACITY
    ):
        weight_factor = 1
    weights = (instance.weight_array[old_of_new] * weight_factor).tolist()
    values = (instance.value_array[old_of_new] * value_factor).tolist()
    return Variant(
        rebuild(
            instance, weights=weights, values=values, capacity=instance.capacity * weight_factor
        ),
        instance,
        lambda solution: map_ids(solution, old_of_new),
        scale=value_factor,
        transforms=(
            "relabel items",
            f"scale values x{value_factor}",
            f"scale weights x{weight_factor}",
        ),
    )
