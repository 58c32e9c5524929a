"""TSP's variants that keep the optimum (its ``variant_maker``; see
:mod:`npgym.variants` for what each transformation keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.tasks.tsp.instance import MAX_DISTANCE
from npgym.variants import Variant, map_ids, permutation, rebuild


def make_variant(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_of_new = permutation(rng, instance.n)
    matrix = instance.matrix[np.ix_(old_of_new, old_of_new)]
    largest = int(matrix.max())
    factor = int(rng.integers(1, 4))
    constant = int(rng.integers(0, 21))
    if largest * factor + constant > MAX_DISTANCE:
        factor, constant = 1, 0
    scaled = matrix * factor + constant * (1 - np.eye(instance.n, dtype=np.int64))
    coordinates = None
    keep_points = bool(rng.integers(2))  # presentation: points and matrix, or the matrix alone
    if instance.coordinates is not None and factor == 1 and constant == 0 and keep_points:
        coordinates = [instance.coordinates[old] for old in old_of_new.tolist()]
    return Variant(
        rebuild(instance, distances=scaled.tolist(), coordinates=coordinates),
        instance,
        lambda solution: map_ids(solution, old_of_new),
        scale=factor,
        shift=instance.n * constant,
        transforms=("relabel cities", f"scale distances x{factor}", f"add {constant} per edge"),
    )
