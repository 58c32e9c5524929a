"""The HamiltonianCycle instance: a graph, plus what the generator planted in it."""

from __future__ import annotations

from itertools import pairwise
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field, StrictBool, model_validator

from npgym.graphs import GraphInstance
from npgym.heuristics.jit import njit
from npgym.instance import Int

Structure = Literal["hamiltonian", "cut_vertex", "independent_set", "separator"]


class HamiltonianCycleInstance(GraphInstance):
    """An undirected graph (``n``, ``edges``) in which to find a longest cycle.

    The generator also records how it built the graph; none of this is shown in the prompt.
    ``hamiltonian`` says whether a Hamiltonian cycle exists (None when unknown), ``structure``
    names the construction (``hamiltonian``: a planted Hamiltonian cycle; ``cut_vertex``: blocks
    joined at cut vertices; ``independent_set``: an independent set larger than n/2;
    ``separator``: hub vertices whose removal leaves components that a cycle must visit between
    hubs), ``planted_cycle`` is a longest cycle by construction, closed (``[v0, ..., v0]``), and
    ``separator`` (revision 2) lists the hubs: the certificate that no cycle is longer (see
    :func:`~npgym.heuristics.hamiltonian_cycle.separator_bound`).
    """

    task: Literal["HamiltonianCycle"] = "HamiltonianCycle"
    hamiltonian: StrictBool | None = None
    structure: Structure | None = None
    planted_cycle: tuple[Int, ...] | None = None
    separator: tuple[Int, ...] | None = Field(None, exclude_if=lambda value: value is None)
    """Left out of the JSON when absent, so instances without it keep their bytes."""

    meta_fields: ClassVar[tuple[str, ...]] = (
        "hamiltonian",
        "structure",
        "planted_cycle",
        "separator",
    )

    @model_validator(mode="after")
    def _has_a_cycle(self) -> HamiltonianCycleInstance:
        # Runs after GraphInstance._edges_in_range (pydantic runs a parent's validators first),
        # so every vertex is in 0..n-1 when the kernel indexes with it.
        if len(self.edges) + component_count(self.n, self.edge_array) <= self.n:
            raise ValueError("the graph has no cycle, so no answer could be feasible")
        return self

    @model_validator(mode="after")
    def _separator_is_a_vertex_set(self) -> HamiltonianCycleInstance:
        if self.separator is not None:
            self.check_vertex_set(self.separator, "separator")
        return self

    @model_validator(mode="after")
    def _planted_cycle_is_valid(self) -> HamiltonianCycleInstance:
        cycle = self.planted_cycle
        if cycle is None:
            return self
        inner = cycle[:-1]
        if len(cycle) < 4 or cycle[0] != cycle[-1] or len(set(inner)) != len(inner):
            raise ValueError("planted_cycle must be a closed list of 3 or more distinct vertices")
        missing = _first_missing_step(self, cycle)
        if missing >= 0:
            u, v = cycle[missing], cycle[missing + 1]
            raise ValueError(f"planted_cycle uses ({u}, {v}), which is not an edge")
        if self.hamiltonian is not None and self.hamiltonian != (len(inner) == self.n):
            raise ValueError(
                "hamiltonian must be true exactly when planted_cycle visits every vertex"
            )
        return self


def _first_missing_step(instance: HamiltonianCycleInstance, cycle: tuple[int, ...]) -> int:
    """Index of the first step ``cycle[i] -> cycle[i + 1]`` that is not an edge, or -1."""
    try:
        vertices = np.fromiter(cycle, dtype=np.int64, count=len(cycle))
    except OverflowError:  # beyond int64, so not a vertex: the exact path finds the step
        edges = set(instance.edges)
        for index, (u, v) in enumerate(pairwise(cycle)):
            if (min(u, v), max(u, v)) not in edges:
                return index
        return -1
    return first_missing_step(vertices, instance.edge_array)


@njit
def first_missing_step(vertices: np.ndarray, pairs: np.ndarray) -> int:
    """Index of the first step ``vertices[i] -> vertices[i + 1]`` that is not a row of the
    canonical (sorted, ``u < v``) edge rows ``pairs``, or -1; a binary search per step (numba)."""
    for index in range(vertices.shape[0] - 1):
        low = min(vertices[index], vertices[index + 1])
        high = max(vertices[index], vertices[index + 1])
        first, last = 0, pairs.shape[0]  # the first row not below (low, high) lies in here
        while first < last:
            middle = (first + last) // 2
            u, v = pairs[middle, 0], pairs[middle, 1]
            if u < low or (u == low and v < high):
                first = middle + 1
            else:
                last = middle
        if first == pairs.shape[0] or pairs[first, 0] != low or pairs[first, 1] != high:
            return index
    return -1


@njit
def component_count(n: int, pairs: np.ndarray) -> int:
    """Number of connected components of the graph on ``0..n-1`` with edge rows ``pairs``
    (union-find with path halving; numba). :func:`_component_count` is its twin."""
    root = np.arange(n)
    count = n
    for index in range(pairs.shape[0]):
        a, b = pairs[index, 0], pairs[index, 1]
        while root[a] != a:
            root[a] = root[root[a]]
            a = root[a]
        while root[b] != b:
            root[b] = root[root[b]]
            b = root[b]
        if a != b:
            root[a] = b
            count -= 1
    return count


def _component_count(n: int, edges: tuple[tuple[int, int], ...]) -> int:
    """Number of connected components (union-find; the pure-Python twin of the kernel)."""
    root = list(range(n))

    def find(vertex: int) -> int:
        while root[vertex] != vertex:
            root[vertex] = root[root[vertex]]
            vertex = root[vertex]
        return vertex

    count = n
    for u, v in edges:
        a, b = find(u), find(v)
        if a != b:
            root[a] = b
            count -= 1
    return count
