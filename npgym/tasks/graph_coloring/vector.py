"""GraphColoring's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.graph_coloring.structured.GraphColoringEpisode` with the batch first, stepped
in one numba call. Each slot colours its vertices in order; a colour is legal when no coloured
neighbour has it and it is at most one more than the largest colour used so far.

With the objective reward, a batch of instances is drawn in one numba call that reproduces
:func:`~npgym.tasks.graph_coloring.generator.build`'s numpy draws (:mod:`npgym.streams`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.heuristics.jit import njit
from npgym.streams import integer, permutation, uniform
from npgym.tasks.graph_coloring.generator import (
    BIPARTITE_REDRAWS,
    GraphColoringConfig,
    plants_certificate,
)
from npgym.tasks.graph_coloring.structured import GraphColoringEpisode
from npgym.vector import GraphBatch, mark_real, seeded_slot, set_symmetric


@njit
def _edges_between_classes(
    state: np.ndarray, n: int, density: float, classes: np.ndarray, adjacency: np.ndarray
) -> None:
    """The generator's ``_edges_between_classes`` into ``adjacency`` (n x n): one uniform per
    pair ``u < v`` in lexicographic order, an edge when it is below ``density`` and the pair
    joins two planted classes."""
    for u in range(n):
        for v in range(u + 1, n):
            edge = uniform(state) < density and classes[u] != classes[v]
            set_symmetric(adjacency, u, v, edge)


@njit
def _bipartite(n: int, adjacency: np.ndarray) -> bool:
    """Whether the graph has no odd cycle: a breadth-first 2-colouring."""
    side = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    for root in range(n):
        if side[root] >= 0:
            continue
        side[root] = 0
        queue[0] = root
        head, tail = 0, 1
        while head < tail:
            vertex = queue[head]
            head += 1
            for other in range(n):
                if not adjacency[vertex, other]:
                    continue
                if side[other] < 0:
                    side[other] = 1 - side[vertex]
                    queue[tail] = other
                    tail += 1
                elif side[other] == side[vertex]:
                    return False
    return True


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    n_min: int,
    n_max: int,
    colours_min: int,
    colours_max: int,
    density: float,
    adjacency: np.ndarray,
    vertex_count: np.ndarray,
) -> None:
    """Each slot's graph as :func:`~npgym.tasks.graph_coloring.generator.draw` draws it (no
    clique certificate) from ``task.generate``'s stream for its seed, numpy's draws reproduced
    by :mod:`npgym.streams`."""
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        n = integer(state, n_min, n_max + 1)
        k = min(integer(state, colours_min, colours_max + 1), n)
        classes = np.empty(n, np.int64)
        order = permutation(state, n)
        for position in range(n):
            classes[order[position]] = position % k
        adjacency[slot] = 0
        graph = adjacency[slot]
        _edges_between_classes(state, n, density, classes, graph)
        for _ in range(BIPARTITE_REDRAWS if k >= 3 else 0):
            if not _bipartite(n, graph):
                break
            _edges_between_classes(state, n, density, classes, graph)
        vertex_count[slot] = n


@njit
def _legal_colours(
    slot: int,
    adjacency: np.ndarray,
    colours: np.ndarray,
    vertex: int,
    top: int,
    action_mask: np.ndarray,
) -> None:
    """``action_mask[slot]``: the colours ``0..top + 1`` that no coloured neighbour of ``vertex``
    has (only the vertices before it are coloured)."""
    for colour in range(action_mask.shape[1]):
        action_mask[slot, colour] = colour <= top + 1
    for other in range(vertex):
        if adjacency[slot, vertex, other]:
            action_mask[slot, colours[slot, other]] = 0


@njit
def _restart(
    slots: np.ndarray,
    vertex_count: np.ndarray,
    adjacency: np.ndarray,
    vertex_mask: np.ndarray,
    colours: np.ndarray,
    vertex: np.ndarray,
    action_mask: np.ndarray,
    top: np.ndarray,
) -> None:
    """Nothing coloured yet in ``slots``, vertex 0 to colour (colour 0 its only legal move)."""
    for slot in slots:
        mark_real(vertex_mask[slot], vertex_count[slot])
        colours[slot, :] = -1
        vertex[slot, 0] = 0
        top[slot] = -1
        _legal_colours(slot, adjacency, colours, 0, -1, action_mask)


@njit
def _step(
    slots: np.ndarray,
    actions: np.ndarray,
    vertex_count: np.ndarray,
    adjacency: np.ndarray,
    colours: np.ndarray,
    vertex: np.ndarray,
    action_mask: np.ndarray,
    top: np.ndarray,
    finished: np.ndarray,
) -> None:
    """Colour the next vertex of each slot in ``slots``; flag finished colourings."""
    for slot in slots:
        colour = actions[slot]
        current = vertex[slot, 0]
        colours[slot, current] = colour
        top[slot] = max(top[slot], colour)
        vertex[slot, 0] = current + 1
        if current + 1 == vertex_count[slot]:
            finished[slot] = True
        else:
            _legal_colours(slot, adjacency, colours, current + 1, top[slot], action_mask)


class GraphColoringBatch(GraphBatch):
    """B colourings built vertex by vertex from vertex 0."""

    episode = GraphColoringEpisode

    restart_kernel = staticmethod(_restart)
    step_kernel = staticmethod(_step)
    draw_kernel = staticmethod(_draw_into)

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        self.top = np.full(batch_size, -1, np.int64)
        """The largest colour used in each slot (-1 before the first)."""

    @classmethod
    def draw_parameters(cls, config: BaseModel) -> tuple[Any, ...] | None:
        assert isinstance(config, GraphColoringConfig)
        if plants_certificate(config):
            return None
        return (
            config.n_min,
            config.n_max,
            config.colours_min,
            config.colours_max,
            config.density,
        )

    def objectives(self) -> np.ndarray:
        return (self.top + 1).astype(np.float64)

    def solution(self, slot: int) -> list[int]:
        return self.buffers["colours"][slot, : self.buffers["vertex"][slot, 0]].tolist()
