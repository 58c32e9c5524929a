"""Checks shared by several verifiers: a list of ids that must be valid and distinct.

``check_ids`` is a numba kernel that task kernels call; ``check_ids_python`` is its twin.
Both return ``(code, value, position)`` for the first problem found, scanning left to right.
"""

from __future__ import annotations

import numpy as np

from npgym.heuristics.jit import njit

IDS_OK, ID_OUT_OF_RANGE, ID_REPEATED = 0, 1, 2


@njit
def check_ids(ids: np.ndarray, count: int) -> tuple[int, int, int]:
    """First id outside ``0..count-1`` or first repeat in ``ids`` (numba)."""
    for position in range(ids.shape[0]):
        if ids[position] < 0 or ids[position] >= count:
            return ID_OUT_OF_RANGE, ids[position], position
    seen = np.zeros(count, np.bool_)
    for position in range(ids.shape[0]):
        if seen[ids[position]]:
            return ID_REPEATED, ids[position], position
        seen[ids[position]] = True
    return IDS_OK, 0, 0


def check_ids_python(ids: list[int], count: int) -> tuple[int, int, int]:
    """Pure-Python twin of :func:`check_ids`."""
    for position, item in enumerate(ids):
        if not 0 <= item < count:
            return ID_OUT_OF_RANGE, item, position
    seen: set[int] = set()
    for position, item in enumerate(ids):
        if item in seen:
            return ID_REPEATED, item, position
        seen.add(item)
    return IDS_OK, 0, 0


def ids_reason(code: int, value: int, count: int, noun: str) -> str:
    """Text for a failed :func:`check_ids`, e.g. ``vertex 7 listed twice``."""
    if code == ID_OUT_OF_RANGE:
        plural = "ices" if noun == "vertex" else "s"
        stem = noun[:-2] if noun == "vertex" else noun
        return f"{noun} {value} does not exist ({stem}{plural} are 0 to {count - 1})"
    if code == ID_REPEATED:
        return f"{noun} {value} listed twice"
    return ""
