"""Vertex-set verifier for MaxClique (and MaxIndependentSet): a numba kernel and its twin.

An answer is a list of distinct vertex ids; for a clique every two of them must be adjacent,
for an independent set no two. The empty list is feasible with size 0. Both checks return
``(code, a, b, size)`` for the first violation in this order: an id out of range (scanning
left to right), a repeated id, then the first pair in answer order that breaks the rule;
:func:`reason` turns it into text.
"""

from __future__ import annotations

import numpy as np

from npgym.heuristics.jit import njit
from npgym.kernels import (
    ID_OUT_OF_RANGE,
    ID_REPEATED,
    IDS_OK,
    check_ids,
    check_ids_python,
    ids_reason,
)
from npgym.results import NOT_SCANNED
from npgym.scan import scan_flat

OK, OUT_OF_RANGE, REPEATED, BAD_PAIR = IDS_OK, ID_OUT_OF_RANGE, ID_REPEATED, 3


@njit
def check_vertex_set(
    adjacency: np.ndarray, adjacent: bool, ids: np.ndarray
) -> tuple[int, int, int, int]:
    """Check that ``ids`` are distinct vertices, pairwise adjacent (``adjacent``) or pairwise
    non-adjacent (numba)."""
    code, value, _ = check_ids(ids, adjacency.shape[0])
    if code != IDS_OK:
        return code, value, 0, 0
    m = ids.shape[0]
    for i in range(m):
        for j in range(i + 1, m):
            if adjacency[ids[i], ids[j]] != adjacent:
                return BAD_PAIR, ids[i], ids[j], 0
    return OK, 0, 0, m


@njit
def scan_check_vertex_set(
    answer: bytes, adjacency: np.ndarray, adjacent: bool
) -> tuple[int, int, int, int]:
    """Read the answer text and check it in one call (``NOT_SCANNED`` first if not a list)."""
    scanned, ids = scan_flat(answer)
    if not scanned:
        return NOT_SCANNED, 0, 0, 0
    return check_vertex_set(adjacency, adjacent, ids)


def check_vertex_set_python(
    adj: list[list[bool]], adjacent: bool, ids: list[int]
) -> tuple[int, int, int, int]:
    """Pure-Python twin of :func:`check_vertex_set`, on lists."""
    code, value, _ = check_ids_python(ids, len(adj))
    if code != IDS_OK:
        return code, value, 0, 0
    for i, u in enumerate(ids):
        for v in ids[i + 1 :]:
            if adj[u][v] != adjacent:
                return BAD_PAIR, u, v, 0
    return OK, 0, 0, len(ids)


def reason(code: int, a: int, b: int, n: int, adjacent: bool) -> str:
    """Explain a failed check (``a`` and ``b`` are the kernel's details)."""
    if code == BAD_PAIR:
        low, high = min(a, b), max(a, b)
        return f"vertices {low} and {high} are {'not ' if adjacent else ''}adjacent"
    return ids_reason(code, a, n, "vertex")
