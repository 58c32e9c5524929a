"""0/1 Knapsack reference solvers on integer weights (positive), values and a capacity.

- :func:`greedy_knapsack`: items by value/weight ratio (highest first, lower index on ties),
  each added when it still fits; the best single item instead when that is worth more.
- :func:`dp_knapsack`: exact dynamic programme over capacities, O(n * capacity) time and
  bytes, with a canonical witness (an item is taken only when it strictly improves the table).
- :func:`exact_knapsack`: the dynamic programme when its table fits :data:`DP_MAX_CELLS`,
  otherwise CP-SAT (one worker, fixed seed) within a budget of deterministic time.
- :func:`dantzig_bound`: the LP-relaxation upper bound.

Selections are sorted int64 arrays of item indices.
"""

from __future__ import annotations

import math

import numpy as np

from npgym.heuristics.budget import CP_SAT_DETERMINISTIC_PER_SECOND, Deadline, cp_sat_solver
from npgym.heuristics.jit import njit
from npgym.heuristics.result import SolverResult

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
def add_item(best: np.ndarray, weight: int, value: int, took: np.ndarray | None) -> None:
    """One item's pass of the 0/1 knapsack dynamic programme, in place: ``best[c]``, the largest
    value within capacity ``c``, takes the item wherever that is strictly better, and ``took[c]``
    is set there (``None``: only the values are kept)."""
    for room in range(best.shape[0] - 1, weight - 1, -1):
        candidate = best[room - weight] + value
        if candidate > best[room]:
            best[room] = candidate
            if took is not None:
                took[room] = True


@njit
def _dp_table(weights: np.ndarray, values: np.ndarray, capacity: int) -> np.ndarray:
    """``take[i, c]``: item i strictly improves the best value within capacity c."""
    best = np.zeros(capacity + 1, np.int64)
    take = np.zeros((weights.shape[0], capacity + 1), np.bool_)
    for item in range(weights.shape[0]):
        add_item(best, weights[item], values[item], take[item])
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


def exact_knapsack(
    weights: np.ndarray,
    values: np.ndarray,
    capacity: int,
    effort: float = 60.0,
    incumbent: np.ndarray | None = None,
    max_dp_cells: int = DP_MAX_CELLS,
    deadline: Deadline | None = None,
) -> SolverResult[np.ndarray]:
    """Optimal selection: dynamic programme, or CP-SAT for capacities too large for its table
    (then proven only if it finishes within ``effort`` seconds of deterministic time; otherwise
    the better of its answer and ``incumbent``, with the better of its bound and Dantzig's).
    ``deadline`` is the wall-clock safety net."""
    weights = np.asarray(weights, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    if weights.size * (min(capacity, int(weights.sum())) + 1) <= max_dp_cells:
        items = dp_knapsack(weights, values, capacity)
        value = int(values[items].sum())
        return SolverResult(items, value, value, solver="dynamic programme over capacities")
    from ortools.sat.python import cp_model  # only huge capacities need it

    deadline = deadline or Deadline.for_effort(effort)
    model = cp_model.CpModel()
    take = [model.new_bool_var(f"x{item}") for item in range(weights.size)]
    model.add(sum(int(w) * x for w, x in zip(weights, take, strict=True)) <= int(capacity))
    model.maximize(sum(int(v) * x for v, x in zip(values, take, strict=True)))
    best = np.empty(0, np.int64) if incumbent is None else np.asarray(incumbent, dtype=np.int64)
    for item in best.tolist():
        model.add_hint(take[item], True)
    solver = cp_sat_solver(effort * CP_SAT_DETERMINISTIC_PER_SECOND, deadline)
    status = solver.solve(model)
    work = int(solver.deterministic_time * 1000)
    name = "CP-SAT"
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        found = np.array(
            [item for item in range(weights.size) if solver.boolean_value(take[item])],
            dtype=np.int64,
        )
        if status == cp_model.OPTIMAL or values[found].sum() > values[best].sum():
            best = found
    value = int(values[best].sum())
    if status == cp_model.OPTIMAL:
        return SolverResult(best, value, value, work, solver=name)
    bound = dantzig_bound(weights, values, capacity)
    if status == cp_model.FEASIBLE:
        bound = min(bound, math.floor(solver.best_objective_bound + 1e-6))
    bound = max(value, bound)
    stopped = "" if bound == value else "deadline" if deadline.expired() else "budget"
    return SolverResult(best, value, bound, work, stopped, name)
