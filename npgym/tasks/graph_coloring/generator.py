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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig
from npgym.graphs import random_edges

MAX_GENERATED_VERTICES = 500
BIPARTITE_REDRAWS = 100
"""How often a bipartite graph with k >= 3 planted colours is redrawn before it is kept."""
"""Largest graph the generator draws (the prompt of a dense 500-vertex graph is ~0.6 MB)."""


class GraphColoringConfig(GeneratorConfig):
    """How colouring instances are drawn: vertex count, planted colour count, edge density."""

    growth: ClassVar[Mapping[str, float]] = {
        "n_min": 1.0,
        "n_max": 1.0,
        "colours_min": 0.5,
        "colours_max": 0.5,
    }

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
    """Plant a balanced k-colouring, then add the edges between classes."""
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
    planted = tuple(labels.setdefault(int(colour), len(labels)) for colour in classes)
    return {"n": n, "edges": tuple(edges), "planted_colouring": planted}


def _edges_between_classes(
    rng: np.random.Generator, n: int, density: float, classes: np.ndarray
) -> list[tuple[int, int]]:
    """Random pairs at ``density``, kept only across two planted colour classes."""
    return [(u, v) for u, v in random_edges(rng, n, density) if classes[u] != classes[v]]


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
