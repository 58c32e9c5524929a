"""Graph colouring generator config, the published tiers, and the generator itself.

Construction (a planted k-colouring, as published): draw n and k, split the vertices at random
into k colour classes of near-equal size (sizes differ by at most one, the hardest kind of plant
for a given k), then join each pair of vertices in *different* classes independently with
probability ``density``. The planted classes stay a proper k-colouring, so the chromatic number
is at most k; random edges can leave it below k, which is why the reference is solved exactly.
``density`` is the edge probability between classes, so the share of all pairs that are edges
is about ``density * (1 - 1/k)``.

With k >= 3 planted colours a graph must need at least 3: a bipartite draw (possible only in
small sparse graphs, so in practice only below the medium tier) has its edges redrawn, up to
:data:`BIPARTITE_REDRAWS` times. The published easy tier (8-12 vertices, 3-4 colours, edge
density ~0.2) was two-colourable in 57% of instances without it. A redraw uses the rng only when
the first graph is bipartite, so the tiers whose graphs never are (hard, benchmark) keep their
bytes.

Densities (see docs/tiers.md): at easy, 0.2 with the bipartite redraws and, at medium, 0.44 make
the share of pairs that are edges the published ~0.2 and ~0.35; hard and benchmark keep 0.5
(~0.44 of pairs: the published ~0.5 would change NP-Bench).

Above the benchmark tier (a config whose ``n_max`` exceeds the benchmark preset's 40: difficulty
above about 0.81, or an override that large) the generator also plants a quiet *certificate*: a
k-clique with one random vertex in each colour class. Its pairs all join two classes, so the
planted colouring stays proper; the clique needs k colours and the planted colouring uses k, so
the chromatic number is exactly k, proven by construction, where a maximum-clique bound would be
far below k (a random k-partite graph's largest clique is about ``2 log2 n``). Each clique vertex
then loses as many random edges to non-clique vertices as the clique added to it, so its degree
keeps the distribution it had (the clique does not stand out to a degree-ordered greedy). The
clique is stored as the instance's ``planted_clique`` (metadata: not in the prompt or the
fingerprint); the reference checks it before trusting it. The published tiers never plant it,
so they and NP-Bench keep their bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig, range_growth
from npgym.graphs import random_edges

MAX_GENERATED_VERTICES = 500
BIPARTITE_REDRAWS = 100
"""How often a bipartite graph with k >= 3 planted colours is redrawn before it is kept."""
"""Largest graph the generator draws (the prompt of a dense 500-vertex graph is ~0.6 MB)."""


class GraphColoringConfig(GeneratorConfig):
    """How colouring instances are drawn: vertex count, planted colour count, edge density."""

    growth: ClassVar[Mapping[str, float]] = range_growth(n=1.0, colours=0.5)

    n_min: int = Field(ge=3, le=MAX_GENERATED_VERTICES)
    n_max: int = Field(ge=3, le=MAX_GENERATED_VERTICES)
    colours_min: int = Field(
        ge=1, le=MAX_GENERATED_VERTICES, description="planted colours (at most n are used)"
    )
    colours_max: int = Field(ge=1, le=MAX_GENERATED_VERTICES)
    density: float = Field(
        ge=0.0, le=1.0, description="probability of an edge between two planted colour classes"
    )


TIERS: dict[str, GraphColoringConfig] = {
    "easy": GraphColoringConfig(n_min=8, n_max=12, colours_min=3, colours_max=4, density=0.2),
    "medium": GraphColoringConfig(n_min=15, n_max=22, colours_min=4, colours_max=6, density=0.44),
    "hard": GraphColoringConfig(n_min=25, n_max=32, colours_min=6, colours_max=8, density=0.5),
    "benchmark": GraphColoringConfig(n_min=32, n_max=40, colours_min=6, colours_max=8, density=0.5),
}


def build(rng: np.random.Generator, config: GraphColoringConfig) -> dict[str, Any]:
    """Plant a balanced k-colouring, then add the edges between classes (and, beyond the
    benchmark sizes, a clique certificate)."""
    return draw(rng, config, certify=plants_certificate(config))


def draw(rng: np.random.Generator, config: GraphColoringConfig, *, certify: bool) -> dict[str, Any]:
    """The instance fields :func:`build` draws, with the clique certificate planted exactly when
    ``certify`` is set (tests plant it in tiny graphs, where brute force can check it)."""
    n = int(rng.integers(config.n_min, config.n_max + 1))
    k = min(int(rng.integers(config.colours_min, config.colours_max + 1)), n)
    classes = np.empty(n, np.int64)
    classes[rng.permutation(n)] = np.arange(n) % k
    edges = _edges_between_classes(rng, n, config.density, classes)
    for _ in range(BIPARTITE_REDRAWS if k >= 3 else 0):
        if not _bipartite(n, edges):
            break
        edges = _edges_between_classes(rng, n, config.density, classes)
    labels: dict[int, int] = {}
    planted = tuple(labels.setdefault(int(color), len(labels)) for color in classes)
    if not certify:
        return {"n": n, "edges": tuple(edges), "planted_colouring": planted}
    clique = _clique_across_classes(rng, classes, k)
    edges = _plant_clique(rng, n, edges, clique)
    return {
        "n": n,
        "edges": tuple(edges),
        "planted_colouring": planted,
        "planted_clique": tuple(clique),
    }


def plants_certificate(config: GraphColoringConfig) -> bool:
    """Whether ``config`` draws beyond the benchmark preset's sizes, where the generator plants
    a clique certificate (never at a published tier, so NP-Bench keeps its bytes)."""
    return config.n_max > TIERS["benchmark"].n_max


def _clique_across_classes(rng: np.random.Generator, classes: np.ndarray, k: int) -> list[int]:
    """One uniformly random vertex of each of the k colour classes, sorted."""
    picks = []
    for color in range(k):
        members = np.flatnonzero(classes == color)
        picks.append(int(members[rng.integers(members.size)]))
    return sorted(picks)


def _plant_clique(
    rng: np.random.Generator, n: int, edges: list[tuple[int, int]], clique: list[int]
) -> list[tuple[int, int]]:
    """``edges`` with every pair of ``clique`` joined; each clique vertex then drops as many
    random edges to non-clique vertices as it gained, so its degree does not stand out."""
    adjacency = np.zeros((n, n), np.bool_)
    if edges:
        pairs = np.array(edges, np.int64)
        adjacency[pairs[:, 0], pairs[:, 1]] = adjacency[pairs[:, 1], pairs[:, 0]] = True
    members = np.array(clique, np.int64)
    inside = np.zeros(n, np.bool_)
    inside[members] = True
    gained = (~adjacency[np.ix_(members, members)]).sum(axis=1) - 1  # the diagonal is no gain
    adjacency[np.ix_(members, members)] = True
    adjacency[members, members] = False
    for vertex, count in zip(clique, gained.tolist(), strict=True):
        outside = np.flatnonzero(adjacency[vertex] & ~inside)
        dropped = rng.choice(outside, size=min(count, outside.size), replace=False)
        adjacency[vertex, dropped] = adjacency[dropped, vertex] = False
    first, second = np.nonzero(np.triu(adjacency, 1))
    return list(zip(first.tolist(), second.tolist(), strict=True))


def _edges_between_classes(
    rng: np.random.Generator, n: int, density: float, classes: np.ndarray
) -> list[tuple[int, int]]:
    """Random pairs at ``density``, kept only across two planted colour classes."""
    drawn = random_edges(rng, n, density)
    if not drawn:
        return []
    pairs = np.array(drawn, np.int64)
    first, second = pairs[classes[pairs[:, 0]] != classes[pairs[:, 1]]].T
    return list(zip(first.tolist(), second.tolist(), strict=True))


def _bipartite(n: int, edges: list[tuple[int, int]]) -> bool:
    """Whether the graph has no odd cycle (two colours suffice): a breadth-first 2-colouring
    (networkx would do it too, but would load its whole package into every generator call)."""
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        neighbours[u].append(v)
        neighbours[v].append(u)
    side = [-1] * n
    for root in range(n):
        if side[root] >= 0:
            continue
        side[root] = 0
        queue = [root]
        for vertex in queue:
            for other in neighbours[vertex]:
                if side[other] < 0:
                    side[other] = 1 - side[vertex]
                    queue.append(other)
                elif side[other] == side[vertex]:
                    return False
    return True
