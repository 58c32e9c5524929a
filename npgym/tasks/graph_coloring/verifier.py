"""Graph colouring verifier: a numba kernel and its pure-Python twin, which agree on every input.

A colouring lists one integer colour per vertex, in vertex order; any integers are labels
(negative and huge ones too): only equality between them matters. Both checks return
``(code, a, b, c, colours_used)``; :func:`reason` turns a code and its details into text a person
can act on. The first violation in this order is reported: wrong number of entries, then the
first edge (in canonical order) whose ends share a colour.
"""

from __future__ import annotations

import numpy as np

from npgym.heuristics.jit import njit
from npgym.results import NOT_SCANNED
from npgym.scan import scan_flat

OK, WRONG_LENGTH, CONFLICT = range(3)


@njit
def check_coloring(
    n: int, edge_array: np.ndarray, colors: np.ndarray
) -> tuple[int, int, int, int, int]:
    """Check a colouring of a graph with ``n`` vertices and its ``(m, 2)`` ``edge_array``
    (numba)."""
    if colors.shape[0] != n:
        return WRONG_LENGTH, colors.shape[0], 0, 0, 0
    for edge in range(edge_array.shape[0]):
        u, v = edge_array[edge, 0], edge_array[edge, 1]
        if colors[u] == colors[v]:
            return CONFLICT, u, v, colors[u], 0
    if n == 0:
        return OK, 0, 0, 0, 0
    ordered = np.sort(colors)
    distinct = 1
    for position in range(1, n):
        if ordered[position] != ordered[position - 1]:
            distinct += 1
    return OK, 0, 0, 0, distinct


@njit
def scan_check_coloring(
    answer: bytes, n: int, edge_array: np.ndarray
) -> tuple[int, int, int, int, int]:
    """Read the answer text and check it in one call (``NOT_SCANNED`` first if not a list)."""
    scanned, colors = scan_flat(answer)
    if not scanned:
        return NOT_SCANNED, 0, 0, 0, 0
    return check_coloring(n, edge_array, colors)


def check_coloring_python(
    n: int, edges: list[tuple[int, int]], colors: list[int]
) -> tuple[int, int, int, int, int]:
    """Pure-Python twin of :func:`check_coloring`, on lists."""
    if len(colors) != n:
        return WRONG_LENGTH, len(colors), 0, 0, 0
    for u, v in edges:
        if colors[u] == colors[v]:
            return CONFLICT, u, v, colors[u], 0
    return OK, 0, 0, 0, len(set(colors))


def reason(code: int, a: int, b: int, c: int, n: int) -> str:
    """Explain a failed check (``a``, ``b``, ``c`` are the kernel's details)."""
    if code == WRONG_LENGTH:
        return f"colouring has {a} entries, expected {n} (one colour per vertex)"
    if code == CONFLICT:
        return f"vertices {a} and {b} are adjacent and both have colour {c}"
    return ""
