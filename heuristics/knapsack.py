"""0/1 Knapsack reference solvers on integer weights (positive), values and a capacity.

- :func:`greedy_knapsack`: items by value/weight ratio (highest first, lower index on ties),
  each added when it still fits; the best single item instead when that is worth more.
- :func:`dp_knapsack`: exact dynamic programme over capacities, O(n * capacity) time and
  bytes, with a canonical witness (an item is taken only when it strictly improves the table).
- :func:`exact_knapsack`: the dynamic programme when its table fits :data:`DP_MAX_CELLS`,
  otherwise CP-SAT (one worker, fixed seed) within a budget of deterministic time.
- :func:`dantzig_bound`: the LP-relaxation upper bound.
- :func:`lagrangian_tree`: a branch and bound on Dantzig's bound that records its tree, the
  proof of an upper bound that :mod:`npgym.certificates.knapsack` checks (``"lagrangian"``).

Selections are sorted int64 arrays of item indices. Every exact result carries a certificate
(docs/certificates.md, :func:`certify`): ``{"kind": "dp"}`` (the checker reruns the programme)
within the checker's limits, else the recorded tree, else the programme on scaled-down weights.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import numpy as np

from npgym.heuristics.budget import CP_SAT_DETERMINISTIC_PER_SECOND, Deadline, cp_sat_solver
from npgym.heuristics.jit import njit
from npgym.heuristics.result import SolverResult

DP_MAX_CELLS = 100_000_000
"""Largest ``n * (capacity + 1)`` table the dynamic programme builds (one byte per cell)."""
CERTIFIED_DP_MAX_CELLS = 100_000_000
"""Largest ``n * (capacity + 1)`` programme the certificate checker reruns (its
``DP_MAX_CELLS``); past it, or past :data:`CERTIFIED_DP_MAX_ROOM`, :func:`certify` looks
for a tree or scales the weights down."""
CERTIFIED_DP_MAX_ROOM = 10_000_000
"""Largest capacity the certificate checker's programme runs to (its ``DP_MAX_ROOM``)."""
CERTIFIED_TREE_MAX_WORK = 10_000_000
"""Largest ``leaves * n`` tree the certificate checker reads (its ``TREE_MAX_WORK``): the
branch and bound of :func:`lagrangian_tree` stops there, unproven."""
CERTIFIED_MAX_BYTES = 8 * 1024 * 1024
"""Largest certificate the checker reads (``npgym.certificates.MAX_CERTIFICATE_BYTES``): a
tree node takes at most 32 bytes of compact JSON and a tree of L leaves has 2L - 1 nodes, so
trees stop at ``CERTIFIED_MAX_BYTES // 64`` leaves."""


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


def exact_ratio_order(weights: list[int], values: list[int]) -> list[int]:
    """Item indices by value/weight ratio, highest first, compared exactly (lower index first
    on ties): the order of Dantzig's bound. The float order, checked pair by pair in integers,
    unless floats misjudge a pair (ratios closer than their precision): then exact fractions."""
    order: list[int] = ratio_order(np.array(weights), np.array(values)).tolist()
    if all(
        values[a] * weights[b] > values[b] * weights[a]
        or (values[a] * weights[b] == values[b] * weights[a] and a < b)
        for a, b in itertools.pairwise(order)
    ):
        return order
    return sorted(order, key=lambda item: (-Fraction(values[item], weights[item]), item))


def _lp_node(
    order: list[int], weights: list[int], values: list[int], room: int, free: list[bool]
) -> tuple[int, int, int | None]:
    """The LP relaxation over the ``free`` items within ``room``: the value of the items that
    fit whole (in ``order``), the room they leave and the critical item (``None``: all fit)."""
    total = 0
    for item in order:
        if free[item]:
            if weights[item] > room:
                return total, room, item
            total += values[item]
            room -= weights[item]
    return total, room, None


def dantzig_bound(weights: np.ndarray, values: np.ndarray, capacity: int) -> int:
    """Upper bound on the optimum: the LP relaxation (ratio order, last item fractional)."""
    return lagrangian_leaf(weights.tolist(), values.tolist(), capacity)[0]


def lagrangian_leaf(
    weights: list[int], values: list[int], capacity: int
) -> tuple[int, dict[str, Any]]:
    """Dantzig's bound and its certificate: one leaf whose multiplier is the critical ratio."""
    order = exact_ratio_order(weights, values)
    total, room, critical = _lp_node(order, weights, values, capacity, [True] * len(weights))
    if critical is None:
        return total, {"kind": "lagrangian", "tree": [["bound", 0, 1]]}
    weight, value = weights[critical], values[critical]
    leaf = ["bound", value, weight]
    return total + room * value // weight, {"kind": "lagrangian", "tree": [leaf]}


def lagrangian_tree(
    weights: list[int], values: list[int], capacity: int, target: int, max_leaves: int
) -> tuple[int, dict[str, Any]] | None:
    """A branch and bound that proves the optimum is at most ``target`` where it can, and the
    bound it proves (its largest leaf) with its certificate; ``None`` past ``max_leaves``.

    Depth first, on the critical item of the LP relaxation (taken first, then left out); a node
    is a leaf when its floored LP bound is at most ``target``, its taken items weigh more than
    the capacity, or every free item fits. Items split on are never free again, so the depth
    is at most n."""
    n = len(weights)
    order = exact_ratio_order(weights, values)
    free, taken = [True] * n, [False] * n
    tree: list[list[Any]] = []
    path: list[int] = []
    weight_in = value_in = leaves = 0
    best: int | None = None
    while True:
        if weight_in > capacity:
            tree.append(["over"])
        else:
            total, room, critical = _lp_node(order, weights, values, capacity - weight_in, free)
            total += value_in
            if critical is None:
                leaf_bound, leaf = total, ["bound", 0, 1]
            else:
                weight, value = weights[critical], values[critical]
                leaf_bound, leaf = total + room * value // weight, ["bound", value, weight]
                if leaf_bound > target:
                    tree.append(["split", critical])
                    free[critical], taken[critical] = False, True
                    weight_in, value_in = weight_in + weight, value_in + value
                    path.append(critical)
                    continue
            tree.append(leaf)
            best = leaf_bound if best is None else max(best, leaf_bound)
        leaves += 1
        if leaves > max_leaves:
            return None
        while path and not taken[path[-1]]:
            free[path.pop()] = True
        if not path:
            break
        item = path[-1]
        taken[item] = False
        weight_in, value_in = weight_in - weights[item], value_in - values[item]
    assert best is not None  # the all-left-out path ends in a bound leaf
    return best, {"kind": "lagrangian", "tree": tree}


def scaled_dp_bound(weights: np.ndarray, values: np.ndarray, room: int, scale: int) -> int:
    """The optimum within ``room // scale`` of the weights divided by ``scale`` (rounded down):
    an upper bound on the optimum within ``room`` (the optimum itself at ``scale`` 1)."""
    best = np.zeros(room // scale + 1, dtype=np.int64)
    for weight, value in zip((weights // scale).tolist(), values.tolist(), strict=True):
        if weight == 0:
            best += value
        elif weight < best.size:
            best[weight:] = np.maximum(best[weight:], best[:-weight] + value)
    return int(best[-1])


def certify(
    weights: np.ndarray, values: np.ndarray, capacity: int, value: int, optimal: bool
) -> tuple[int, dict[str, Any]]:
    """The best upper bound on the optimum (``value`` when that is the optimum) that a
    certificate within the checker's limits proves, with the certificate. ``optimal``: the
    solver says ``value`` is the optimum, so the checker's rerun of the programme may show it.

    Past the programme's limits: the branch and bound's tree, when it proves ``value`` within
    its leaves; else the programme on weights scaled down to fit the limits, when that proves
    ``value``; else the best bound of the tree (or Dantzig's) and the scaled programme."""
    n, room = max(weights.size, 1), min(capacity, int(weights.sum()))
    if optimal and room <= CERTIFIED_DP_MAX_ROOM and n * (room + 1) <= CERTIFIED_DP_MAX_CELLS:
        return value, {"kind": "dp"}
    weight_list, value_list = weights.tolist(), values.tolist()
    leaves = min(CERTIFIED_TREE_MAX_WORK // n, CERTIFIED_MAX_BYTES // 64)
    proof = lagrangian_tree(weight_list, value_list, capacity, value, leaves)
    if proof is not None and proof[0] <= value:
        return proof
    scale = room // min(CERTIFIED_DP_MAX_CELLS // n, CERTIFIED_DP_MAX_ROOM + 1) + 1
    scaled = scaled_dp_bound(weights, values, room, scale), {"kind": "dp", "scale": scale}
    return min(proof or lagrangian_leaf(weight_list, value_list, capacity), scaled, key=_bound)


def _bound(proof: tuple[int, dict[str, Any]]) -> int:
    """A proof's bound (what :func:`certify` minimises)."""
    return proof[0]


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
        bound, certificate = certify(weights, values, capacity, value, optimal=True)
        solver = "dynamic programme over capacities"
        return SolverResult(items, value, bound, solver=solver, certificate=certificate)
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
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        found = np.array(
            [item for item in range(weights.size) if solver.boolean_value(take[item])],
            dtype=np.int64,
        )
        if status == cp_model.OPTIMAL or values[found].sum() > values[best].sum():
            best = found
    value = int(values[best].sum())
    # CP-SAT's word is no proof: the bound is what a checkable certificate proves.
    optimal = status == cp_model.OPTIMAL
    bound, certificate = certify(weights, values, capacity, value, optimal)
    stopped = "" if bound == value else "deadline" if deadline.expired() else "budget"
    return SolverResult(best, value, bound, work, stopped, "CP-SAT", certificate)
