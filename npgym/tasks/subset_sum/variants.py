"""SubsetSum's variants that keep the optimum (its ``variant_maker``; see
:mod:`npgym.variants` for what each transformation keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.tasks.subset_sum.instance import MAX_VALUE as MAX_SUBSET_VALUE
from npgym.variants import Variant, map_ids, permutation, rebuild


def make_variant(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_of_new = permutation(rng, instance.n)
    factor = int(rng.integers(1, 4))
    if (
        instance.target * factor > MAX_SUBSET_VALUE
        or max(instance.numbers) * factor > MAX_SUBSET_VALUE
    ):
        factor = 1
    return Variant(
        rebuild(
            instance,
            numbers=(instance.number_array[old_of_new] * factor).tolist(),
            target=instance.target * factor,
        ),
        instance,
        lambda solution: map_ids(solution, old_of_new),
        transforms=("relabel numbers", f"scale numbers x{factor}"),
    )
