"""SubsetSum reference solvers (maximum-cardinality variant) on an array of positive integers.

- :func:`greedy_subset`: take the smallest numbers first, each only if the rest of the target
  can still be reached by the numbers not yet considered (a reachability table makes every step
  safe, so the result always sums to the target). Fast, usually but not always optimal.
- :func:`max_cardinality_subset`: exact dynamic programme over (sum, count), O(n * target).

Both return sorted index arrays, or ``None`` when no subset sums to the target.
"""

from __future__ import annotations

import numpy as np

from npgym.heuristics.jit import njit


@njit
def _suffix_reachable(numbers: np.ndarray, target: int) -> np.ndarray:
    """``table[k, s]``: some subset of ``numbers[k:]`` sums to ``s`` (for ``s <= target``)."""
    n = numbers.shape[0]
    table = np.zeros((n + 1, target + 1), np.bool_)
    table[n, 0] = True
    for k in range(n - 1, -1, -1):
        number = numbers[k]
        for total in range(target + 1):
            table[k, total] = table[k + 1, total] or (
                total >= number and table[k + 1, total - number]
            )
    return table


@njit
def _greedy_walk(numbers: np.ndarray, target: int, reachable: np.ndarray) -> np.ndarray:
    """Positions in ``numbers`` taken by the oracle-guided walk (``numbers`` in walking order,
    ``reachable`` its :func:`_suffix_reachable` table)."""
    taken = np.zeros(numbers.shape[0], np.bool_)
    remaining = target
    for k in range(numbers.shape[0]):
        if remaining == 0:
            break
        number = numbers[k]
        if number <= remaining and reachable[k + 1, remaining - number]:
            taken[k] = True
            remaining -= number
    return np.flatnonzero(taken)


def greedy_subset(numbers: np.ndarray, target: int) -> np.ndarray | None:
    """Smallest numbers first (ties: lower index first), never losing the target.

    Returns the sorted indices, or ``None`` when no subset sums to ``target``.
    """
    numbers = np.ascontiguousarray(numbers, dtype=np.int64)
    order = np.argsort(numbers, kind="stable")
    walking = numbers[order]
    reachable = _suffix_reachable(walking, target)
    if not reachable[0, target]:
        return None
    return np.sort(order[_greedy_walk(walking, target, reachable)])


@njit
def _count_table(numbers: np.ndarray, target: int) -> np.ndarray:
    """``table[i, s]``: the most numbers of ``numbers[i:]`` summing to ``s``, -1 if none do."""
    n = numbers.shape[0]
    table = np.full((n + 1, target + 1), -1, np.int16)
    table[n, 0] = 0
    for i in range(n - 1, -1, -1):
        number = numbers[i]
        for total in range(target + 1):
            best = table[i + 1, total]
            if total >= number and table[i + 1, total - number] >= 0:
                best = max(best, table[i + 1, total - number] + 1)
            table[i, total] = best
    return table


@njit
def _walk_table(numbers: np.ndarray, target: int, table: np.ndarray) -> np.ndarray:
    """An optimal subset from :func:`_count_table`, taking each index whenever that stays
    optimal: the lexicographically smallest optimal index list."""
    taken = np.zeros(numbers.shape[0], np.bool_)
    remaining = target
    for i in range(numbers.shape[0]):
        number = numbers[i]
        if (
            number <= remaining
            and table[i + 1, remaining - number] >= 0
            and table[i + 1, remaining - number] + 1 == table[i, remaining]
        ):
            taken[i] = True
            remaining -= number
    return np.flatnonzero(taken)


def max_cardinality_subset(numbers: np.ndarray, target: int) -> np.ndarray | None:
    """The most indices whose numbers sum to ``target``, exactly (``None`` if none do).

    Among optimal subsets it returns the lexicographically smallest sorted index list, so the
    witness is canonical. Memory is ``2 * (n + 1) * (target + 1)`` bytes.
    """
    numbers = np.ascontiguousarray(numbers, dtype=np.int64)
    table = _count_table(numbers, target)
    if table[0, target] < 0:
        return None
    return _walk_table(numbers, target, table)


def cardinality_bound(numbers: np.ndarray, target: int) -> int:
    """Upper bound on the answer: how many of the smallest numbers fit within ``target``."""
    prefix = np.cumsum(np.sort(np.asarray(numbers, dtype=np.int64)))
    return int(np.searchsorted(prefix, target, side="right"))
