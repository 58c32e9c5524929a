"""SetCover reference solvers on a boolean membership matrix (``membership[j, e]``: subset j
holds element e).

- :func:`greedy_cover`: the classic greedy (most newly covered elements, lowest index on ties),
  then redundant subsets dropped, last chosen first.
- :func:`exact_cover`: the integer programme ``min sum x_j`` s.t. every element is covered,
  solved with HiGHS through ``scipy.optimize.milp`` (OR-Tools' bundled HiGHS clashes with
  ``highspy``). HiGHS is deterministic, so the same instance gives the same cover unless the
  time limit is hit; a greedy cover that is already optimal is kept as the witness.

Covers are sorted int64 arrays of subset indices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


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


@dataclass(frozen=True)
class ExactResult:
    """Outcome of :func:`exact_cover`: the best cover and what was proven about it."""

    cover: np.ndarray
    size: int
    proven_optimal: bool
    lower_bound: int


def exact_cover(
    membership: np.ndarray, time_limit: float = 60.0, incumbent: np.ndarray | None = None
) -> ExactResult:
    """Minimum cover by integer programming (or the best found within ``time_limit`` seconds).

    ``incumbent`` (a cover, e.g. from :func:`greedy_cover`) is returned when no smaller cover
    exists, so the witness does not depend on the solver when the greedy cover is optimal.
    The subsets must cover the universe.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp  # loaded when an exact solve runs
    from scipy.sparse import csr_matrix

    membership = np.asarray(membership, dtype=np.bool_)
    if incumbent is None:
        incumbent = greedy_cover(membership)
    best = np.asarray(incumbent, dtype=np.int64)
    count = membership.shape[0]
    result = milp(
        np.ones(count),
        constraints=LinearConstraint(csr_matrix(membership.T.astype(np.float64)), 1, np.inf),
        integrality=np.ones(count),
        bounds=Bounds(0, 1),
        options={"time_limit": max(time_limit, 0.01), "mip_rel_gap": 0.0},
    )
    if result.x is not None:
        found = np.flatnonzero(result.x > 0.5).astype(np.int64)
        if found.size < best.size and first_uncovered(membership[found]) < 0:
            best = found
    if result.status == 0:
        return ExactResult(best, int(best.size), True, int(best.size))
    dual = getattr(result, "mip_dual_bound", None)
    bound = size_bound(membership)
    if dual is not None and np.isfinite(dual):
        bound = max(bound, math.ceil(dual - 1e-6))
    bound = min(bound, int(best.size))
    return ExactResult(best, int(best.size), bound == best.size, bound)
