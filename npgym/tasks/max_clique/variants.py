"""MaxClique's variants that keep the optimum (its ``variant_maker``; see
:mod:`npgym.variants` for what each transformation keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.variants import Variant, map_ids, rebuild, relabel_graph


def make_variant(instance: Any, rng: np.random.Generator) -> Variant:
    """The graph with its vertices relabelled."""
    changes, _, old_of_new = relabel_graph(instance, rng)
    return Variant(
        rebuild(instance, **changes),
        instance,
        lambda solution: map_ids(solution, old_of_new),
        transforms=("relabel vertices",),
    )
