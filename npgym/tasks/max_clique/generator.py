"""MaxClique generator config, the published tiers, and the generator itself.

Construction (NP-ENGINE): draw ``n`` and a clique size ``k``, make ``k`` random vertices
pairwise adjacent, then add every other pair as an edge with probability ``density``. Random
edges can form a clique larger than the planted one, so the reference is computed exactly, never
taken from the construction.

docs/tasks.md gives the sizes but not the densities. These densities make the planted clique the
largest in most instances while random cliques of its size arise often. The easy tier draws 7-9
vertices where the table says 4-8: graphs of 4-6 vertices are too few to fill a training set
(docs/tiers.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig
from npgym.graphs import random_edges

MAX_GENERATED_VERTICES = 1000


class MaxCliqueConfig(GeneratorConfig):
    """How MaxClique instances are drawn: vertices, planted clique size and edge density.

    A clique size above the drawn ``n`` is lowered to ``n``.
    """

    growth: ClassVar[Mapping[str, float]] = {
        "n_min": 1.0,
        "n_max": 1.0,
        "clique_min": 0.25,
        "clique_max": 0.25,
    }
    """Above the benchmark tier the planted clique grows with the fourth root of the size, so it
    stays about as large as the cliques a random graph of that size holds by chance: a degree
    greedy then finds a largest clique in about 40% of instances at difficulty 2.0, where a
    planted clique growing with the square root stood out and was found in 80%."""

    n_min: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    n_max: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    clique_min: int = Field(ge=1, le=MAX_GENERATED_VERTICES)
    clique_max: int = Field(ge=1, le=MAX_GENERATED_VERTICES)
    density: float = Field(ge=0.0, le=1.0, description="probability of each non-planted edge")


TIERS: dict[str, MaxCliqueConfig] = {
    "easy": MaxCliqueConfig(n_min=7, n_max=9, clique_min=2, clique_max=4, density=0.35),
    "medium": MaxCliqueConfig(n_min=8, n_max=12, clique_min=2, clique_max=4, density=0.35),
    "hard": MaxCliqueConfig(n_min=12, n_max=16, clique_min=2, clique_max=6, density=0.45),
    "benchmark": MaxCliqueConfig(n_min=16, n_max=20, clique_min=4, clique_max=8, density=0.5),
}


def planted_graph(
    rng: np.random.Generator,
    n_range: tuple[int, int],
    size_range: tuple[int, int],
    density: float,
    planted_edges: bool,
) -> dict[str, Any]:
    """Draw ``n``, plant a vertex set of a drawn size, then add random edges at ``density``.

    The planted set is made a clique (``planted_edges``) or an independent set (otherwise): its
    pairs are forced in or out of the edge set. Shared by MaxClique and MaxIndependentSet.
    """
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    size = int(rng.integers(min(size_range[0], n), min(size_range[1], n) + 1))
    planted = rng.choice(n, size=size, replace=False)
    inside = np.zeros(n, np.bool_)
    inside[planted] = True
    edges = {(u, v) for u, v in random_edges(rng, n, density) if not (inside[u] and inside[v])}
    if planted_edges:
        members = np.flatnonzero(inside).tolist()
        edges.update((u, v) for i, u in enumerate(members) for v in members[i + 1 :])
    return {"n": n, "edges": tuple(sorted(edges))}


def build(rng: np.random.Generator, config: MaxCliqueConfig) -> dict[str, Any]:
    """Draw a graph with a planted clique."""
    return planted_graph(
        rng,
        (config.n_min, config.n_max),
        (config.clique_min, config.clique_max),
        config.density,
        planted_edges=True,
    )
