"""HamiltonianCycle verifier: a numba kernel and its pure-Python twin, which agree on every input.

An answer is a closed cycle ``[v0, v1, ..., vk-1, v0]``: the start repeated at the end, no other
vertex repeated, at least 3 distinct vertices, consecutive vertices adjacent. Its objective is
the number of distinct vertices, k. Both checks return ``(code, a, b, objective)``; :func:`reason`
turns a code and its details into text a person can act on. The first violation in this order is
reported: unknown vertex, empty, not closed, vertex repeated, fewer than 3 vertices, non-edge.
"""

from __future__ import annotations

import itertools

import numpy as np

from npgym.heuristics.jit import njit
from npgym.results import NOT_SCANNED
from npgym.scan import scan_flat

OK, OUT_OF_RANGE, TOO_SHORT, NOT_CLOSED, REPEATED, NOT_ADJACENT = range(6)
MIN_CYCLE = 3


@njit
def check_cycle(adjacency: np.ndarray, cycle: np.ndarray) -> tuple[int, int, int, int]:
    """Check a closed cycle against an n x n boolean adjacency matrix (numba)."""
    n = adjacency.shape[0]
    m = cycle.shape[0]
    for position in range(m):
        vertex = cycle[position]
        if vertex < 0 or vertex >= n:
            return OUT_OF_RANGE, vertex, position, 0
    if m == 0:
        return TOO_SHORT, 0, 0, 0
    if cycle[0] != cycle[m - 1]:
        return NOT_CLOSED, cycle[0], cycle[m - 1], 0
    seen = np.zeros(n, np.bool_)
    for position in range(m - 1):
        vertex = cycle[position]
        if seen[vertex]:
            return REPEATED, vertex, position, 0
        seen[vertex] = True
    if m - 1 < MIN_CYCLE:
        return TOO_SHORT, m - 1, 0, 0
    for position in range(m - 1):
        if not adjacency[cycle[position], cycle[position + 1]]:
            return NOT_ADJACENT, cycle[position], cycle[position + 1], 0
    return OK, 0, 0, m - 1


@njit
def scan_check_cycle(answer: bytes, adjacency: np.ndarray) -> tuple[int, int, int, int]:
    """Read the answer text and check it in one call (``NOT_SCANNED`` first if not a list)."""
    scanned, cycle = scan_flat(answer)
    if not scanned:
        return NOT_SCANNED, 0, 0, 0
    return check_cycle(adjacency, cycle)


def check_cycle_python(adjacency: list[list[bool]], cycle: list[int]) -> tuple[int, int, int, int]:
    """Pure-Python twin of :func:`check_cycle`, on lists."""
    n, m = len(adjacency), len(cycle)
    for position, vertex in enumerate(cycle):
        if not 0 <= vertex < n:
            return OUT_OF_RANGE, vertex, position, 0
    if m == 0:
        return TOO_SHORT, 0, 0, 0
    if cycle[0] != cycle[-1]:
        return NOT_CLOSED, cycle[0], cycle[-1], 0
    seen: set[int] = set()
    for position, vertex in enumerate(cycle[:-1]):
        if vertex in seen:
            return REPEATED, vertex, position, 0
        seen.add(vertex)
    if m - 1 < MIN_CYCLE:
        return TOO_SHORT, m - 1, 0, 0
    for u, v in itertools.pairwise(cycle):
        if not adjacency[u][v]:
            return NOT_ADJACENT, u, v, 0
    return OK, 0, 0, m - 1


def reason(code: int, a: int, b: int, n: int) -> str:
    """Explain a failed check (``a`` and ``b`` are the kernel's details)."""
    if code == OUT_OF_RANGE:
        return f"vertex {a} does not exist (vertices are 0 to {n - 1})"
    if code == TOO_SHORT:
        return f"a cycle needs at least {MIN_CYCLE} distinct vertices"
    if code == NOT_CLOSED:
        return f"cycle does not return to {a} (it ends at {b})"
    if code == REPEATED:
        return f"vertex {a} visited twice"
    if code == NOT_ADJACENT:
        return f"vertices {a} and {b} are not adjacent"
    return ""
