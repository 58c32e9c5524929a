"""SetCover verifier: a numba kernel and its pure-Python twin, which must agree on every input.

An answer is either a list of distinct valid subset numbers whose union is the universe
(objective: how many) or the claim ``Impossible``, correct exactly when the union of all subsets
misses an element. Both checks return ``(code, a, b, claims_impossible, objective)``; for a
list the first violation in this order is reported: subset out of range, subset repeated,
smallest element not covered. A correct ``Impossible`` returns ``OK`` with objective 0 and
``claims_impossible`` 1 (the task reports no objective for it).
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

OK, OUT_OF_RANGE, REPEATED, NOT_COVERED, COVER_EXISTS = (
    IDS_OK,
    ID_OUT_OF_RANGE,
    ID_REPEATED,
    3,
    4,
)


@njit
def check_cover(
    offsets: np.ndarray,
    elements: np.ndarray,
    universe_size: int,
    ids: np.ndarray,
    claims_impossible: bool,
) -> tuple[int, int, int, int, int]:
    """Check a list of subsets, or the claim ``Impossible`` (``ids`` then ignored), against
    subsets in CSR form: subset j holds ``elements[offsets[j]:offsets[j + 1]]`` (numba)."""
    covered = np.zeros(universe_size, np.bool_)
    if claims_impossible:
        for position in range(elements.shape[0]):
            covered[elements[position]] = True
        for element in range(universe_size):
            if not covered[element]:
                return OK, 0, 0, 1, 0
        return COVER_EXISTS, 0, 0, 1, 0
    code, value, position = check_ids(ids, offsets.shape[0] - 1)
    if code != IDS_OK:
        return code, value, position, 0, 0
    for subset in ids:
        for position in range(offsets[subset], offsets[subset + 1]):
            covered[elements[position]] = True
    for element in range(universe_size):
        if not covered[element]:
            return NOT_COVERED, element, 0, 0, 0
    return OK, 0, 0, 0, ids.shape[0]


@njit
def scan_check_cover(
    answer: bytes, offsets: np.ndarray, elements: np.ndarray, universe_size: int
) -> tuple[int, int, int, int, int]:
    """Read a list answer and check it in one call (``NOT_SCANNED`` first if not a list, the
    word ``Impossible`` included)."""
    scanned, ids = scan_flat(answer)
    if not scanned:
        return NOT_SCANNED, 0, 0, 0, 0
    return check_cover(offsets, elements, universe_size, ids, False)


def check_cover_python(
    offsets: list[int],
    elements: list[int],
    universe_size: int,
    ids: list[int],
    claims_impossible: bool,
) -> tuple[int, int, int, int, int]:
    """Pure-Python twin of :func:`check_cover`, on the CSR lists, with sets."""
    subsets = [elements[offsets[j] : offsets[j + 1]] for j in range(len(offsets) - 1)]
    if claims_impossible:
        union = {element for subset in subsets for element in subset}
        return (OK if len(union) < universe_size else COVER_EXISTS), 0, 0, 1, 0
    code, value, position = check_ids_python(ids, len(subsets))
    if code != IDS_OK:
        return code, value, position, 0, 0
    covered = {element for subset in ids for element in subsets[subset]}
    for element in range(universe_size):
        if element not in covered:
            return NOT_COVERED, element, 0, 0, 0
    return OK, 0, 0, 0, len(ids)


def reason(code: int, a: int, b: int, claims_impossible: int, subsets: tuple[object, ...]) -> str:
    """Explain a failed check from the kernel's details (``a`` the one that matters) and the
    instance's ``subsets``."""
    if code in (OUT_OF_RANGE, REPEATED):
        return ids_reason(code, a, len(subsets), "subset")
    if code == NOT_COVERED:
        return f"element {a} not covered"
    if code == COVER_EXISTS:
        return "Impossible is wrong: together the subsets cover every element"
    return ""
