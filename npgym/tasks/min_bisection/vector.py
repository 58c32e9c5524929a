"""MinBisection's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.min_bisection.structured.MinBisectionEpisode` with the batch first, stepped
in one numba call. Each slot places its vertices in order; a part is legal while it holds fewer
than ceil(n / 2) of them, and the cut grows by the placed vertex's edges to the other part.

With the objective reward, a batch of instances is drawn in one numba call that reproduces
:func:`~npgym.tasks.min_bisection.generator.build`'s numpy draws (:mod:`npgym.streams`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.streams import integer, permutation, uniform
from npgym.tasks.min_bisection.generator import (
    AGENT_HEAVY,
    AGENT_LIGHT,
    HEAVY,
    LIGHT,
    NOISE,
    TRAITOR_TIE,
    TRAITOR_TIE_DENSITY,
)
from npgym.tasks.min_bisection.instance import MinBisectionInstance
from npgym.tasks.min_bisection.structured import MinBisectionEpisode
from npgym.vector import BatchedEpisode, mark_real, seeded_slot, set_symmetric


@njit
def _pair_edges(
    state: np.ndarray,
    count: int,
    same: np.ndarray,
    own: tuple[float, int, int],
    other: tuple[float, int, int],
) -> np.ndarray:
    """``count`` edge weights as the generator draws them at once: ``count`` uniforms, then
    ``count`` weights of each span; entry k is an edge (weight of ``own`` when ``same[k]``, else
    of ``other``) with the span's probability, else 0."""
    draws = np.empty(count)
    for k in range(count):
        draws[k] = uniform(state)
    own_weights = np.empty(count, np.int64)
    for k in range(count):
        own_weights[k] = integer(state, own[1], own[2] + 1)
    other_weights = np.empty(count, np.int64)
    for k in range(count):
        other_weights[k] = integer(state, other[1], other[2] + 1)
    edges = np.zeros(count, np.int64)
    for k in range(count):
        if same[k]:
            edges[k] = own_weights[k] if draws[k] < own[0] else 0
        else:
            edges[k] = other_weights[k] if draws[k] < other[0] else 0
    return edges


@njit
def _rewire(
    state: np.ndarray,
    matrix: np.ndarray,
    vertex: int,
    community: np.ndarray,
    own: tuple[float, int, int],
    other: tuple[float, int, int],
) -> None:
    """The generator's ``_rewire``: every edge of ``vertex`` drawn again."""
    same = community == community[vertex]
    row = _pair_edges(state, community.size, same, own, other)
    row[vertex] = 0
    matrix[vertex, :] = row
    matrix[:, vertex] = row


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    n_min: int,
    n_max: int,
    intra_density: float,
    inter_density: float,
    noise: float,
    traitor_count: int,
    agent_count: int,
    weights: np.ndarray,
    vertex_count: np.ndarray,
) -> None:
    """Each slot's graph as :func:`~npgym.tasks.min_bisection.generator.build` draws it from
    ``task.generate``'s stream for its seed: communities, their pairs, traitors, double agents,
    then noise (pairs in row-major order over ``i < j``)."""
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        n = integer(state, n_min, n_max + 1)
        order = permutation(state, n)
        community = np.zeros(n, np.int64)
        community[order[n // 2 :]] = 1
        pairs = n * (n - 1) // 2
        first = np.empty(pairs, np.int64)
        second = np.empty(pairs, np.int64)
        k = 0
        for i in range(n):
            for j in range(i + 1, n):
                first[k], second[k] = i, j
                k += 1
        same = community[first] == community[second]
        matrix = np.zeros((n, n), np.int64)
        edges = _pair_edges(
            state,
            pairs,
            same,
            (intra_density, HEAVY[0], HEAVY[1]),
            (inter_density, LIGHT[0], LIGHT[1]),
        )
        for k in range(pairs):
            set_symmetric(matrix, first[k], second[k], edges[k])
        traitors = order[: min(traitor_count, n // 2)]
        for vertex in traitors:
            _rewire(
                state,
                matrix,
                vertex,
                community,
                (TRAITOR_TIE_DENSITY, TRAITOR_TIE[0], TRAITOR_TIE[1]),
                (intra_density, HEAVY[0], HEAVY[1]),
            )
        for vertex in order[n // 2 : n // 2 + min(agent_count, n - n // 2)]:
            kept = matrix[vertex, traitors].copy()
            _rewire(
                state,
                matrix,
                vertex,
                community,
                (intra_density / 2, AGENT_HEAVY[0], AGENT_HEAVY[1]),
                (intra_density, AGENT_LIGHT[0], AGENT_LIGHT[1]),
            )
            matrix[vertex, traitors] = kept
            matrix[traitors, vertex] = kept
        draws = np.empty(pairs)
        for k in range(pairs):
            draws[k] = uniform(state)
        for k in range(pairs):
            weight = integer(state, NOISE[0], NOISE[1] + 1)
            if matrix[first[k], second[k]] == 0 and draws[k] < noise:
                set_symmetric(matrix, first[k], second[k], weight)
        weights[slot] = 0
        weights[slot, :n, :n] = matrix
        vertex_count[slot] = n


@njit
def _restart(
    slots: np.ndarray,
    vertex_count: np.ndarray,
    vertex_mask: np.ndarray,
    side: np.ndarray,
    vertex: np.ndarray,
    action_mask: np.ndarray,
    part_sizes: np.ndarray,
    cut: np.ndarray,
) -> None:
    """Nothing placed yet in ``slots``, vertex 0 to place (both parts legal: n >= 2)."""
    for slot in slots:
        mark_real(vertex_mask[slot], vertex_count[slot])
        side[slot, :] = -1
        vertex[slot, 0] = 0
        part_sizes[slot, :] = 0
        cut[slot] = 0
        action_mask[slot, :] = 1


@njit
def _step(
    slots: np.ndarray,
    actions: np.ndarray,
    vertex_count: np.ndarray,
    weights: np.ndarray,
    side: np.ndarray,
    vertex: np.ndarray,
    action_mask: np.ndarray,
    part_sizes: np.ndarray,
    cut: np.ndarray,
    finished: np.ndarray,
) -> None:
    """Put the next vertex of each slot in ``slots`` in its chosen part, adding its edges to
    the other part (the vertices before it) to the cut; flag finished splits."""
    for slot in slots:
        part = actions[slot]
        current = vertex[slot, 0]
        for placed in range(current):
            if side[slot, placed] != part:
                cut[slot] += weights[slot, current, placed]
        side[slot, current] = part
        part_sizes[slot, part] += 1
        vertex[slot, 0] = current + 1
        n = vertex_count[slot]
        if current + 1 == n:
            finished[slot] = True
        else:
            half = (n + 1) // 2
            action_mask[slot, 0] = part_sizes[slot, 0] < half
            action_mask[slot, 1] = part_sizes[slot, 1] < half


class MinBisectionBatch(BatchedEpisode):
    """B balanced splits built vertex by vertex."""

    episode = MinBisectionEpisode

    static_keys = ("weights", "vertex_mask")

    restart_kernel = staticmethod(_restart)
    step_kernel = staticmethod(_step)
    draw_kernel = staticmethod(_draw_into)
    draw_fields = (
        "n_min",
        "n_max",
        "intra_density",
        "inter_density",
        "noise",
        "traitors",
        "double_agents",
    )

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        self.vertex_count = np.zeros(batch_size, np.int64)
        self.part_sizes = np.zeros((batch_size, 2), np.int64)
        self.cut = np.zeros(batch_size, np.int64)

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, MinBisectionInstance)
        return {"weights": instance.weights, "vertex_count": instance.n}

    def objectives(self) -> np.ndarray:
        return self.cut.astype(np.float64)

    def solution(self, slot: int) -> list[list[int]]:
        side = self.buffers["side"][slot]
        return [np.flatnonzero(side == part).tolist() for part in (0, 1)]
