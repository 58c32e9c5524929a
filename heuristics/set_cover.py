"""SetCover reference solvers on a boolean membership matrix (``membership[j, e]``: subset j
holds element e).

- :func:`greedy_cover`: the classic greedy (most newly covered elements, lowest index on ties),
  then redundant subsets dropped, last chosen first.
- :func:`lp_bound`: the LP relaxation's optimum, rounded up: a lower bound on the cover size.
- :func:`exact_cover`: the integer programme ``min sum x_j`` s.t. every element is covered,
  solved with HiGHS through ``scipy.optimize.milp`` (OR-Tools' bundled HiGHS clashes with
  ``highspy``) within a branch-and-bound node limit. HiGHS is deterministic, so the same instance
  gives the same cover on every machine; a greedy cover that is already optimal is kept as the
  witness. Above :data:`MIP_MAX_NONZEROS` HiGHS's root work (presolve, cuts), which no node
  limit bounds, grows too long, and CP-SAT with a deterministic-time budget takes over.

Covers are sorted int64 arrays of subset indices.
"""

from __future__ import annotations

import math

import numpy as np

from npgym.heuristics.budget import (
    CP_SAT_DETERMINISTIC_PER_SECOND,
    Deadline,
    cp_sat_solver,
    work_units,
)
from npgym.heuristics.result import SolverResult

NODES_PER_SECOND = 50
"""HiGHS branch-and-bound nodes per nominal second of effort."""
MIP_MAX_NONZEROS = 8_000
"""Most memberships (ones in the matrix) given to HiGHS; larger instances go to CP-SAT. Random
subsets as in the published tiers (a fifth of the universe on average) reach it at about 6x the
benchmark size; at 5x HiGHS's root work takes seconds, at 10x it can take minutes. The planted
instances above the benchmark tier are sparser (about 4,000 at difficulty 2.0) and HiGHS proves
them in well under a second, where CP-SAT's budget runs out before it finds the planted cover."""


def first_uncovered(membership: np.ndarray) -> int:
    """The smallest element that no subset holds, or -1 when the subsets cover everything."""
    missing = np.flatnonzero(~membership.any(axis=0))
    return int(missing[0]) if missing.size else -1


def greedy_cover(membership: np.ndarray) -> np.ndarray:
    """Greedy cover without redundant subsets; raises ``ValueError`` if no cover exists."""
    membership = np.asarray(membership, dtype=np.bool_)
    covered = np.zeros(membership.shape[1], np.bool_)
    chosen: list[int] = []
    while not covered.all():
        gains = (membership & ~covered).sum(axis=1)
        best = int(np.argmax(gains))
        if gains[best] == 0:
            raise ValueError("the subsets do not cover the universe")
        chosen.append(best)
        covered |= membership[best]
    counts = membership[chosen].sum(axis=0)
    for subset in reversed(chosen.copy()):
        if (counts[membership[subset]] >= 2).all():
            chosen.remove(subset)
            counts -= membership[subset]
    return np.array(sorted(chosen), dtype=np.int64)


def size_bound(membership: np.ndarray) -> int:
    """A quick lower bound on the cover size: universe size over the largest subset."""
    largest = int(membership.sum(axis=1).max()) if membership.size else 0
    return math.ceil(membership.shape[1] / largest) if largest else 0


def lp_bound(membership: np.ndarray, deadline: Deadline | None = None) -> int:
    """The LP relaxation ``min sum x_j, x in [0, 1]`` rounded up (0 if it cannot be solved in
    time): a lower bound on the cover size, at least as strong as :func:`size_bound`."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix

    membership = np.asarray(membership, dtype=np.bool_)
    count = membership.shape[0]
    if count == 0:
        return 0
    deadline = deadline or Deadline(60.0)
    result = linprog(
        np.ones(count),
        A_ub=-csr_matrix(membership.T.astype(np.float64)),
        b_ub=-np.ones(membership.shape[1]),
        bounds=(0, 1),
        method="highs",
        options={"time_limit": deadline.remaining()},
    )
    return math.ceil(result.fun - 1e-6) if result.status == 0 else 0


def exact_cover(
    membership: np.ndarray,
    effort: float = 60.0,
    incumbent: np.ndarray | None = None,
    deadline: Deadline | None = None,
) -> SolverResult[np.ndarray]:
    """Minimum cover by integer programming within ``effort`` nominal seconds of branch-and-bound
    nodes (:data:`NODES_PER_SECOND`); otherwise the best cover and the best proven lower bound.

    ``incumbent`` (a cover, e.g. from :func:`greedy_cover`) is returned when no smaller cover
    exists, so the witness does not depend on the solver when the greedy cover is optimal.
    The subsets must cover the universe. ``work`` is the node limit given to HiGHS.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_matrix

    membership = np.asarray(membership, dtype=np.bool_)
    deadline = deadline or Deadline.for_effort(effort)
    if incumbent is None:
        incumbent = greedy_cover(membership)
    best = np.asarray(incumbent, dtype=np.int64)
    count = membership.shape[0]
    lower = max(size_bound(membership), lp_bound(membership, deadline))
    if lower >= best.size:
        return SolverResult(best, int(best.size), int(best.size))
    if np.count_nonzero(membership) > MIP_MAX_NONZEROS:
        return _cp_sat_cover(membership, effort, best, lower, deadline)
    nodes = work_units(effort, NODES_PER_SECOND)
    result = milp(
        np.ones(count),
        constraints=LinearConstraint(csr_matrix(membership.T.astype(np.float64)), 1, np.inf),
        integrality=np.ones(count),
        bounds=Bounds(0, 1),
        options={"time_limit": deadline.remaining(), "node_limit": nodes, "mip_rel_gap": 0.0},
    )
    timed_out = deadline.expired()
    if result.x is not None:
        found = np.flatnonzero(result.x > 0.5).astype(np.int64)
        if found.size < best.size and first_uncovered(membership[found]) < 0:
            best = found
    if result.status == 0:
        return SolverResult(best, int(best.size), int(best.size), nodes)
    bound = lower
    dual = getattr(result, "mip_dual_bound", None)
    if dual is not None and np.isfinite(dual):
        bound = max(bound, math.ceil(dual - 1e-6))
    bound = min(bound, int(best.size))
    stopped = "" if bound == best.size else "deadline" if timed_out else "budget"
    return SolverResult(best, int(best.size), bound, nodes, stopped)


def _cp_sat_cover(
    membership: np.ndarray, effort: float, best: np.ndarray, lower: int, deadline: Deadline
) -> SolverResult[np.ndarray]:
    """:func:`exact_cover` for large instances: CP-SAT (one worker, fixed seed) hinted with
    ``best``, within ``effort`` nominal seconds of deterministic time; ``lower`` is a known bound.
    ``work`` counts deterministic milliseconds."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    chosen = [model.new_bool_var(f"x{j}") for j in range(membership.shape[0])]
    for element in range(membership.shape[1]):
        model.add_bool_or([chosen[j] for j in np.flatnonzero(membership[:, element]).tolist()])
    model.add(sum(chosen) <= int(best.size))
    model.minimize(sum(chosen))
    hinted = set(best.tolist())
    for j, variable in enumerate(chosen):
        model.add_hint(variable, j in hinted)
    solver = cp_sat_solver(effort * CP_SAT_DETERMINISTIC_PER_SECOND, deadline)
    status = solver.solve(model)
    work = int(solver.deterministic_time * 1000)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        found = np.array(
            [j for j, variable in enumerate(chosen) if solver.boolean_value(variable)], np.int64
        )
        if found.size < best.size and first_uncovered(membership[found]) < 0:
            best = found
    if status == cp_model.OPTIMAL:
        return SolverResult(best, int(best.size), int(best.size), work)
    if status == cp_model.FEASIBLE:
        lower = max(lower, math.ceil(solver.best_objective_bound - 1e-6))
    bound = min(lower, int(best.size))
    stopped = "" if bound == best.size else "deadline" if deadline.expired() else "budget"
    return SolverResult(best, int(best.size), bound, work, stopped)
