"""MaxIndependentSet's structured episodes over a batch: MaxClique's
(:mod:`npgym.tasks.max_clique.vector`) on the complement graph's pairs.

With the objective reward, a batch of instances is drawn in one numba call that reproduces
:func:`~npgym.tasks.max_independent_set.generator.build`'s numpy draws (:mod:`npgym.streams`).
"""

from __future__ import annotations

import numpy as np

from npgym.heuristics.cliques import complement
from npgym.heuristics.jit import njit
from npgym.streams import integer, permutation, uniform
from npgym.tasks.max_clique.vector import VertexSetBatch, planted_graph_into, store_pairs
from npgym.tasks.max_independent_set.structured import MaxIndependentSetEpisode
from npgym.vector import seeded_slot, set_symmetric


@njit
def _covered_graph_into(
    state: np.ndarray,
    n_min: int,
    n_max: int,
    size_min: int,
    size_max: int,
    density: float,
    graph: np.ndarray,
) -> int:
    """:func:`~npgym.tasks.max_independent_set.generator.covered_graph` into ``graph`` (all
    zero, at least n x n): ``n``, ``k``, a permutation (planted vertices first), the other
    vertices' groups, then one uniform per pair ``u < v`` in lexicographic order. Returns
    ``n``."""
    n = integer(state, n_min, n_max + 1)
    k = integer(state, min(size_min, n), min(size_max, n) + 1)
    order = permutation(state, n)
    planted = np.sort(order[:k])
    group = np.empty(n, np.int64)
    inside = np.zeros(n, np.bool_)
    for index in range(k):
        group[planted[index]] = index
        inside[planted[index]] = True
    for position in range(k, n):
        group[order[position]] = integer(state, 0, k)
    outside_own_group = (n - k) * (1 - 1 / k)
    unplanted_density = (
        density * max(0.0, outside_own_group - k + 1) / outside_own_group
        if outside_own_group > 0
        else density
    )
    for u in range(n):
        for v in range(u + 1, n):
            draw = uniform(state)
            planted_ends = np.int64(inside[u]) + np.int64(inside[v])
            chance = density if planted_ends == 1 else unplanted_density
            edge = group[u] == group[v] or (planted_ends < 2 and draw < chance)
            set_symmetric(graph, u, v, edge)
    return n


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    clique_cover: bool,
    n_min: int,
    n_max: int,
    set_min: int,
    set_max: int,
    density: float,
    adjacency: np.ndarray,
    compatible_pairs: np.ndarray,
    vertex_count: np.ndarray,
) -> None:
    """Each slot's graph as :func:`~npgym.tasks.max_independent_set.generator.build` draws it
    from ``task.generate``'s stream for its seed, numpy's draws reproduced by
    :mod:`npgym.streams`; its compatible pairs are the complement graph's."""
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        adjacency[slot] = 0
        if clique_cover:
            n = _covered_graph_into(state, n_min, n_max, set_min, set_max, density, adjacency[slot])
        else:
            n = planted_graph_into(
                state, n_min, n_max, set_min, set_max, density, False, adjacency[slot]
            )
        store_pairs(slot, n, adjacency, compatible_pairs, vertex_count, True)


class MaxIndependentSetBatch(VertexSetBatch):
    """Independent sets: every added vertex adjacent to no selected one."""

    episode = MaxIndependentSetEpisode

    draw_kernel = staticmethod(_draw_into)
    draw_fields = ("clique_cover", "n_min", "n_max", "set_min", "set_max", "density")

    @classmethod
    def compatible(cls, adjacency: np.ndarray) -> np.ndarray:
        """Pairs that are no edge (the complement graph, as the instance's
        ``complement_adjacency``)."""
        return complement(adjacency)
