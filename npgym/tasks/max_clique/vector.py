"""MaxClique's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.max_clique.structured.MaxCliqueEpisode` with the batch first, stepped in one
numba call. :class:`VertexSetBatch` serves MaxIndependentSet too, through :meth:`compatible`.

With the objective reward, a batch of instances is drawn in one numba call that reproduces
:func:`~npgym.tasks.max_clique.generator.build`'s numpy draws (:mod:`npgym.streams`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.graphs import GraphInstance
from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.streams import choice_without_replacement, integer, permutation, uniform
from npgym.task import Task
from npgym.tasks.max_clique.generator import MaxCliqueConfig, member_link_probability
from npgym.tasks.max_clique.structured import MaxCliqueEpisode
from npgym.vector import GraphBatch, mark_real, seeded_slot, set_symmetric

_link_probability = njit(member_link_probability)
"""The generator's own formula, compiled: the same operations give the same float."""


@njit
def planted_graph_into(
    state: np.ndarray,
    n_min: int,
    n_max: int,
    size_min: int,
    size_max: int,
    density: float,
    planted_edges: bool,
    graph: np.ndarray,
) -> int:
    """:func:`~npgym.tasks.max_clique.generator.planted_graph` into ``graph`` (all zero, at
    least n x n): ``n``, the planted set (numpy's ``choice``), then one uniform per pair ``u < v``
    in lexicographic order, the planted set's pairs forced in (``planted_edges``) or out. Returns
    ``n``. Shared with MaxIndependentSet."""
    n = integer(state, n_min, n_max + 1)
    size = integer(state, min(size_min, n), min(size_max, n) + 1)
    inside = np.zeros(n, np.bool_)
    for vertex in choice_without_replacement(state, n, size):
        inside[vertex] = True
    for u in range(n):
        for v in range(u + 1, n):
            drawn = uniform(state) < density
            edge = planted_edges if inside[u] and inside[v] else drawn
            set_symmetric(graph, u, v, edge)
    return n


@njit
def _revision_2_into(
    state: np.ndarray,
    n_min: int,
    n_max: int,
    clique_min: int,
    clique_max: int,
    density: float,
    camouflage: float,
    decoy_scale: float,
    graph: np.ndarray,
) -> int:
    """The generator's ``_build_revision_2`` into ``graph`` (all zero, at least n x n): ``n``,
    the clique size, a permutation (members first), an n x n matrix of uniforms of which the
    pairs ``u < v`` are kept, then the clique and the decoy's multipartite pairs. Returns ``n``."""
    n = integer(state, n_min, n_max + 1)
    size = integer(state, min(clique_min, n), min(clique_max, n) + 1)
    order = permutation(state, n)
    member = np.zeros(n, np.bool_)
    for position in range(size):
        member[order[position]] = True
    link = _link_probability(n, size, density, camouflage)
    for u in range(n):
        for v in range(n):
            draw = uniform(state)
            if v <= u:
                continue
            chance = link if member[u] != member[v] else density
            edge = (member[u] and member[v]) or draw < chance
            set_symmetric(graph, u, v, edge)
    if size >= 3:
        decoy = min(math.floor(decoy_scale * (size - 1) + 0.5), n - size)
        for i in range(decoy):
            for j in range(decoy):
                if i != j:
                    graph[order[size + i], order[size + j]] = i % (size - 1) != j % (size - 1)
    return n


@njit
def store_pairs(
    slot: int,
    n: int,
    adjacency: np.ndarray,
    compatible: np.ndarray,
    vertex_count: np.ndarray,
    complement: bool,
) -> None:
    """``compatible[slot]`` from the slot's drawn graph of ``n`` vertices: its adjacency, or
    (``complement``) the complement graph's, no vertex paired with itself; and its vertex
    count."""
    compatible[slot] = False
    for u in range(n):
        for v in range(n):
            edge = adjacency[slot, u, v] != 0
            compatible[slot, u, v] = (not edge and u != v) if complement else edge
    vertex_count[slot] = n


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    revision: int,
    n_min: int,
    n_max: int,
    clique_min: int,
    clique_max: int,
    density: float,
    camouflage: float,
    decoy_scale: float,
    adjacency: np.ndarray,
    compatible_pairs: np.ndarray,
    vertex_count: np.ndarray,
) -> None:
    """Each slot's graph as :func:`~npgym.tasks.max_clique.generator.build` draws it (by
    ``revision``) from ``task.generate``'s stream for its seed, numpy's draws reproduced by
    :mod:`npgym.streams`."""
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        adjacency[slot] = 0
        if revision == 1:
            n = planted_graph_into(
                state, n_min, n_max, clique_min, clique_max, density, True, adjacency[slot]
            )
        else:
            n = _revision_2_into(
                state,
                n_min,
                n_max,
                clique_min,
                clique_max,
                density,
                camouflage,
                decoy_scale,
                adjacency[slot],
            )
        store_pairs(slot, n, adjacency, compatible_pairs, vertex_count, False)


@njit
def _restart(
    slots: np.ndarray,
    vertex_count: np.ndarray,
    vertex_mask: np.ndarray,
    selected: np.ndarray,
    action_mask: np.ndarray,
    chosen: np.ndarray,
) -> None:
    """Empty sets in ``slots``: every real vertex a candidate, stopping not yet legal."""
    size = vertex_mask.shape[1]
    for slot in slots:
        mark_real(vertex_mask[slot], vertex_count[slot])
        selected[slot, :] = 0
        action_mask[slot, :size] = vertex_mask[slot]
        action_mask[slot, size] = 0
        chosen[slot] = 0


@njit
def _step(
    slots: np.ndarray,
    actions: np.ndarray,
    vertex_count: np.ndarray,
    compatible_pairs: np.ndarray,
    selected: np.ndarray,
    action_mask: np.ndarray,
    chosen: np.ndarray,
    finished: np.ndarray,
) -> None:
    """Add the vertex of each slot in ``slots`` (or stop); the candidates left are the vertices
    compatible with every selected one. Flags finished sets."""
    size = selected.shape[1]
    for slot in slots:
        action = actions[slot]
        if action == size:
            finished[slot] = True
            continue
        selected[slot, action] = 1
        chosen[slot] += 1
        left = False
        for vertex in range(vertex_count[slot]):
            keep = action_mask[slot, vertex] == 1 and compatible_pairs[slot, action, vertex]
            keep = keep and vertex != action
            action_mask[slot, vertex] = keep
            left = left or keep
        if left:
            action_mask[slot, size] = 1
        else:
            finished[slot] = True


class VertexSetBatch(GraphBatch):
    """B vertex sets grown one pairwise-compatible vertex at a time, or stopped."""

    @classmethod
    def compatible(cls, adjacency: np.ndarray) -> np.ndarray:
        """``[u, v]`` True when u and v may both be in the set, from the graph's adjacency."""
        return adjacency

    restart_kernel = staticmethod(_restart)
    step_kernel = staticmethod(_step)

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        size = limits["n"]
        self.compatible_pairs = np.zeros((batch_size, size, size), np.bool_)
        self.chosen = np.zeros(batch_size, np.int64)

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, GraphInstance)
        return cls.graph_arrays(instance.adjacency)

    @classmethod
    def draw(cls, task: Task[Any, Any], rng: np.random.Generator, config: BaseModel) -> Any:
        """The generator's graph as arrays, without building (and validating) its instance."""
        fields = task.build(rng, config)
        n = int(fields["n"])
        pairs = np.asarray(fields["edges"], np.int64).reshape(-1, 2)
        adjacency = np.zeros((n, n), np.bool_)
        adjacency[pairs[:, 0], pairs[:, 1]] = True
        adjacency[pairs[:, 1], pairs[:, 0]] = True
        return cls.graph_arrays(adjacency)

    @classmethod
    def graph_arrays(cls, adjacency: np.ndarray) -> dict[str, Any]:
        """What :meth:`load` puts in a slot for a graph: its adjacency, its compatible pairs
        and its size."""
        return {
            "adjacency": adjacency,
            "compatible_pairs": cls.compatible(adjacency),
            "vertex_count": adjacency.shape[0],
        }

    def objectives(self) -> np.ndarray:
        return self.chosen.astype(np.float64)

    def solution(self, slot: int) -> list[int]:
        return np.flatnonzero(self.buffers["selected"][slot]).tolist()


class MaxCliqueBatch(VertexSetBatch):
    """Cliques: every added vertex adjacent to all selected ones."""

    episode = MaxCliqueEpisode

    draw_kernel = staticmethod(_draw_into)

    @classmethod
    def draw_parameters(cls, config: BaseModel) -> tuple[Any, ...] | None:
        assert isinstance(config, MaxCliqueConfig)
        return (
            config.revision,
            config.n_min,
            config.n_max,
            config.clique_min,
            config.clique_max,
            config.density,
            config.camouflage or 0.0,
            config.decoy_scale or 0.0,
        )
