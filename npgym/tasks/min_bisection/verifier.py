"""MinBisection verifier: a numba kernel and its pure-Python twin, which must agree on every input.

An answer is two lists of vertices, part A and part B. It is feasible when every vertex lies in
exactly one part and the parts' sizes differ by at most one. Both checks return
``(code, a, b, cut)``; :func:`reason` turns a code and its details into text a person can act on.
The first violation in this order is reported: a vertex that does not exist, a vertex listed
twice (within a part, or in both), a vertex in neither part, unbalanced sizes.
"""

from __future__ import annotations

import numpy as np

from npgym.heuristics.jit import njit
from npgym.kernels import (
    ID_OUT_OF_RANGE,
    ID_REPEATED,
    check_ids,
    check_ids_python,
    ids_reason,
)
from npgym.results import NOT_SCANNED
from npgym.scan import scan_rows

OK, OUT_OF_RANGE, REPEATED, IN_BOTH, MISSING, UNBALANCED = range(6)
PART_NAMES = ("A", "B")


@njit
def split_problem(n: int, members: np.ndarray, size_a: int) -> tuple[int, int, int]:
    """The first violation of the two parts laid end to end in ``members`` (part A's first
    ``size_a``) as ``(code, a, b)``, or ``OK``: a vertex outside ``0..n-1``, one listed twice (in
    a part, or in both), one in neither part, unbalanced sizes."""
    size_b = members.shape[0] - size_a
    code, value, position = check_ids(members, n)
    if code == ID_OUT_OF_RANGE:
        return OUT_OF_RANGE, value, 0 if position < size_a else 1
    if code == ID_REPEATED:
        if position < size_a:
            return REPEATED, value, 0
        for vertex in members[:size_a]:
            if vertex == value:
                return IN_BOTH, value, 0
        return REPEATED, value, 1
    if members.shape[0] < n:  # distinct and in range: some vertex is missing
        listed = np.zeros(n, np.bool_)
        listed[members] = True
        for vertex in range(n):
            if not listed[vertex]:
                return MISSING, vertex, 0
    if abs(size_a - size_b) > 1:
        return UNBALANCED, size_a, size_b
    return OK, 0, 0


@njit
def check_bisection(
    n: int, edge_array: np.ndarray, part_a: np.ndarray, part_b: np.ndarray
) -> tuple[int, int, int, int]:
    """Check two parts against an ``n``-vertex graph with ``(u, v, w)`` edge rows (numba)."""
    members = np.concatenate((part_a, part_b))
    code, a, b = split_problem(n, members, part_a.shape[0])
    if code != OK:
        return code, a, b, 0
    side = np.zeros(n, np.int64)
    side[part_b] = 1
    cut = 0
    for row in range(edge_array.shape[0]):
        if side[edge_array[row, 0]] != side[edge_array[row, 1]]:
            cut += edge_array[row, 2]
    return OK, 0, 0, cut


@njit
def scan_check_bisection(answer: bytes, weights: np.ndarray) -> tuple[int, int, int, int]:
    """Read the answer text and check it in one call (``NOT_SCANNED`` first unless it is a list
    of two integer lists), against the ``n x n`` weight matrix: the cut sums part A's rows,
    each masked by part B's columns (an AND with all ones or zero: contiguous, so it runs in
    SIMD lanes, where gathering B's columns did not)."""
    scanned, values, offsets = scan_rows(answer)
    if not scanned or offsets.shape[0] != 3:
        return NOT_SCANNED, 0, 0, 0
    members = values[offsets[0] : offsets[2]]
    size_a = offsets[1] - offsets[0]
    n = weights.shape[0]
    code, a, b = split_problem(n, members, size_a)
    if code != OK:
        return code, a, b, 0
    in_b = np.zeros(n, np.int64)
    for v in members[size_a:]:
        in_b[v] = -1
    cut = 0
    for u in members[:size_a]:
        row = weights[u]
        for v in range(n):
            cut += row[v] & in_b[v]
    return OK, 0, 0, cut


def check_bisection_python(
    n: int, edges: list[list[int]], part_a: list[int], part_b: list[int]
) -> tuple[int, int, int, int]:
    """Pure-Python twin of :func:`check_bisection`, on lists."""
    code, value, position = check_ids_python([*part_a, *part_b], n)
    if code == ID_OUT_OF_RANGE:
        return OUT_OF_RANGE, value, 0 if position < len(part_a) else 1, 0
    if code == ID_REPEATED:
        if position < len(part_a):
            return REPEATED, value, 0, 0
        return (IN_BOTH, value, 0, 0) if value in part_a else (REPEATED, value, 1, 0)
    side = [-1] * n
    for part, members in enumerate((part_a, part_b)):
        for vertex in members:
            side[vertex] = part
    if -1 in side:
        return MISSING, side.index(-1), 0, 0
    if abs(len(part_a) - len(part_b)) > 1:
        return UNBALANCED, len(part_a), len(part_b), 0
    return OK, 0, 0, sum(w for u, v, w in edges if side[u] != side[v])


def reason(code: int, a: int, b: int, n: int) -> str:
    """Explain a failed check (``a`` and ``b`` are the kernel's details)."""
    if code == OUT_OF_RANGE:
        return ids_reason(ID_OUT_OF_RANGE, a, n, "vertex")
    if code == REPEATED:
        return f"vertex {a} listed twice in part {PART_NAMES[b]}"
    if code == IN_BOTH:
        return f"vertex {a} is in both parts"
    if code == MISSING:
        return f"vertex {a} is in neither part"
    if code == UNBALANCED:
        return f"the parts have {a} and {b} vertices; their sizes must differ by at most one"
    return ""
