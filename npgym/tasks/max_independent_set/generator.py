"""MaxIndependentSet generator config, the published tiers, and the generator itself.

Construction (NP-ENGINE): draw ``n`` and a set size ``k``, keep ``k`` random vertices pairwise
non-adjacent, then add every other pair as an edge with probability ``density``. Random sparsity
can leave an independent set larger than the planted one, so the reference is computed exactly,
never taken from the construction.

docs/tasks.md gives the sizes but not the densities. The planted set is a large share of the graph
(about 40%), so sparse graphs would almost always hold a larger one. These densities, lower for
the larger tiers, keep the planted size competitive while larger sets still arise (the optimum
exceeded the planted size in about half the instances of each tier when they were chosen).

Above the benchmark tier (``clique_cover``, set by the growth path only) the planted set is made
provably maximum, so the reference stays a proof at sizes where no search can give one: the
vertices are split into ``k`` groups, each holding exactly one vertex of the planted set ``S``
(``|S| = k``, the other vertices placed in groups uniformly at random), and every group is made
a clique. An independent set takes at most one vertex of each clique, so ``alpha <= k = |S|``.
Between groups each pair is an edge with probability about ``density``: two vertices of ``S``
are never joined, and two vertices outside ``S`` a little less often (see :func:`covered_graph`)
so that every vertex has the same expected degree. The planted vertices are then not the graph's
lowest-degree ones, which would lead the minimum-degree greedy to them. The groups are stored on
the instance (``planted_cover``: metadata, never in the prompt); the reference checks them
against the graph before trusting them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig, range_growth
from npgym.tasks.max_clique.generator import MAX_GENERATED_VERTICES, planted_graph


class MaxIndependentSetConfig(GeneratorConfig):
    """How MaxIndependentSet instances are drawn: vertices, planted set size and edge density.

    A set size above the drawn ``n`` is lowered to ``n``.
    """

    growth: ClassVar[Mapping[str, float]] = range_growth(n=1.0, set=0.25)
    """Above the benchmark tier the planted set grows with the fourth root of the size, below
    the independent sets the random graph holds by chance, so the minimum-degree greedy is no
    longer led to it."""

    n_min: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    n_max: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    set_min: int = Field(ge=1, le=MAX_GENERATED_VERTICES)
    set_max: int = Field(ge=1, le=MAX_GENERATED_VERTICES)
    density: float = Field(ge=0.0, le=1.0, description="probability of each allowed edge")
    clique_cover: bool = Field(
        False,
        exclude_if=lambda value: not value,
        description="plant a clique cover that proves the planted set maximum (above the "
        "benchmark tier; left out of the config's JSON when off, so the tiers keep their bytes)",
    )

    grown_values: ClassVar[Mapping[str, Any]] = {"clique_cover": True}


TIERS: dict[str, MaxIndependentSetConfig] = {
    "easy": MaxIndependentSetConfig(n_min=12, n_max=20, set_min=4, set_max=8, density=0.4),
    "medium": MaxIndependentSetConfig(n_min=20, n_max=30, set_min=8, set_max=12, density=0.4),
    "hard": MaxIndependentSetConfig(n_min=30, n_max=40, set_min=12, set_max=16, density=0.25),
    "benchmark": MaxIndependentSetConfig(n_min=40, n_max=50, set_min=16, set_max=20, density=0.2),
}


def build(rng: np.random.Generator, config: MaxIndependentSetConfig) -> dict[str, Any]:
    """Draw a graph with a planted independent set (proven maximum by a planted clique cover
    when ``config.clique_cover``)."""
    if config.clique_cover:
        return covered_graph(
            rng, (config.n_min, config.n_max), (config.set_min, config.set_max), config.density
        )
    return planted_graph(
        rng,
        (config.n_min, config.n_max),
        (config.set_min, config.set_max),
        config.density,
        planted_edges=False,
    )


def covered_graph(
    rng: np.random.Generator, n_range: tuple[int, int], size_range: tuple[int, int], density: float
) -> dict[str, Any]:
    """Draw a graph whose planted independent set ``S`` is maximum, with the clique cover that
    proves it (``planted_cover``: one group per vertex of ``S``, that vertex first, the others
    ascending; groups ordered by their planted vertex).

    Pairs in one group are edges; pairs of ``S`` never are; a pair of different groups with one
    end in ``S`` is an edge with probability ``density``, one with no end in ``S`` with
    ``density * (m - k + 1) / m``, where ``m`` is how many vertices outside ``S`` lie outside a
    group of average size. A vertex of ``S`` draws its neighbours among those ``m``, a vertex
    outside ``S`` among them and the ``k - 1`` planted vertices of the other groups: the lower
    probability gives both the same expected degree, and keeps the graph's density close to the
    benchmark tier's.
    """
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    k = int(rng.integers(min(size_range[0], n), min(size_range[1], n) + 1))
    order = rng.permutation(n)
    planted = np.sort(order[:k])
    group = np.empty(n, np.int64)
    group[planted] = np.arange(k)
    group[order[k:]] = rng.integers(0, k, n - k)
    inside = np.zeros(n, np.bool_)
    inside[planted] = True
    outside_own_group = (n - k) * (1 - 1 / k)
    unplanted_density = (
        density * max(0.0, outside_own_group - k + 1) / outside_own_group
        if outside_own_group > 0
        else density
    )
    first, second = np.triu_indices(n, 1)
    same_group = group[first] == group[second]
    planted_ends = inside[first].astype(np.int64) + inside[second]
    chance = np.where(planted_ends == 1, density, unplanted_density)
    chosen = same_group | ((planted_ends < 2) & (rng.random(first.size) < chance))
    edges = tuple(zip(first[chosen].tolist(), second[chosen].tolist(), strict=True))
    cover = tuple(
        (int(leader), *sorted(set(np.flatnonzero(group == index).tolist()) - {int(leader)}))
        for index, leader in enumerate(planted.tolist())
    )
    return {"n": n, "edges": edges, "planted_cover": cover}
