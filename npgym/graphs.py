"""Undirected simple graphs shared by the graph tasks: instance base, generator and prompt parts.

Edges are stored canonically: each as ``(u, v)`` with ``u < v``, sorted, no duplicates, so two
equal graphs have equal JSON.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field, field_validator, model_validator

from npgym.instance import Instance, Int

MAX_VERTICES = 5000


class GraphInstance(Instance):
    """A graph with vertices ``0..n-1`` and undirected ``edges``."""

    n: Int = Field(ge=1, le=MAX_VERTICES)
    edges: tuple[tuple[Int, Int], ...]

    canonical_fields: ClassVar[tuple[str, ...]] = ("n", "edges")

    @field_validator("edges", mode="after")
    @classmethod
    def _canonical_edges(cls, edges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        ordered = sorted((min(u, v), max(u, v)) for u, v in edges)
        for index, (u, v) in enumerate(ordered):
            if u == v:
                raise ValueError(f"edge ({u}, {v}) is a self-loop")
            if index and ordered[index - 1] == (u, v):
                raise ValueError(f"edge ({u}, {v}) appears twice")
        return tuple(ordered)

    @model_validator(mode="after")
    def _edges_in_range(self) -> GraphInstance:
        for u, v in self.edges:
            if u < 0 or v >= self.n:
                raise ValueError(f"edge ({u}, {v}) has a vertex outside 0..{self.n - 1}")
        return self

    @property
    def adjacency(self) -> np.ndarray:
        """Read-only boolean adjacency matrix (built once per instance)."""

        def build() -> np.ndarray:
            matrix = np.zeros((self.n, self.n), dtype=np.bool_)
            if self.edges:
                pairs = np.array(self.edges, dtype=np.int64)
                matrix[pairs[:, 0], pairs[:, 1]] = True
                matrix[pairs[:, 1], pairs[:, 0]] = True
            matrix.setflags(write=False)
            return matrix

        return self.cached("adjacency", build)

    @property
    def edge_array(self) -> np.ndarray:
        """Edges as a read-only ``(m, 2)`` int64 array."""

        def build() -> np.ndarray:
            pairs = np.array(self.edges, dtype=np.int64).reshape(-1, 2)
            pairs.setflags(write=False)
            return pairs

        return self.cached("edge_array", build)

    def neighbours(self) -> list[list[int]]:
        """Sorted neighbour list of every vertex."""
        lists: list[list[int]] = [[] for _ in range(self.n)]
        for u, v in self.edges:
            lists[u].append(v)
            lists[v].append(u)
        return [sorted(items) for items in lists]


def random_edges(rng: np.random.Generator, n: int, density: float) -> list[tuple[int, int]]:
    """G(n, p): each pair ``u < v`` (in lexicographic order) is an edge with probability p."""
    first, second = np.triu_indices(n, 1)
    chosen = rng.random(first.size) < density
    return list(zip(first[chosen].tolist(), second[chosen].tolist(), strict=True))


def adjacency_lines(neighbours: list[list[int]]) -> list[str]:
    """Prompt lines ``"v: a, b, c"`` (``"v: none"`` for an isolated vertex)."""
    return [
        f"{vertex}: {', '.join(map(str, items)) if items else 'none'}"
        for vertex, items in enumerate(neighbours)
    ]
