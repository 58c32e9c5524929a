"""SetCover's variants that keep the optimum (its ``variant_maker``; see
:mod:`npgym.variants` for what each transformation keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.variants import Variant, map_ids, permutation, rebuild


def make_variant(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_subset_of_new = permutation(rng, len(instance.subsets))
    new_element_of_old, _ = permutation(rng, instance.universe_size)
    subsets = [
        new_element_of_old[list(instance.subsets[old])].tolist()
        for old in old_subset_of_new.tolist()
    ]

    def back(solution: Any) -> Any:
        return solution if isinstance(solution, str) else map_ids(solution, old_subset_of_new)

    return Variant(
        rebuild(instance, subsets=subsets),
        instance,
        back,
        transforms=("relabel subsets", "relabel elements"),
    )
