"""Exact optima of small instances in work fixed by their size, for checking inverse answers.

A branch-and-bound proof may take long on an unlucky instance; these routines may not. Each one's
work and memory are a closed-form function of the instance's size alone (stated per function),
so a cap on the size bounds the time and the memory of every check, whatever the numbers are:

- TSP: Held-Karp dynamic programming, ``n^2 2^n`` steps and ``n 2^n`` integers;
- MinBisection: every split, ``C(n, n/2) n^2`` steps;
- Knapsack: dynamic programming over the capacity, ``n (capacity + 1)`` steps;
- SubsetSum: dynamic programming over the sums, ``n (target + 1)`` steps;
- SetCover: every selection of subsets, ``2^m m`` word operations for ``m`` subsets.

Inputs are plain numpy arrays (this package imports nothing from npgym); a missing optimum (no
cover, no subset reaching the target) is ``-1``.
"""

from __future__ import annotations

import numpy as np

from npgym.heuristics.jit import njit
from npgym.heuristics.knapsack import add_item

_UNREACHED = np.int64(-1)


@njit
def tsp_optimum(distances: np.ndarray) -> int:
    """Length of a shortest closed tour through every city (Held-Karp; ``distances`` is an
    ``n x n`` int64 matrix)."""
    n = distances.shape[0]
    if n <= 1:
        return 0
    rest = n - 1  # cities 1..n-1; city 0 starts and ends the tour
    full = 1 << rest
    unreached = np.iinfo(np.int64).max
    shortest = np.full((full, rest), unreached, dtype=np.int64)
    for city in range(rest):
        shortest[1 << city, city] = distances[0, city + 1]
    for visited in range(1, full):
        for last in range(rest):
            length = shortest[visited, last]
            if length == unreached or not (visited >> last) & 1:
                continue
            for following in range(rest):
                if (visited >> following) & 1:
                    continue
                extended = visited | (1 << following)
                candidate = length + distances[last + 1, following + 1]
                if candidate < shortest[extended, following]:
                    shortest[extended, following] = candidate
    best = unreached
    for last in range(rest):
        best = min(best, shortest[full - 1, last] + distances[last + 1, 0])
    return best


@njit
def min_bisection_optimum(n: int, edges: np.ndarray) -> int:
    """Least weight of the edges cut by a split into halves of sizes ``n // 2`` and the rest
    (``edges`` rows ``[u, v, w]``), trying every split: the smaller side holds vertex 0 when
    the sides are equal, so each split is tried once."""
    weight = np.zeros((n, n), dtype=np.int64)
    for row in range(edges.shape[0]):
        u, v, w = edges[row, 0], edges[row, 1], edges[row, 2]
        weight[u, v] += w
        weight[v, u] += w
    side = n // 2
    fixed = 1 if 2 * side == n else 0  # vertex 0 on the first side
    free = n - fixed
    choose = side - fixed
    best = np.iinfo(np.int64).max
    members = np.empty(side, dtype=np.int64)
    outside = np.empty(n - side, dtype=np.int64)
    mask = (1 << choose) - 1
    while mask < (1 << free):
        taken = mask << fixed | fixed  # bit 0 set when vertex 0 is fixed on the first side
        inside_count = 0
        outside_count = 0
        for vertex in range(n):
            if (taken >> vertex) & 1:
                members[inside_count] = vertex
                inside_count += 1
            else:
                outside[outside_count] = vertex
                outside_count += 1
        cut = 0
        for i in range(side):
            for j in range(n - side):
                cut += weight[members[i], outside[j]]
        best = min(best, cut)
        if mask == 0:
            break
        lowest = mask & -mask  # Gosper's hack: the next mask with as many bits set
        ripple = mask + lowest
        mask = (((ripple ^ mask) >> 2) // lowest) | ripple
    return best


@njit
def knapsack_optimum(weights: np.ndarray, values: np.ndarray, capacity: int) -> int:
    """Largest value of items of total weight at most ``capacity`` (weights positive): the
    value alone, in ``capacity + 1`` integers (:func:`npgym.heuristics.knapsack.dp_knapsack`
    also keeps an ``n x capacity`` table, to recover a selection)."""
    best = np.zeros(capacity + 1, dtype=np.int64)
    for item in range(weights.shape[0]):
        add_item(best, weights[item], values[item], None)
    return best[capacity]


@njit
def subset_sum_optimum(numbers: np.ndarray, target: int) -> int:
    """Most distinct indices whose numbers (positive) sum exactly to ``target``; -1 if none."""
    most = np.full(target + 1, -1, dtype=np.int64)
    most[0] = 0
    for index in range(numbers.shape[0]):
        number = numbers[index]
        for total in range(target, number - 1, -1):
            if most[total - number] >= 0 and most[total - number] + 1 > most[total]:
                most[total] = most[total - number] + 1
    return most[target]


@njit
def set_cover_optimum(universe_size: int, subsets: np.ndarray) -> int:
    """Fewest subsets covering ``0..universe_size-1``; -1 if all of them do not.

    ``subsets`` is an ``m x words`` uint64 array of element bits (``words * 64 >=``
    ``universe_size``); every selection of subsets is tried, skipping those no smaller than the
    best cover found.
    """
    count, words = subsets.shape
    wanted = np.zeros(words, dtype=np.uint64)
    for element in range(universe_size):
        wanted[element // 64] |= np.uint64(1) << np.uint64(element % 64)
    best = count + 1
    union = np.empty(words, dtype=np.uint64)
    for selection in range(1, 1 << count):
        size = 0
        rest = selection
        while rest:
            rest &= rest - 1
            size += 1
        if size >= best:
            continue
        union[:] = 0
        for subset in range(count):
            if (selection >> subset) & 1:
                for word in range(words):
                    union[word] |= subsets[subset, word]
        covered = True
        for word in range(words):
            if union[word] & wanted[word] != wanted[word]:
                covered = False
        if covered:
            best = size
    return best if best <= count else -1


def subset_bits(
    universe_size: int, subsets: list[list[int]] | tuple[tuple[int, ...], ...]
) -> np.ndarray:
    """The ``m x words`` uint64 bit rows of ``subsets`` that :func:`set_cover_optimum` takes."""
    words = max(1, -(-universe_size // 64))
    bits = np.zeros((len(subsets), words), dtype=np.uint64)
    for row, subset in enumerate(subsets):
        for element in subset:
            bits[row, element // 64] |= np.uint64(1) << np.uint64(element % 64)
    return bits
