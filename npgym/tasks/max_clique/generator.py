"""MaxClique generator config, the published tiers, and the generator itself.

Revision 1 (NP-ENGINE, NP-Bench version 1): draw ``n`` and a clique size ``k``, make ``k`` random
vertices pairwise adjacent, then add every other pair as an edge with probability ``density``.
The clique's members then have about (k - 1)(1 - density) more neighbours than the others, so
the shipped greedy (start at a vertex of highest degree) found a largest clique in 88-98% of the
instances of every tier, and hard and benchmark were equally hard.

Revision 2 (the tiers today) hides the clique from degree-based choices, with two tools whose
strength each tier's preset fixes (never drawn per seed):

- **Camouflage** (``camouflage`` in [0, 1]). An edge between a member and a non-member is drawn
  with a probability between ``density`` (0, revision 1) and the one at which a member's
  expected degree equals a non-member's (1; :func:`member_link_probability`). Pairs of
  non-members keep ``density``.
- **A decoy** (``decoy_scale``; only for ``k >= 3``): ``decoy_scale * (k - 1)`` non-members
  (rounded half up, at most all of them) form a complete multipartite graph with ``k - 1`` parts
  of as equal sizes as possible, ``decoy_scale`` vertices each. Its largest clique has ``k - 1``
  vertices, one per part, yet its vertices have about ``(k - 2) * decoy_scale`` neighbours inside
  it, more than a member's ``k - 1`` once ``decoy_scale`` exceeds 1: the greedy starts there and
  stops one short. At 1 the decoy is a clique of ``k - 1``. Its other edges stay random.

Random edges can still form a clique as large as the planted one or larger (a clique of two or
three in a small graph, a decoy clique extended by a vertex adjacent to all of it, or a chance
clique of a large graph), so the reference is computed exactly, never taken from the
construction.

docs/tasks.md gives the sizes but not the densities. The easy tier draws 7-9 vertices where the
table says 4-8: graphs of 4-6 vertices are too few to fill a training set (docs/tiers.md). The
greedy figures per tier and difficulty are in docs/tiers.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig, range_growth
from npgym.graphs import random_edges

MAX_GENERATED_VERTICES = 1000

REVISION_2_FIELDS = ("camouflage", "decoy_scale")
"""Config fields that only revision 2 reads; revision-1 dumps leave them out."""


class MaxCliqueConfig(GeneratorConfig):
    """How MaxClique instances are drawn: vertices, planted clique size, edge density and
    (revision 2) how well the clique is camouflaged and how large the decoy is.

    A clique size above the drawn ``n`` is lowered to ``n``.
    """

    latest_revision: ClassVar[int] = 2
    revision_fields: ClassVar[Mapping[int, tuple[str, ...]]] = {2: REVISION_2_FIELDS}
    growth: ClassVar[Mapping[str, float]] = range_growth(n=1.0, clique=0.25) | {"decoy_scale": 0.75}
    """Above the benchmark tier the planted clique grows with the fourth root of the size, so it
    stays about as large as the cliques a random graph of that size holds by chance (growing
    with the square root, it stood out: the greedy found it in 80% of instances at difficulty
    2.0). The decoy's parts grow as the size over the clique, ``f ** 0.75``, so the decoy keeps
    its share of the graph: the greedy is optimal on 39% of benchmark instances, 38% at 1.2 and
    7% at 2.0 (revision 1: 40% at 2.0)."""

    n_min: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    n_max: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    clique_min: int = Field(ge=1, le=MAX_GENERATED_VERTICES)
    clique_max: int = Field(ge=1, le=MAX_GENERATED_VERTICES)
    density: float = Field(
        ge=0.0,
        le=1.0,
        description="probability of each non-planted edge (revision 2: between non-members)",
    )
    camouflage: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="revision 2: 0 leaves clique members their degree lead, 1 removes it",
    )
    decoy_scale: float | None = Field(
        None,
        ge=0.0,
        le=100.0,
        description="revision 2: vertices per part of the (k-1)-partite decoy (0: no decoy)",
    )


TIERS: dict[str, MaxCliqueConfig] = {
    "easy": MaxCliqueConfig(
        n_min=7,
        n_max=9,
        clique_min=2,
        clique_max=4,
        density=0.35,
        revision=2,
        camouflage=0.25,
        decoy_scale=0.0,
    ),
    "medium": MaxCliqueConfig(
        n_min=8,
        n_max=12,
        clique_min=2,
        clique_max=4,
        density=0.35,
        revision=2,
        camouflage=0.75,
        decoy_scale=1.0,
    ),
    "hard": MaxCliqueConfig(
        n_min=12,
        n_max=16,
        clique_min=2,
        clique_max=6,
        density=0.45,
        revision=2,
        camouflage=1.0,
        decoy_scale=1.5,
    ),
    "benchmark": MaxCliqueConfig(
        n_min=16,
        n_max=20,
        clique_min=4,
        clique_max=8,
        density=0.5,
        revision=2,
        camouflage=1.0,
        decoy_scale=2.0,
    ),
}
"""Revision 2. Sizes and densities are revision 1's: NP-Bench version 1 is the benchmark preset
drawn under revision 1."""


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
    """Draw a graph with a planted clique (by ``config.revision``)."""
    if config.revision == 1:
        return planted_graph(
            rng,
            (config.n_min, config.n_max),
            (config.clique_min, config.clique_max),
            config.density,
            planted_edges=True,
        )
    return _build_revision_2(rng, config)


def member_link_probability(n: int, size: int, density: float, camouflage: float) -> float:
    """Edge probability between a clique member and a non-member.

    At ``camouflage`` 0 it is ``density``, as in revision 1. At 1 it is the probability ``q`` at
    which a member's expected degree, ``size - 1 + q (n - size)``, equals a non-member's,
    ``density (n - size - 1) + q size``; where no ``q`` in [0, 1] does, the one nearest to it (in
    a small graph the clique alone can give its members more neighbours than the others have),
    and ``density`` where ``q`` makes no difference (``n = 2 size``). In between, the weighted
    mean of the two.
    """
    excess = size - 1 - density * (n - size - 1)  # a member's lead at q = 0
    slope = n - 2 * size  # how the lead grows with q
    level = density if slope == 0 else min(max(-excess / slope, 0.0), 1.0)
    return (1.0 - camouflage) * density + camouflage * level


def _build_revision_2(rng: np.random.Generator, config: MaxCliqueConfig) -> dict[str, Any]:
    """Revision 2: a planted clique whose members' degrees do not stand out, and a decoy."""
    # the config's validator guarantees both
    assert config.camouflage is not None and config.decoy_scale is not None
    n = int(rng.integers(config.n_min, config.n_max + 1))
    size = int(rng.integers(min(config.clique_min, n), min(config.clique_max, n) + 1))
    order = rng.permutation(n)
    members, others = order[:size], order[size:]
    probability = np.full((n, n), config.density)
    link = member_link_probability(n, size, config.density, config.camouflage)
    probability[np.ix_(members, others)] = link
    probability[np.ix_(others, members)] = link
    upper = np.triu(rng.random((n, n)) < probability, 1)
    adjacency = upper | upper.T
    adjacency[np.ix_(members, members)] = True
    if size >= 3:
        decoy = others[: min(math.floor(config.decoy_scale * (size - 1) + 0.5), others.size)]
        part = np.arange(decoy.size) % (size - 1)
        adjacency[np.ix_(decoy, decoy)] = part[:, None] != part[None, :]
    np.fill_diagonal(adjacency, False)
    first, second = np.nonzero(np.triu(adjacency, 1))
    return {"n": n, "edges": tuple(zip(first.tolist(), second.tolist(), strict=True))}
