"""MinBisection generator config, the published tiers, and the generator itself.

Construction (all weights are integers in 1..10):

1. Draw ``n`` and split a random permutation of the vertices into two hidden communities,
   ``C0`` (``n // 2`` vertices) and ``C1`` (the rest). Vertex ids carry no hint of the split.
2. Every pair inside a community is an edge with probability ``intra_density``, weight 5..10;
   every pair across is an edge with probability ``inter_density``, weight 1..4.
3. ``traitors`` vertices of ``C0`` are rewired: towards ``C1`` they get the edges of a ``C1``
   member (probability ``intra_density``, weight 5..10), towards ``C0`` only sparse light ties
   (probability 0.2, weight 1..3). Their edges mostly go to the other community, so the planted
   split is wrong for them; moving them over unbalances the parts, so the optimum must also
   send back the cheapest vertices, a trade-off no local rule settles.
4. ``double_agents`` vertices of ``C1`` are rewired the other way round: twice as many edges
   to ``C0`` as to ``C1`` (probability ``intra_density`` vs. half of it), but the ``C0`` edges
   are light (1..3) and the ``C1`` edges heavy (8..10), so counting neighbours misleads while
   the weights keep them in ``C1``. Pairs with a traitor keep the traitor's draw.
5. Noise: every pair that is still no edge becomes one with probability ``noise``, weight
   1..10.

The planted split is only a guess (traitors make it far from optimal); the reference is always
computed by the solvers. The counts of traitors and double agents are capped at the sizes of
their communities.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from npgym.config import GeneratorConfig, range_growth

MAX_GENERATED_VERTICES = 1000
HEAVY = (5, 10)
LIGHT = (1, 4)
TRAITOR_TIE = (1, 3)
TRAITOR_TIE_DENSITY = 0.2
AGENT_HEAVY = (8, 10)
AGENT_LIGHT = (1, 3)
NOISE = (1, 10)


class MinBisectionConfig(GeneratorConfig):
    """How MinBisection instances are drawn: size, community structure, noise and deception."""

    growth: ClassVar[Mapping[str, float]] = range_growth(n=1.0) | {
        "intra_density": -1.0,
        "inter_density": -1.0,
        "noise": -1.0,
        "traitors": 1.0,
        "double_agents": 1.0,
    }

    n_min: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    n_max: int = Field(ge=2, le=MAX_GENERATED_VERTICES)
    intra_density: float = Field(ge=0.0, le=1.0, description="edge probability in a community")
    inter_density: float = Field(ge=0.0, le=1.0, description="light edge probability across")
    noise: float = Field(ge=0.0, le=1.0, description="probability of a random extra edge")
    traitors: int = Field(0, ge=0, le=MAX_GENERATED_VERTICES)
    double_agents: int = Field(0, ge=0, le=MAX_GENERATED_VERTICES)


TIERS: dict[str, MinBisectionConfig] = {
    "easy": MinBisectionConfig(
        n_min=28, n_max=32, intra_density=0.8, inter_density=0.02, noise=0.1
    ),
    "medium": MinBisectionConfig(
        n_min=40, n_max=44, intra_density=0.6, inter_density=0.04, noise=0.15
    ),
    "hard": MinBisectionConfig(
        n_min=43, n_max=47, intra_density=0.9, inter_density=0.02, noise=0.1, traitors=1
    ),
    "benchmark": MinBisectionConfig(
        n_min=48,
        n_max=52,
        intra_density=0.7,
        inter_density=0.02,
        noise=0.02,
        traitors=5,
        double_agents=4,
    ),
}


def _weights(rng: np.random.Generator, span: tuple[int, int], size: int) -> np.ndarray:
    return rng.integers(span[0], span[1] + 1, size=size)


def _rewire(
    matrix: np.ndarray,
    vertex: int,
    same: np.ndarray,
    own: tuple[float, tuple[int, int]],
    other: tuple[float, tuple[int, int]],
    rng: np.random.Generator,
) -> None:
    """Redraw all edges of ``vertex``: ``own``/``other`` are (probability, weight span) for the
    vertices of its community (``same``) and of the other one."""
    n = matrix.shape[0]
    draws = rng.random(n)
    own_weights, other_weights = _weights(rng, own[1], n), _weights(rng, other[1], n)
    row = np.where(
        same,
        np.where(draws < own[0], own_weights, 0),
        np.where(draws < other[0], other_weights, 0),
    )
    row[vertex] = 0
    matrix[vertex, :] = row
    matrix[:, vertex] = row


def build(rng: np.random.Generator, config: MinBisectionConfig) -> dict[str, Any]:
    """Draw the graph (see the module docstring for the construction)."""
    n = int(rng.integers(config.n_min, config.n_max + 1))
    order = rng.permutation(n)
    community = np.zeros(n, dtype=np.int64)
    community[order[n // 2 :]] = 1
    first, second = np.triu_indices(n, 1)
    same = community[first] == community[second]
    draws = rng.random(first.size)
    heavy, light = _weights(rng, HEAVY, first.size), _weights(rng, LIGHT, first.size)
    matrix = np.zeros((n, n), dtype=np.int64)
    matrix[first, second] = np.where(
        same,
        np.where(draws < config.intra_density, heavy, 0),
        np.where(draws < config.inter_density, light, 0),
    )
    matrix += matrix.T

    traitors = order[: min(config.traitors, n // 2)]
    for vertex in traitors.tolist():
        _rewire(
            matrix,
            vertex,
            community == community[vertex],
            (TRAITOR_TIE_DENSITY, TRAITOR_TIE),
            (config.intra_density, HEAVY),
            rng,
        )
    agents = order[n // 2 : n // 2 + min(config.double_agents, n - n // 2)]
    for vertex in agents.tolist():
        kept = matrix[vertex, traitors].copy()
        _rewire(
            matrix,
            vertex,
            community == community[vertex],
            (config.intra_density / 2, AGENT_HEAVY),
            (config.intra_density, AGENT_LIGHT),
            rng,
        )
        matrix[vertex, traitors] = kept
        matrix[traitors, vertex] = kept

    draws = rng.random(first.size)
    noise_weights = _weights(rng, NOISE, first.size)
    added = (matrix[first, second] == 0) & (draws < config.noise)
    matrix[first[added], second[added]] = noise_weights[added]

    tails, heads = np.nonzero(np.triu(matrix, 1))  # row-major: already in canonical order
    edges = tuple(zip(tails.tolist(), heads.tolist(), matrix[tails, heads].tolist(), strict=True))
    return {"n": n, "edges": edges}
