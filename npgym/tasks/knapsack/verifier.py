"""Knapsack verifier: a numba kernel and its pure-Python twin, which must agree on every input.

An answer is a list of distinct valid item numbers (the empty list included) whose total weight
is at most the capacity; its objective is their total value. Both checks return
``(code, a, b, objective)``; the first violation in this order is reported: item out of range,
item repeated, too heavy.
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

OK, OUT_OF_RANGE, REPEATED, OVERWEIGHT = IDS_OK, ID_OUT_OF_RANGE, ID_REPEATED, 3


@njit
def check_selection(
    weight_array: np.ndarray, value_array: np.ndarray, capacity: int, ids: np.ndarray
) -> tuple[int, int, int, int]:
    """Check a list of items against the weights, values and capacity (numba)."""
    code, value, position = check_ids(ids, weight_array.shape[0])
    if code != IDS_OK:
        return code, value, position, 0
    weight, total = 0, 0
    for item in ids:
        weight += weight_array[item]
        total += value_array[item]
    if weight > capacity:
        return OVERWEIGHT, weight, capacity, 0
    return OK, 0, 0, total


@njit
def scan_check_selection(
    answer: bytes, weight_array: np.ndarray, value_array: np.ndarray, capacity: int
) -> tuple[int, int, int, int]:
    """Read the answer text and check it in one call (``NOT_SCANNED`` first if not a list)."""
    scanned, ids = scan_flat(answer)
    if not scanned:
        return NOT_SCANNED, 0, 0, 0
    return check_selection(weight_array, value_array, capacity, ids)


def check_selection_python(
    weights: list[int], values: list[int], capacity: int, ids: list[int]
) -> tuple[int, int, int, int]:
    """Pure-Python twin of :func:`check_selection`, on lists."""
    code, value, position = check_ids_python(ids, len(weights))
    if code != IDS_OK:
        return code, value, position, 0
    weight = sum(weights[item] for item in ids)
    if weight > capacity:
        return OVERWEIGHT, weight, capacity, 0
    return OK, 0, 0, sum(values[item] for item in ids)


def reason(code: int, a: int, b: int, n: int) -> str:
    """Explain a failed check (``a`` and ``b`` are the kernel's details)."""
    if code in (OUT_OF_RANGE, REPEATED):
        return ids_reason(code, a, n, "item")
    if code == OVERWEIGHT:
        return f"total weight {a} > capacity {b}"
    return ""
