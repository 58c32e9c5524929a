"""HamiltonianCycle's variants that keep the optimum (its ``variant_maker``; see
:mod:`npgym.variants` for what each transformation keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.variants import Variant, map_ids, rebuild, relabel_graph


def make_variant(instance: Any, rng: np.random.Generator) -> Variant:
    """The graph with its vertices relabelled, the planted cycle and its separator with them."""
    changes, new_of_old, old_of_new = relabel_graph(instance, rng)
    if instance.planted_cycle is not None:
        changes["planted_cycle"] = new_of_old[list(instance.planted_cycle)].tolist()
        if instance.separator is not None:  # the certificate of the planted cycle's length
            changes["separator"] = sorted(new_of_old[list(instance.separator)].tolist())
    return Variant(
        rebuild(instance, **changes),
        instance,
        lambda solution: map_ids(solution, old_of_new),
        transforms=("relabel vertices",),
    )
