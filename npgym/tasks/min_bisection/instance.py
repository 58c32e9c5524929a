"""The MinBisection instance: an undirected graph with positive integer edge weights."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from npgym.graphs import canonical_edge_rows, rows_in_range
from npgym.instance import Instance, Int, derived, read_only

MAX_VERTICES = 1000
MAX_WEIGHT = 10**6


class MinBisectionInstance(Instance):
    """A graph on vertices ``0..n-1`` with ``edges`` given as ``(u, v, w)``, weight ``w >= 1``.

    Edges are stored canonically, like :class:`npgym.graphs.GraphInstance` stores unweighted
    ones: each with ``u < v``, sorted, no pair twice, so two equal graphs have equal JSON.
    """

    task: Literal["MinBisection"] = "MinBisection"
    n: Int = Field(ge=2, le=MAX_VERTICES)
    edges: tuple[tuple[Int, Int, Int], ...]

    canonical_fields: ClassVar[tuple[str, ...]] = ("n", "edges")

    @field_validator("edges", mode="after")
    @classmethod
    def _canonical_edges(
        cls, edges: tuple[tuple[int, int, int], ...]
    ) -> tuple[tuple[int, int, int], ...]:
        canonical = canonical_edge_rows(edges, 3, MAX_WEIGHT)
        return _canonical_edges_python(edges) if canonical is None else canonical  # type: ignore[return-value]

    @model_validator(mode="after")
    def _edges_in_range(self) -> MinBisectionInstance:
        rows = rows_in_range(self.edges, 3, self.n)
        if rows is not None:
            self.cached("edge_array", lambda: rows)
        return self

    @derived
    def edge_array(self) -> np.ndarray:
        """Edges as a read-only ``(m, 3)`` int64 array of ``u, v, w`` rows."""
        return read_only(np.array(self.edges, dtype=np.int64).reshape(-1, 3))

    @derived
    def weights(self) -> np.ndarray:
        """Read-only symmetric ``n x n`` int64 weight matrix, 0 where there is no edge."""
        matrix = np.zeros((self.n, self.n), dtype=np.int64)
        rows = self.edge_array
        matrix[rows[:, 0], rows[:, 1]] = rows[:, 2]
        matrix[rows[:, 1], rows[:, 0]] = rows[:, 2]
        return read_only(matrix)

    def neighbours(self) -> list[list[tuple[int, int]]]:
        """Sorted ``(neighbour, weight)`` list of every vertex."""
        lists: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]
        for u, v, w in self.edges:
            lists[u].append((v, w))
            lists[v].append((u, w))
        return [sorted(items) for items in lists]


def _canonical_edges_python(
    edges: tuple[tuple[int, int, int], ...],
) -> tuple[tuple[int, int, int], ...]:
    """The validator's exact path, for integers beyond int64 (and the twin its test compares)."""
    ordered = sorted((min(u, v), max(u, v), w) for u, v, w in edges)
    for index, (u, v, w) in enumerate(ordered):
        if u == v:
            raise ValueError(f"edge ({u}, {v}) is a self-loop")
        if index and ordered[index - 1][:2] == (u, v):
            raise ValueError(f"edge ({u}, {v}) appears twice")
        if not 1 <= w <= MAX_WEIGHT:
            raise ValueError(f"edge ({u}, {v}) has weight {w}; weights must lie in 1..{MAX_WEIGHT}")
    return tuple(ordered)
