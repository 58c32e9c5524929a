"""SubsetSum verifier: a numba kernel and its pure-Python twin, which must agree on every input.

An answer is a list of distinct valid indices whose numbers sum to exactly the target; its
objective is the number of indices. Both checks return ``(code, a, b, objective)``; the first
violation in this order is reported: index out of range, index repeated, wrong sum (the empty
list sums to 0, and targets are positive).
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
)
from npgym.results import NOT_SCANNED
from npgym.scan import scan_flat

OK, OUT_OF_RANGE, REPEATED, WRONG_SUM = IDS_OK, ID_OUT_OF_RANGE, ID_REPEATED, 3


@njit
def check_subset(
    number_array: np.ndarray, target: int, ids: np.ndarray
) -> tuple[int, int, int, int]:
    """Check a list of indices against the numbers and the target (numba)."""
    code, value, position = check_ids(ids, number_array.shape[0])
    if code != IDS_OK:
        return code, value, position, 0
    total = 0
    for index in ids:
        total += number_array[index]
    if total != target:
        return WRONG_SUM, total, target, 0
    return OK, 0, 0, ids.shape[0]


@njit
def scan_check_subset(
    answer: bytes, number_array: np.ndarray, target: int
) -> tuple[int, int, int, int]:
    """Read the answer text and check it in one call (``NOT_SCANNED`` first if not a list)."""
    scanned, ids = scan_flat(answer)
    if not scanned:
        return NOT_SCANNED, 0, 0, 0
    return check_subset(number_array, target, ids)


def check_subset_python(
    numbers: list[int], target: int, ids: list[int]
) -> tuple[int, int, int, int]:
    """Pure-Python twin of :func:`check_subset`, on lists."""
    code, value, position = check_ids_python(ids, len(numbers))
    if code != IDS_OK:
        return code, value, position, 0
    total = sum(numbers[index] for index in ids)
    if total != target:
        return WRONG_SUM, total, target, 0
    return OK, 0, 0, len(ids)


def reason(code: int, a: int, b: int, n: int) -> str:
    """Explain a failed check (``a`` and ``b`` are the kernel's details)."""
    if code == OUT_OF_RANGE:
        return f"index {a} does not exist (indices are 0 to {n - 1})"
    if code == REPEATED:
        return f"index {a} used twice"
    if code == WRONG_SUM:
        return f"sum is {a}, target {b}"
    return ""
