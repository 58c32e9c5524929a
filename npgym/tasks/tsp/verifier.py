"""TSP verifier: a numba kernel and its pure-Python twin, which must agree on every input.

A tour is a list of n + 1 cities that starts and ends at the same city and visits every city
exactly once in between. Both checks return ``(code, a, b, length)``; :func:`reason` turns a
code and its details into text a person can act on. The first violation in this order is
reported: too short, unknown city, not closed, city repeated, city missing.
"""

from __future__ import annotations

import itertools

import numpy as np

from npgym.heuristics.jit import njit
from npgym.results import NOT_SCANNED
from npgym.scan import scan_flat

OK, TOO_SHORT, OUT_OF_RANGE, NOT_CLOSED, REPEATED, MISSING = range(6)


@njit
def check_tour(matrix: np.ndarray, tour: np.ndarray) -> tuple[int, int, int, int]:
    """Check a closed tour against an n x n distance matrix (numba)."""
    n = matrix.shape[0]
    m = tour.shape[0]
    if m < 2:
        return TOO_SHORT, m, 0, 0
    for position in range(m):
        city = tour[position]
        if city < 0 or city >= n:
            return OUT_OF_RANGE, city, position, 0
    if tour[0] != tour[m - 1]:
        return NOT_CLOSED, tour[0], tour[m - 1], 0
    seen = np.zeros(n, np.bool_)
    for position in range(m - 1):
        city = tour[position]
        if seen[city]:
            return REPEATED, city, position, 0
        seen[city] = True
    for city in range(n):
        if not seen[city]:
            return MISSING, city, 0, 0
    length = 0
    for position in range(m - 1):
        length += matrix[tour[position], tour[position + 1]]
    return OK, 0, 0, length


@njit
def scan_check_tour(answer: bytes, matrix: np.ndarray) -> tuple[int, int, int, int]:
    """Read the answer text and check it in one call (``NOT_SCANNED`` first if not a list)."""
    scanned, tour = scan_flat(answer)
    if not scanned:
        return NOT_SCANNED, 0, 0, 0
    return check_tour(matrix, tour)


def check_tour_python(dist: list[list[int]], tour: list[int]) -> tuple[int, int, int, int]:
    """Pure-Python twin of :func:`check_tour`, on lists."""
    n, m = len(dist), len(tour)
    if m < 2:
        return TOO_SHORT, m, 0, 0
    for position, city in enumerate(tour):
        if not 0 <= city < n:
            return OUT_OF_RANGE, city, position, 0
    if tour[0] != tour[-1]:
        return NOT_CLOSED, tour[0], tour[-1], 0
    seen = [False] * n
    for position, city in enumerate(tour[:-1]):
        if seen[city]:
            return REPEATED, city, position, 0
        seen[city] = True
    for city in range(n):
        if not seen[city]:
            return MISSING, city, 0, 0
    return OK, 0, 0, sum(dist[a][b] for a, b in itertools.pairwise(tour))


def reason(code: int, a: int, b: int, n: int) -> str:
    """Explain a failed check (``a`` and ``b`` are the kernel's details)."""
    if code == TOO_SHORT:
        return f"tour has {a} entries; it must list all {n} cities and return to the first"
    if code == OUT_OF_RANGE:
        return f"city {a} does not exist (cities are 0 to {n - 1})"
    if code == NOT_CLOSED:
        return f"tour does not return to {a} (it ends at {b})"
    if code == REPEATED:
        return f"city {a} visited twice"
    if code == MISSING:
        return f"city {a} missing"
    return ""
