"""The HamiltonianCycle instance: a graph, plus what the generator planted in it."""

from __future__ import annotations

from itertools import pairwise
from typing import ClassVar, Literal

from pydantic import StrictBool, model_validator

from npgym.graphs import GraphInstance
from npgym.instance import Int

Structure = Literal["hamiltonian", "cut_vertex", "independent_set"]


class HamiltonianCycleInstance(GraphInstance):
    """An undirected graph (``n``, ``edges``) in which to find a longest cycle.

    The generator also records how it built the graph; none of this is shown in the prompt.
    ``hamiltonian`` says whether a Hamiltonian cycle exists (None when unknown), ``structure``
    names the construction (``hamiltonian``: a planted Hamiltonian cycle; ``cut_vertex``: blocks
    joined at cut vertices; ``independent_set``: an independent set larger than n/2), and
    ``planted_cycle`` is a longest cycle by construction, closed (``[v0, ..., v0]``).
    """

    task: Literal["HamiltonianCycle"] = "HamiltonianCycle"
    hamiltonian: StrictBool | None = None
    structure: Structure | None = None
    planted_cycle: tuple[Int, ...] | None = None

    meta_fields: ClassVar[tuple[str, ...]] = ("hamiltonian", "structure", "planted_cycle")

    @model_validator(mode="after")
    def _has_a_cycle(self) -> HamiltonianCycleInstance:
        if len(self.edges) + _component_count(self.n, self.edges) <= self.n:
            raise ValueError("the graph has no cycle, so no answer could be feasible")
        return self

    @model_validator(mode="after")
    def _planted_cycle_is_valid(self) -> HamiltonianCycleInstance:
        cycle = self.planted_cycle
        if cycle is None:
            return self
        inner = cycle[:-1]
        if len(cycle) < 4 or cycle[0] != cycle[-1] or len(set(inner)) != len(inner):
            raise ValueError("planted_cycle must be a closed list of 3 or more distinct vertices")
        edges = set(self.edges)
        for u, v in pairwise(cycle):
            if (min(u, v), max(u, v)) not in edges:
                raise ValueError(f"planted_cycle uses ({u}, {v}), which is not an edge")
        if self.hamiltonian is not None and self.hamiltonian != (len(inner) == self.n):
            raise ValueError(
                "hamiltonian must be true exactly when planted_cycle visits every vertex"
            )
        return self


def _component_count(n: int, edges: tuple[tuple[int, int], ...]) -> int:
    """Number of connected components (union-find)."""
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
