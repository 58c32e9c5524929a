"""MinBisection's variants that keep the optimum (its ``variant_maker``; see
:mod:`npgym.variants` for what each transformation keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.tasks.min_bisection.instance import MAX_WEIGHT as MAX_EDGE_WEIGHT
from npgym.variants import Variant, map_ids, permutation, rebuild


def make_variant(instance: Any, rng: np.random.Generator) -> Variant:
    new_of_old, old_of_new = permutation(rng, instance.n)
    factor = int(rng.integers(1, 4))
    if max((w for *_, w in instance.edges), default=1) * factor > MAX_EDGE_WEIGHT:
        factor = 1
    edges = [(int(new_of_old[u]), int(new_of_old[v]), w * factor) for u, v, w in instance.edges]
    return Variant(
        rebuild(instance, edges=edges),
        instance,
        lambda solution: tuple(map_ids(part, old_of_new) for part in solution),
        scale=factor,
        transforms=("relabel vertices", f"scale weights x{factor}"),
    )
