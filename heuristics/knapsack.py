"""0/1 Knapsack reference solvers on integer weights (positive), values and a capacity.

- :func:`greedy_knapsack`: items by value/weight ratio (highest first, lower index on ties),
  each added when it still fits; the best single item instead when that is worth more.
- :func:`dp_knapsack`: exact dynamic programme over capacities, O(n * capacity) time and
  bytes, with a canonical witness (an item is taken only when it strictly improves the table).
- :func:`exact_knapsack`: the dynamic programme when its table fits :data:`DP_MAX_CELLS`,
  otherwise OR-Tools' branch-and-bound knapsack solver (deterministic) within a time limit.
- :func:`dantzig_bound`: the LP-relaxation upper bound.

Selections are sorted int64 arrays of item indices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from npgym.heuristics._numba import njit

DP_MAX_CELLS = 100_000_000
"""Largest ``n * (capacity + 1)`` table the dynamic programme builds (one byte per cell)."""


def ratio_order(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Item indices by value/weight ratio, highest first, lower index first on ties."""
    ratios = np.asarray(values, dtype=np.float64) / np.asarray(weights, dtype=np.float64)
    return np.lexsort((np.arange(ratios.size), -ratios))


def greedy_knapsack(weights: np.ndarray, values: np.ndarray, capacity: int) -> np.ndarray:
    """Ratio-greedy selection, or the most valuable single item if that is better."""
    weights = np.asarray(weights, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    chosen, load = [], 0
    for item in ratio_order(weights, values).tolist():
        if load + weights[item] <= capacity:
            chosen.append(item)
            load += int(weights[item])
    fitting = np.flatnonzero(weights <= capacity)
    if fitting.size:
        single = int(fitting[np.argmax(values[fitting])])
        if values[single] > values[chosen].sum():
            chosen = [single]
    return np.array(sorted(chosen), dtype=np.int64)


def dantzig_bound(weights: np.ndarray, values: np.ndarray, capacity: int) -> int:
    """Upper bound on the optimum: the LP relaxation (ratio order, last item fractional)."""
    total, room = 0, int(capacity)
    for item in ratio_order(weights, values).tolist():
        weight, value = int(weights[item]), int(values[item])
        if weight <= room:
            total += value
            room -= weight
        else:
            return total + room * value // weight
    return total


@njit
def _dp_table(weights: np.ndarray, values: np.ndarray, capacity: int) -> np.ndarray:
    """``take[i, c]``: item i strictly improves the best value within capacity c."""
    best = np.zeros(capacity + 1, np.int64)
    take = np.zeros((weights.shape[0], capacity + 1), np.bool_)
    for item in range(weights.shape[0]):
        weight, value = weights[item], values[item]
        for room in range(capacity, weight - 1, -1):
            candidate = best[room - weight] + value
            if candidate > best[room]:
                best[room] = candidate
                take[item, room] = True
    return take


def dp_knapsack(weights: np.ndarray, values: np.ndarray, capacity: int) -> np.ndarray:
    """An optimal selection by dynamic programming over capacities (canonical witness)."""
    weights = np.ascontiguousarray(weights, dtype=np.int64)
    values = np.ascontiguousarray(values, dtype=np.int64)
    room = int(min(capacity, weights.sum()))
    take = _dp_table(weights, values, room)
    chosen = []
    for item in range(weights.size - 1, -1, -1):
        if take[item, room]:
            chosen.append(item)
            room -= int(weights[item])
    return np.array(sorted(chosen), dtype=np.int64)


@dataclass(frozen=True)
class ExactResult:
    """Outcome of :func:`exact_knapsack`: the best selection and what was proven about it."""

    items: np.ndarray
    value: int
    proven_optimal: bool
    upper_bound: int
    solver: str


def exact_knapsack(
    weights: np.ndarray,
    values: np.ndarray,
    capacity: int,
    time_limit: float = 60.0,
    incumbent: np.ndarray | None = None,
    max_dp_cells: int = DP_MAX_CELLS,
) -> ExactResult:
    """Optimal selection: dynamic programme, or branch and bound for capacities too large
    for its table (then proven only if it finishes within ``time_limit`` seconds; otherwise the
    better of its answer and ``incumbent``, with the Dantzig bound)."""
    weights = np.asarray(weights, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    if weights.size * (min(capacity, int(weights.sum())) + 1) <= max_dp_cells:
        items = dp_knapsack(weights, values, capacity)
        value = int(values[items].sum())
        return ExactResult(items, value, True, value, "dynamic programme over capacities")
    from ortools.algorithms.python import knapsack_solver  # only huge capacities need it

    solver = knapsack_solver.KnapsackSolver(
        knapsack_solver.SolverType.KNAPSACK_MULTIDIMENSION_BRANCH_AND_BOUND_SOLVER, "npgym"
    )
    solver.init(values.tolist(), [weights.tolist()], [int(capacity)])
    solver.set_time_limit(max(time_limit, 0.01))
    solver.solve()
    items = np.array(
        [item for item in range(weights.size) if solver.best_solution_contains(item)],
        dtype=np.int64,
    )
    name = "branch and bound (OR-Tools)"
    if solver.is_solution_optimal():
        value = int(values[items].sum())
        return ExactResult(items, value, True, value, name)
    if incumbent is not None and values[incumbent].sum() > values[items].sum():
        items = np.asarray(incumbent, dtype=np.int64)
    value = int(values[items].sum())
    bound = max(value, dantzig_bound(weights, values, capacity))
    return ExactResult(items, value, bound == value, bound, name)
