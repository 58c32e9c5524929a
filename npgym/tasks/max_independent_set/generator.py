"""MaxIndependentSet generator config, the published tiers, and the generator itself.

Construction (NP-ENGINE): draw ``n`` and a set size ``k``, keep ``k`` random vertices pairwise
non-adjacent, then add every other pair as an edge with probability ``density``. Random sparsity
can leave an independent set larger than the planted one, so the reference is computed exactly,
never taken from the construction.

docs/tasks.md gives the sizes but not the densities. The planted set is a large share of the graph
(about 40%), so sparse graphs would almost always hold a larger one. These densities, lower for
the larger tiers, keep the planted size competitive while larger sets still arise (the optimum
exceeded the planted size in about half the instances of each tier when they were chosen).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig
from npgym.tasks.max_clique.generator import MAX_GENERATED_VERTICES, planted_graph


class MaxIndependentSetConfig(GeneratorConfig):
    """How MaxIndependentSet instances are drawn: vertices, planted set size and edge density.

    A set size above the drawn ``n`` is lowered to ``n``.
    """

    growth: ClassVar[Mapping[str, float]] = {
        "n_min": 1.0,
        "n_max": 1.0,
        "set_min": 0.25,
        "set_max": 0.25,
    }
    """Above the benchmark tier the planted set grows with the fourth root of the size, below
    the independent sets the random graph holds by chance, so the minimum-degree greedy is no
    longer led to it."""

    n_min: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    n_max: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    set_min: int = Field(ge=1, le=MAX_GENERATED_VERTICES)
    set_max: int = Field(ge=1, le=MAX_GENERATED_VERTICES)
    density: float = Field(ge=0.0, le=1.0, description="probability of each allowed edge")


TIERS: dict[str, MaxIndependentSetConfig] = {
    "easy": MaxIndependentSetConfig(n_min=12, n_max=20, set_min=4, set_max=8, density=0.4),
    "medium": MaxIndependentSetConfig(n_min=20, n_max=30, set_min=8, set_max=12, density=0.3),
    "hard": MaxIndependentSetConfig(n_min=30, n_max=40, set_min=12, set_max=16, density=0.25),
    "benchmark": MaxIndependentSetConfig(n_min=40, n_max=50, set_min=16, set_max=20, density=0.2),
}


def build(rng: np.random.Generator, config: MaxIndependentSetConfig) -> dict[str, Any]:
    """Draw a graph with a planted independent set."""
    return planted_graph(
        rng,
        (config.n_min, config.n_max),
        (config.set_min, config.set_max),
        config.density,
        planted_edges=False,
    )
