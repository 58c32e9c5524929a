"""GraphColoring's variants that keep the optimum (its ``variant_maker``; see
:mod:`npgym.variants` for what each transformation keeps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.variants import Variant, rebuild, relabel_graph


def make_variant(instance: Any, rng: np.random.Generator) -> Variant:
    """The graph with its vertices relabelled, the planted colouring and clique with them; an
    answer (the colour of each vertex, in vertex order) maps back by reordering."""
    changes, new_of_old, old_of_new = relabel_graph(instance, rng)
    if instance.planted_colouring is not None:
        changes["planted_colouring"] = np.asarray(instance.planted_colouring)[old_of_new].tolist()
    if instance.planted_clique is not None:
        changes["planted_clique"] = sorted(new_of_old[list(instance.planted_clique)].tolist())

    def back(solution: Any) -> Any:
        colors = np.asarray(solution, dtype=np.int64)
        return colors[new_of_old] if colors.size == instance.n else colors

    return Variant(rebuild(instance, **changes), instance, back, transforms=("relabel vertices",))
