"""SetCover reference solvers on a boolean membership matrix (``membership[j, e]``: subset j
holds element e).

- :func:`greedy_cover`: the classic greedy (most newly covered elements, lowest index on ties),
  then redundant subsets dropped, last chosen first.
- :func:`lp_bound`: the LP relaxation's optimum, rounded up: a lower bound on the cover size.
- :func:`certify`: the proof of a lower bound that :mod:`npgym.certificates.set_cover` checks:
  the LP dual at the root, rounded to integer prices, and where its bound falls short of the
  cover size a branch and bound of its own (an LP per node, branching on a subset in or out)
  whose leaves carry their rounded duals. It proves the bound independently of HiGHS's word.
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
from dataclasses import replace
from typing import Any

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
    The subsets must cover the universe. ``work`` is the node limit given to HiGHS. The bound
    is the one :func:`certify` proves (HiGHS's word is not taken for it), with its certificate.
    """
    membership = np.asarray(membership, dtype=np.bool_)
    root = _root_leaf(membership)
    result = _search_cover(membership, effort, incumbent, deadline, root[0])
    bound, certificate = certify(membership, result.objective, root=root)
    return replace(result, bound=bound, certificate=certificate)


def _search_cover(
    membership: np.ndarray,
    effort: float,
    incumbent: np.ndarray | None,
    deadline: Deadline | None,
    lp_lower: int,
) -> SolverResult[np.ndarray]:
    """:func:`exact_cover`'s search: HiGHS's (or CP-SAT's) cover and the bound it claims;
    ``lp_lower`` is the certified root LP bound (:func:`lp_bound`'s, rounded exactly)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_matrix

    membership = np.asarray(membership, dtype=np.bool_)
    deadline = deadline or Deadline.for_effort(effort)
    if incumbent is None:
        incumbent = greedy_cover(membership)
    best = np.asarray(incumbent, dtype=np.int64)
    count = membership.shape[0]
    lower = max(size_bound(membership), lp_lower)
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


PRICE_SCALE = 1_000_000
"""Denominator of the rounded LP duals (prices) in a certificate; a leaf whose rounded prices
overrun a subset states the larger sum as its scale instead."""
CERTIFY_MAX_NODES = 1_000
"""Most LPs (tree nodes) :func:`certify` solves; past it the leaves left open keep their own
(too weak) bounds and the certificate proves less."""
CERTIFIED_TREE_MAX_WORK = 10_000_000
"""The checker's limit on ``leaves * (u + memberships)`` (:data:`npgym.certificates.set_cover.
TREE_MAX_WORK`): a larger tree is given up for the root's dual."""


def _prices_leaf(
    membership: np.ndarray, taken: np.ndarray, out: np.ndarray
) -> tuple[int | None, list[Any], np.ndarray | None]:
    """The certified leaf at a node (subsets ``taken`` in, ``out`` left out): its bound
    (``None`` when no cover is left there), its node and the LP's primal solution over all
    subsets (``None`` when it needs none)."""
    from scipy.optimize import linprog

    uncovered = ~membership[taken].any(axis=0)
    free = ~(taken | out)
    reachable = membership[free].any(axis=0)
    if (uncovered & ~reachable).any():
        return None, ["empty", int(np.flatnonzero(uncovered & ~reachable)[0])], None
    count, prices = int(taken.sum()), [0] * membership.shape[1]
    if not uncovered.any():
        return count, ["prices", 1, prices], np.zeros(membership.shape[0])
    rows = np.flatnonzero(free)
    sub = membership[np.ix_(rows, np.flatnonzero(uncovered))].astype(np.float64)
    result = linprog(np.ones(rows.size), A_ub=-sub.T, b_ub=-np.ones(sub.shape[1]), bounds=(0, None))
    if result.status != 0:
        return count, ["prices", 1, prices], None  # a zero dual: the bound |T|
    dual = np.floor(np.maximum(-result.ineqlin.marginals, 0.0) * PRICE_SCALE).astype(np.int64)
    for element, price in zip(np.flatnonzero(uncovered).tolist(), dual.tolist(), strict=True):
        prices[element] = price
    scale = max(PRICE_SCALE, int((sub.astype(np.int64) @ dual).max()))
    divisor = math.gcd(scale, *prices)
    prices = [price // divisor for price in prices]
    primal = np.zeros(membership.shape[0])
    primal[rows] = result.x
    return count - (-int(dual.sum()) // scale), ["prices", scale // divisor, prices], primal


def size_certificate(membership: np.ndarray) -> dict[str, Any]:
    """The certificate of :func:`size_bound`: every element priced 1, over the largest subset's
    size (which no subset's prices exceed)."""
    largest = int(membership.sum(axis=1).max())
    return {"kind": "dual", "tree": [["prices", largest, [1] * membership.shape[1]]]}


def _root_leaf(membership: np.ndarray) -> tuple[int, list[Any]]:
    """The root's certified LP bound and its prices node (the subsets must cover)."""
    m = membership.shape[0]
    bound, leaf, _ = _prices_leaf(membership, np.zeros(m, np.bool_), np.zeros(m, np.bool_))
    assert bound is not None  # the subsets cover the universe
    return bound, leaf


def certify(
    membership: np.ndarray,
    target: int,
    max_nodes: int = CERTIFY_MAX_NODES,
    root: tuple[int, list[Any]] | None = None,
) -> tuple[int, dict[str, Any]]:
    """A certified lower bound on the cover size, at most ``target`` where it reaches it, and
    its certificate (``"dual"``, :mod:`npgym.certificates.set_cover`).

    The root LP dual, rounded; when its bound is below ``target``, a depth-first branch and
    bound (the most fractional subset in, then out) down to leaves whose rounded duals reach
    ``target`` or that no cover reaches, within ``max_nodes`` LPs. The subsets must cover the
    universe; ``root`` is :func:`_root_leaf`'s result when the caller has it.
    """
    membership = np.asarray(membership, dtype=np.bool_)
    m = membership.shape[0]
    root_bound, root_node = _root_leaf(membership) if root is None else root
    root_certificate = {"kind": "dual", "tree": [root_node]}
    if root_bound >= target:
        return root_bound, root_certificate
    tree: list[list[Any]] = []
    bounds: list[int] = []
    stack = [(np.zeros(m, np.bool_), np.zeros(m, np.bool_))]
    solved = 0
    while stack:
        taken, out = stack.pop()
        leaf_bound, leaf, primal = _prices_leaf(membership, taken, out)
        solved += 1
        if leaf_bound is None or leaf_bound >= target or primal is None or solved > max_nodes:
            tree.append(leaf)
            bounds += [] if leaf_bound is None else [leaf_bound]
            continue
        fractional = np.abs(primal - np.round(primal))
        fractional[taken | out] = -1.0
        branch = int(np.argmax(fractional))
        if fractional[branch] < 1e-9:  # an integral LP optimum below target: no proof here
            tree.append(leaf)
            bounds.append(leaf_bound)
            continue
        tree.append(["split", branch])
        left_out, taken_in = out.copy(), taken.copy()
        left_out[branch], taken_in[branch] = True, True
        stack += [(taken, left_out), (taken_in, out)]
    leaves = len(tree) - sum(node[0] == "split" for node in tree)
    work = leaves * (membership.shape[1] + int(np.count_nonzero(membership)))
    tree_bound = min(bounds, default=target)
    if tree_bound <= root_bound or work > CERTIFIED_TREE_MAX_WORK:
        return root_bound, root_certificate
    return min(tree_bound, target), {"kind": "dual", "tree": tree}
