"""Undirected simple graphs shared by the graph tasks: instance base, generator and prompt parts.

Edges are stored canonically: each as ``(u, v)`` with ``u < v``, sorted, no duplicates, so two
equal graphs have equal JSON.
"""

from __future__ import annotations

import threading
from itertools import chain
from typing import ClassVar

import numpy as np
from pydantic import Field, field_validator, model_validator

from npgym.heuristics.jit import njit
from npgym.instance import Instance, Int, derived, read_only

MAX_VERTICES = 5000


class GraphInstance(Instance):
    """A graph with vertices ``0..n-1`` and undirected ``edges``."""

    n: Int = Field(ge=1, le=MAX_VERTICES)
    edges: tuple[tuple[Int, Int], ...]

    canonical_fields: ClassVar[tuple[str, ...]] = ("n", "edges")

    @field_validator("edges", mode="after")
    @classmethod
    def _canonical_edges(cls, edges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        canonical = canonical_edge_rows(edges, 2)
        if canonical is None:
            return _canonical_edges_python(edges)
        return canonical  # type: ignore[return-value]  # rows of two ints, checked there

    @model_validator(mode="after")
    def _edges_in_range(self) -> GraphInstance:
        pairs = rows_in_range(self.edges, 2, self.n)
        if pairs is not None:
            self.cached("edge_array", lambda: pairs)
        return self

    @derived
    def adjacency(self) -> np.ndarray:
        """Read-only boolean adjacency matrix (built once per instance)."""
        matrix = np.zeros((self.n, self.n), dtype=np.bool_)
        if self.edges:
            pairs = self.edge_array
            matrix[pairs[:, 0], pairs[:, 1]] = True
            matrix[pairs[:, 1], pairs[:, 0]] = True
        return read_only(matrix)

    @derived
    def edge_array(self) -> np.ndarray:
        """Edges as a read-only ``(m, 2)`` int64 array."""
        return read_only(np.array(self.edges, dtype=np.int64).reshape(-1, 2))

    def check_vertex_set(self, vertices: tuple[int, ...], name: str) -> None:
        """Raise unless ``vertices`` (the field ``name``, a planted set) are distinct vertices of
        this graph."""
        if len(set(vertices)) != len(vertices) or not all(0 <= v < self.n for v in vertices):
            raise ValueError(f"{name} must list distinct vertices in 0..{self.n - 1}")

    def neighbours(self) -> list[list[int]]:
        """Sorted neighbour list of every vertex."""
        lists: list[list[int]] = [[] for _ in range(self.n)]
        for u, v in self.edges:
            lists[u].append(v)
            lists[v].append(u)
        return [sorted(items) for items in lists]


def int64_rows(rows: tuple[tuple[int, ...], ...], width: int) -> np.ndarray | None:
    """``rows`` (tuples of ``width`` ints) as an ``(len, width)`` int64 array, read in one pass;
    None when an integer does not fit in int64 (then the caller's exact Python path decides)."""
    try:
        flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=width * len(rows))
    except OverflowError:
        return None
    return flat.reshape(-1, width)


_last_rows = threading.local()
"""The array of the edges the field validator just made canonical, for the model validator."""


def canonical_edge_rows(
    edges: tuple[tuple[int, ...], ...], width: int, max_weight: int = 0
) -> tuple[tuple[int, ...], ...] | None:
    """Edges ``(u, v)`` or ``(u, v, w)`` in canonical form: ``u < v``, sorted, no pair twice.

    Raises the error a left-to-right check of the sorted list meets first: a self-loop, a
    repeated pair, or (with ``max_weight``) a weight outside ``1..max_weight``. Returns None when
    an integer does not fit in int64, for the caller's exact Python path. Input that is already
    canonical (every instance read back from JSON) comes back as the same tuple.
    """
    rows = int64_rows(edges, width)
    if rows is None:
        return None
    already = _is_canonical(rows)  # one kernel call for the usual case (sorted, u < v, no repeat)
    if already:
        low = high = rows[:0, 0]
        problem = -1
    else:
        first, second = rows[:, 0], rows[:, 1]
        low, high = np.minimum(first, second), np.maximum(first, second)
        order = np.lexsort((rows[:, 2], high, low) if width == 3 else (high, low))
        low, high = low[order], high[order]
        rows = np.column_stack((low, high, rows[order, 2]) if width == 3 else (low, high))
        problem = first_problem(low, high)
    if max_weight:
        heavy = _first_weight_outside(rows, max_weight)
        if heavy >= 0 and (problem < 0 or heavy < problem):
            u, v, w = rows[heavy].tolist()
            raise ValueError(f"edge ({u}, {v}) has weight {w}; weights must lie in 1..{max_weight}")
    if problem >= 0:
        u, v = int(low[problem]), int(high[problem])
        raise ValueError(
            f"edge ({u}, {v}) is a self-loop" if u == v else f"edge ({u}, {v}) appears twice"
        )
    canonical = edges if already else tuple(map(tuple, rows.tolist()))
    rows.setflags(write=False)
    _last_rows.value = (canonical, rows)
    return canonical


def rows_in_range(edges: tuple[tuple[int, ...], ...], width: int, n: int) -> np.ndarray | None:
    """The read-only array of canonical edge rows (``u < v`` first), checked to name only
    vertices in ``0..n-1``: a ValueError names the first edge outside. None (after the same check
    on the Python ints) when an integer does not fit in int64."""
    rows = validated_rows(edges, width)
    if rows is None:
        _edges_in_range_python(edges, n)
        return None
    outside = first_outside(rows, n)
    if outside >= 0:
        u, v = rows[outside, :2].tolist()
        raise ValueError(f"edge ({u}, {v}) has a vertex outside 0..{n - 1}")
    return rows


def validated_rows(edges: tuple[tuple[int, ...], ...], width: int) -> np.ndarray | None:
    """The read-only array of ``edges`` that :func:`canonical_edge_rows` just made, or a fresh
    one (None when an integer does not fit in int64)."""
    last = getattr(_last_rows, "value", None)
    if last is not None and last[0] is edges:
        return last[1]
    rows = int64_rows(edges, width)
    if rows is not None:
        rows.setflags(write=False)
    return rows


@njit
def _is_canonical(rows: np.ndarray) -> bool:
    """Whether every edge row has ``u < v`` and the ``(u, v)`` pairs strictly increase."""
    for index in range(rows.shape[0]):
        u, v = rows[index, 0], rows[index, 1]
        if u >= v:
            return False
        if index:
            before_u, before_v = rows[index - 1, 0], rows[index - 1, 1]
            if u < before_u or (u == before_u and v <= before_v):
                return False
    return True


@njit
def _first_weight_outside(rows: np.ndarray, max_weight: int) -> int:
    """Index of the first row whose weight (column 2) lies outside ``1..max_weight``, or -1."""
    for index in range(rows.shape[0]):
        if rows[index, 2] < 1 or rows[index, 2] > max_weight:
            return index
    return -1


@njit
def first_outside(rows: np.ndarray, n: int) -> int:
    """Index of the first edge row with a vertex outside ``0..n-1`` (``u < v`` rows), or -1."""
    for index in range(rows.shape[0]):
        if rows[index, 0] < 0 or rows[index, 1] >= n:
            return index
    return -1


def first_problem(low: np.ndarray, high: np.ndarray) -> int:
    """Index of the first sorted edge ``(low, high)`` that is a self-loop or repeats the one
    before it, or -1: the edge a left-to-right check of the sorted list would report."""
    problem = low == high
    problem[1:] |= (low[1:] == low[:-1]) & (high[1:] == high[:-1])
    index = int(np.argmax(problem)) if problem.size else 0
    return index if problem.size and problem[index] else -1


def _canonical_edges_python(edges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The validator's exact path, for integers beyond int64 (and the twin its test compares)."""
    ordered = sorted((min(u, v), max(u, v)) for u, v in edges)
    for index, (u, v) in enumerate(ordered):
        if u == v:
            raise ValueError(f"edge ({u}, {v}) is a self-loop")
        if index and ordered[index - 1] == (u, v):
            raise ValueError(f"edge ({u}, {v}) appears twice")
    return tuple(ordered)


def _edges_in_range_python(edges: tuple[tuple[int, ...], ...], n: int) -> None:
    for u, v, *_ in edges:
        if u < 0 or v >= n:
            raise ValueError(f"edge ({u}, {v}) has a vertex outside 0..{n - 1}")


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
