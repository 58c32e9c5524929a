"""MinBisection reference solvers on a symmetric integer weight matrix (0 where no edge).

A bisection is a side array: ``side[v]`` is 0 or 1 and the two sides' sizes differ by at most
one. Its cut is the total weight of the edges whose ends lie on different sides.

- :func:`heuristic_bisection`: multi-start Kernighan-Lin. Starts are greedy graph growing from
  several seed vertices plus a few random splits (fixed seed); each is refined by Kernighan-Lin
  passes until a pass gains nothing. An odd graph gets an isolated dummy vertex, so the real
  vertices split into sizes differing by exactly one (numba).
- :func:`metis_bisection` and :func:`with_metis`: METIS's bisection (through ``pymetis``, a
  fixed seed, no time limit), repaired to an exact balance by :func:`repair_balance` and refined
  by Kernighan-Lin; kept only when it cuts strictly less than the bisection at hand, so a missing
  or failing pymetis leaves the result as it was (the ``source`` says so).
- :func:`certified_bisection`: from :data:`BOUND_FIRST_VERTICES` vertices on, that cut proven
  (or bounded) by :func:`npgym.heuristics.bisection_bound.triangle_certificate` (the root's
  SDP + triangle dual bound, with its exact certificate).
- :func:`branch_and_bound`: exact depth-first branch and bound over vertex sides (numba). The
  vertex of largest weighted degree is fixed to side 0 (the sides are interchangeable), and the
  heuristic's bisection is the starting incumbent. Each node branches on the unassigned vertex
  most tied to the assigned ones, cheaper child first; its bound is the weight already cut plus,
  for the unassigned vertices, the cheapest way to place them one by one against the assigned
  vertices *with the right number on each side* (the capacity-aware independent relaxation:
  all "to side 1" costs, plus the smallest "to side 0" surcharges for the places left on side
  0). Edges between unassigned vertices are ignored, so the bound is valid. A node limit makes
  the search deterministic. The search finds the witness; the proof is the certificate of
  :func:`~npgym.heuristics.bisection_bound.triangle_certificate` with the search's cut as its
  target (the SDP bound, branching on vertex pairs where the root falls short), which
  :mod:`npgym.certificates.min_bisection` checks in integer arithmetic: a cut is proven only
  when that certificate reaches it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.heuristics.jit import njit
from npgym.heuristics.result import SolverResult

WORK_PER_SECOND = 200_000_000
"""Branch-and-bound budget per second of time limit, in vertex updates (a node of an n-vertex
graph costs about 20 n of them, so about 200,000 nodes per second at n = 50). A loaded 2-core
machine does about 4 times as much, so the node limit, not the clock, ends a long search and its
outcome does not depend on machine load."""
TRIANGLE_WORK_PER_SECOND = 8_000
"""Budget of :func:`~npgym.heuristics.bisection_bound.triangle_bound` per second of time limit,
in eigendecompositions times vertices: at the default 60 s, 2,400 eigendecompositions at
n = 200 (difficulty 1.5, where the slowest provable instances need about 2,200) and 980 at
n = 490 (difficulty 2.0, within a few units of the cut). An eigendecomposition costs n^3, so
fewer of them at larger n keep the worst reference near 30-40 CPU-s; an ascent that ends within
:data:`~npgym.heuristics.bisection_bound.EXTENSION_GAP` of the cut gets half as much again
(:data:`~npgym.heuristics.bisection_bound.EXTENSION_SHARE`): at difficulty 2.0, 3 of seeds 0-4
proven, 44.5 CPU-s median and 47.5 worst on a busy 2-core machine."""
TRIANGLE_MIN_WORK = 50
"""The least budget of the triangle bound, however short the time limit: below it the smoothing
has no room to shrink (at n = 200, 16 eigendecompositions reach 84% of the cut, 50 reach 92%)."""
BOUND_FIRST_VERTICES = 64
"""From this many vertices on, the exact reference skips the branch and bound (whose placement
bound cannot prove a cut there) and certifies the METIS and Kernighan-Lin cut with the triangle
bound alone. Every published tier is smaller, so its references are the branch and bound's."""
TRIANGLE_BOUND = "SDP + triangle inequalities dual bound (npgym's eigenvalue certificate)"
GROWTH_STARTS = 32
RANDOM_STARTS = 8
START_SEED = 0
METIS_SEED = 0
"""METIS's random seed: pinned, so its bisection is the same on every run."""
METIS_UFACTOR = 1
"""METIS's allowed imbalance in thousandths (its least); :func:`repair_balance` makes it exact."""
METIS_MIN_VERTICES = 64
"""The heuristic reference asks METIS from this many vertices on. Below, multi-start Kernighan-Lin
is as good (METIS never beat it on NP-Bench nor on 25 seeds per tier, n <= 52), and METIS's call
(0.5 ms) would make the heuristic reference slower than the exact one, whose proof takes under a
millisecond on the easy tier."""
KERNIGHAN_LIN = "multi-start Kernighan-Lin"
METIS_REFINED = "METIS (pymetis, seed 0) + exact-balance repair + Kernighan-Lin"
_INFINITY = 1 << 62


@njit
def cut_weight(weights: np.ndarray, side: np.ndarray) -> int:
    """Total weight of the edges between side 0 and side 1."""
    n = weights.shape[0]
    total = 0
    for u in range(n):
        for v in range(u + 1, n):
            if side[u] != side[v]:
                total += weights[u, v]
    return total


@njit
def greedy_growth(weights: np.ndarray, start: int, size: int) -> np.ndarray:
    """Grow side 0 from ``start`` to ``size`` vertices, always adding the vertex that lowers the
    cut most (lowest id on ties); the rest form side 1."""
    n = weights.shape[0]
    side = np.ones(n, np.int64)
    side[start] = 0
    gain = np.zeros(n, np.int64)  # weight to side 0 minus weight to side 1
    for u in range(n):
        gain[u] = 2 * weights[u, start] - weights[u].sum()
    for _ in range(size - 1):
        best = -1
        for u in range(n):
            if side[u] == 1 and (best < 0 or gain[u] > gain[best]):
                best = u
        side[best] = 0
        for u in range(n):
            gain[u] += 2 * weights[u, best]
    return side


@njit
def kernighan_lin_pass(weights: np.ndarray, side: np.ndarray) -> int:
    """One Kernighan-Lin pass: tentatively swap the best unlocked pair until all are locked,
    then keep the prefix of swaps with the largest total gain. Returns that gain (>= 0)."""
    n = weights.shape[0]
    gain = np.zeros(n, np.int64)  # external minus internal weight
    for v in range(n):
        for u in range(n):
            if side[u] != side[v]:
                gain[v] += weights[v, u]
            elif u != v:
                gain[v] -= weights[v, u]
    locked = np.zeros(n, np.bool_)
    steps = min(n - side.sum(), side.sum())
    zeros, ones = np.empty(steps, np.int64), np.empty(steps, np.int64)
    total, best_total, best_steps = 0, 0, 0
    for step in range(steps):
        best, pick_zero, pick_one = -_INFINITY, -1, -1
        for a in range(n):
            if locked[a] or side[a] != 0:
                continue
            for b in range(n):
                if not locked[b] and side[b] == 1:
                    swap_gain = gain[a] + gain[b] - 2 * weights[a, b]
                    if swap_gain > best:
                        best, pick_zero, pick_one = swap_gain, a, b
        locked[pick_zero] = locked[pick_one] = True
        zeros[step], ones[step] = pick_zero, pick_one
        total += best
        if total > best_total:
            best_total, best_steps = total, step + 1
        for v in range(n):
            if not locked[v]:
                towards = weights[v, pick_zero] - weights[v, pick_one]
                gain[v] += 2 * towards if side[v] == 0 else -2 * towards
    for step in range(best_steps):
        side[zeros[step]], side[ones[step]] = 1, 0
    return best_total


@njit
def _refine_all(weights: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, int]:
    """Kernighan-Lin from every start row; the best result (earliest on ties)."""
    best_side, best_cut = starts[0].copy(), _INFINITY
    for row in range(starts.shape[0]):
        side = starts[row].copy()
        while kernighan_lin_pass(weights, side) > 0:
            pass
        cut = cut_weight(weights, side)
        if cut < best_cut:
            best_side, best_cut = side, cut
    return best_side, best_cut


def heuristic_bisection(weights: np.ndarray) -> tuple[np.ndarray, int]:
    """Best bisection over multi-start Kernighan-Lin (deterministic); ``(side, cut)``."""
    weights = np.ascontiguousarray(weights, dtype=np.int64)
    n = weights.shape[0]
    even = n + n % 2
    padded = np.zeros((even, even), np.int64)  # an odd graph gets an isolated dummy vertex
    padded[:n, :n] = weights
    starts = [greedy_growth(padded, start, even // 2) for start in range(min(n, GROWTH_STARTS))]
    rng = np.random.default_rng(START_SEED)
    for _ in range(RANDOM_STARTS):
        side = np.zeros(even, np.int64)
        side[rng.permutation(even)[: even // 2]] = 1
        starts.append(side)
    side, cut = _refine_all(padded, np.stack(starts))
    return canonical_side(side[:n]), int(cut)


@njit
def repair_balance(weights: np.ndarray, side: np.ndarray) -> np.ndarray:
    """``side`` made a bisection: while the sides' sizes differ by more than one, move the vertex
    of the larger side whose move raises the cut least (lowest id on ties)."""
    n = weights.shape[0]
    side = side.copy()
    ones = side.sum()
    while abs(2 * ones - n) > 1:
        larger = 1 if 2 * ones > n else 0
        best, best_cost = -1, _INFINITY
        for v in range(n):
            if side[v] == larger:
                cost = 0  # weight to its own side minus weight to the other
                for u in range(n):
                    if u != v:
                        cost += weights[v, u] if side[u] == larger else -weights[v, u]
                if cost < best_cost:
                    best, best_cost = v, cost
        side[best] = 1 - larger
        ones += 1 if larger == 0 else -1
    return side


def refine(weights: np.ndarray, side: np.ndarray) -> tuple[np.ndarray, int]:
    """Any side array (any balance) made a bisection by :func:`repair_balance`, then improved by
    Kernighan-Lin passes until a pass gains nothing; ``(side, cut)``."""
    weights = np.ascontiguousarray(weights, dtype=np.int64)
    n = weights.shape[0]
    side = repair_balance(weights, np.asarray(side, dtype=np.int64))
    padded = np.zeros((n + n % 2, n + n % 2), np.int64)  # odd: an isolated dummy vertex
    padded[:n, :n] = weights
    smaller = 1 if 2 * int(side.sum()) < n else 0  # the dummy joins the smaller side
    padded_side = np.append(side, smaller) if n % 2 else side.copy()
    while kernighan_lin_pass(padded, padded_side) > 0:
        pass
    side = canonical_side(padded_side[:n])
    return side, int(cut_weight(weights, side))


def metis_bisection(weights: np.ndarray) -> tuple[np.ndarray | None, str]:
    """METIS's two-way partition as a side array (not necessarily balanced), or ``None`` with the
    reason when pymetis is not installed, raises, or returns something that is no side array."""
    n = weights.shape[0]
    try:
        import pymetis
    except ImportError:
        return None, "pymetis not installed"
    rows, columns = np.nonzero(weights)
    starts = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    try:
        _, membership = pymetis.part_graph(
            2,
            adjacency=pymetis.CSRAdjacency(starts.tolist(), columns.tolist()),
            eweights=weights[rows, columns].tolist(),
            options=pymetis.Options(seed=METIS_SEED, ufactor=METIS_UFACTOR),
        )
    except Exception as error:  # any failure of the library means: fall back
        return None, f"pymetis failed: {type(error).__name__}"
    return _side_array(membership, n)


def _side_array(membership: Any, n: int) -> tuple[np.ndarray | None, str]:
    """``membership`` as a side array, or ``None`` with the reason when it is not one."""
    try:
        side = np.asarray(membership, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return None, "pymetis returned no side array"
    if side.shape != (n,) or not np.isin(side, (0, 1)).all():
        return None, "pymetis returned no side array"
    return side, ""


def with_metis(
    weights: np.ndarray, side: np.ndarray, cut: int, source: str
) -> tuple[np.ndarray, int, str]:
    """The better of the bisection ``side`` (cutting ``cut``, found by ``source``) and METIS's
    bisection after :func:`refine`; ``side`` is kept on a tie. When METIS is unavailable,
    ``source`` says so and ``side`` is kept."""
    weights = np.ascontiguousarray(weights, dtype=np.int64)
    if weights.shape[0] < 2:
        return side, cut, source
    start, failure = metis_bisection(weights)
    if start is None:
        return side, cut, f"{source} (METIS fallback: {failure})"
    metis_side, metis_cut = refine(weights, start)
    if metis_cut < cut:
        return metis_side, metis_cut, METIS_REFINED
    return side, cut, source


def canonical_side(side: np.ndarray) -> np.ndarray:
    """The same bisection with vertex 0 on side 0."""
    side = np.asarray(side, dtype=np.int64)
    return side ^ side[0] if side.size else side


def parts(side: np.ndarray) -> list[list[int]]:
    """``[[side-0 vertices], [side-1 vertices]]``, each sorted."""
    side = np.asarray(side)
    return [np.flatnonzero(side == 0).tolist(), np.flatnonzero(side == 1).tolist()]


@njit
def _placement_bound(
    to_zero: np.ndarray,
    to_one: np.ndarray,
    assigned: np.ndarray,
    count: np.ndarray,
    buffer: np.ndarray,
) -> int:
    """Least total cost of placing every unassigned vertex independently, where placing ``v``
    on side 0 costs ``to_zero[v]`` (its weight to side 1) and on side 1 ``to_one[v]``, with
    each side ending up with ``n // 2`` or ``(n + 1) // 2`` vertices. ``_INFINITY`` if no
    placement fits."""
    n = assigned.shape[0]
    low, high = n // 2, (n + 1) // 2
    free, total = 0, 0
    for v in range(n):
        if assigned[v] < 0:
            total += to_one[v]
            buffer[free] = to_zero[v] - to_one[v]
            free += 1
    fewest = max(low - count[0], free - (high - count[1]))
    most = min(high - count[0], free - (low - count[1]))
    if fewest > most or most < 0:
        return _INFINITY
    surcharges = np.sort(buffer[:free])
    for index in range(free):
        if index < fewest or (index < most and surcharges[index] < 0):
            total += surcharges[index]
        else:
            break
    return total


@njit
def _place(weights: np.ndarray, v: int, side: int, assigned: np.ndarray, tie: np.ndarray) -> int:
    """Put ``v`` on ``side``; ``tie[s, u]`` is u's weight to side s. Returns the weight cut."""
    assigned[v] = side
    for u in range(weights.shape[0]):
        tie[side, u] += weights[u, v]
    return tie[1 - side, v]


@njit
def _unplace(weights: np.ndarray, v: int, assigned: np.ndarray, tie: np.ndarray) -> int:
    """Undo :func:`_place`; returns the weight that was cut by ``v``."""
    side = assigned[v]
    assigned[v] = -1
    for u in range(weights.shape[0]):
        tie[side, u] -= weights[u, v]
    return tie[1 - side, v]


@njit
def _search(
    weights: np.ndarray, incumbent: np.ndarray, incumbent_cut: int, node_limit: int
) -> tuple[np.ndarray, int, int, int]:
    """Depth-first branch and bound; returns (side, cut, lower bound, nodes)."""
    n = weights.shape[0]
    high = (n + 1) // 2
    best_side, best_cut = incumbent.copy(), incumbent_cut
    assigned = np.full(n, -1, np.int64)
    tie = np.zeros((2, n), np.int64)
    count = np.zeros(2, np.int64)
    buffer = np.zeros(n, np.int64)
    # One frame per branching vertex: its two children (first side, bounds), how far it got.
    vertex = np.zeros(n, np.int64)
    first = np.zeros(n, np.int64)
    bounds = np.zeros((n, 2), np.int64)
    tried = np.zeros(n, np.int64)
    applied = np.zeros(n, np.bool_)
    child = np.zeros(2, np.int64)

    degrees = weights.sum(axis=1)
    _place(weights, int(np.argmax(degrees)), 0, assigned, tie)
    count[0] = 1
    cut, top, nodes = 0, 0, 0
    expand = n > 1
    while True:
        if expand:
            # Branch on the unassigned vertex most tied to the assigned ones.
            pick, strongest = -1, -1
            for q in range(n):
                if assigned[q] < 0 and tie[0, q] + tie[1, q] > strongest:
                    pick, strongest = q, tie[0, q] + tie[1, q]
            child[:] = _INFINITY
            for side in range(2):
                if count[side] < high:
                    added = _place(weights, pick, side, assigned, tie)
                    count[side] += 1
                    child[side] = (
                        cut + added + _placement_bound(tie[1], tie[0], assigned, count, buffer)
                    )
                    count[side] -= 1
                    _unplace(weights, pick, assigned, tie)
            order = 0 if child[0] <= child[1] else 1
            vertex[top], first[top], tried[top], applied[top] = pick, order, 0, False
            bounds[top, 0], bounds[top, 1] = child[order], child[1 - order]
            expand = False
        if top < 0:
            break
        if applied[top]:
            count[assigned[vertex[top]]] -= 1
            cut -= _unplace(weights, vertex[top], assigned, tie)
            applied[top] = False
        if tried[top] == 2 or bounds[top, tried[top]] >= best_cut:
            top -= 1
            continue
        side = first[top] if tried[top] == 0 else 1 - first[top]
        tried[top] += 1
        cut += _place(weights, vertex[top], side, assigned, tie)
        count[side] += 1
        applied[top] = True
        nodes += 1
        if nodes > node_limit:
            lower = min(best_cut, bounds[top, tried[top] - 1])
            for level in range(top + 1):
                if tried[level] == 1:
                    lower = min(lower, bounds[level, 1])
            return best_side, best_cut, lower, nodes - 1
        if count[0] + count[1] == n:
            if cut < best_cut:
                best_side, best_cut = assigned.copy(), cut
            continue
        top += 1
        expand = True
    return best_side, best_cut, best_cut, nodes


def branch_and_bound(
    weights: np.ndarray,
    incumbent: np.ndarray | None = None,
    node_limit: int = 10**8,
    bound_effort: float = 60.0,
) -> SolverResult[np.ndarray]:
    """The least bisection the search finds within ``node_limit`` nodes, with the lower bound
    that the triangle bound certifies within ``bound_effort`` seconds' budget (and its
    certificate, :func:`~npgym.heuristics.bisection_bound.triangle_certificate`): proven
    optimal when the two meet.

    ``incumbent`` (a side array, e.g. from :func:`heuristic_bisection`) seeds the search; a
    bisection is only replaced by a strictly better one, so the result is deterministic. The
    search is one compiled call bounded by its node limit alone (no wall-clock check inside).
    Its own proof (or bound) is not the reference's: only a certified bound is, so the search
    serves to find the witness. ``work`` counts nodes.
    """
    weights = np.ascontiguousarray(weights, dtype=np.int64)
    if incumbent is None:
        incumbent, _ = heuristic_bisection(weights)
    incumbent = np.asarray(incumbent, dtype=np.int64)
    side, cut, _, nodes = _search(
        weights, incumbent, int(cut_weight(weights, incumbent)), int(node_limit)
    )
    from npgym.heuristics.bisection_bound import triangle_certificate  # scipy: on use

    proven, certificate = triangle_certificate(
        weights, triangle_work(bound_effort, weights.shape[0]), int(cut)
    )
    proven = min(proven, int(cut))
    return SolverResult(
        canonical_side(side),
        int(cut),
        proven,
        int(nodes),
        "" if proven == cut else "budget",
        certificate=certificate,
    )


def triangle_work(time_limit: float, n: int) -> int:
    """The triangle bound's budget, in eigendecompositions, for ``time_limit`` seconds on an
    ``n``-vertex graph."""
    return max(TRIANGLE_MIN_WORK, int(time_limit * TRIANGLE_WORK_PER_SECOND / max(n, 1)))


def certified_bisection(
    weights: np.ndarray, time_limit: float
) -> tuple[SolverResult[np.ndarray], str]:
    """Multi-start Kernighan-Lin, METIS where it cuts less, then the triangle bound on that cut
    (ending as soon as it proves it): the result and its solver's name. ``work`` counts the
    bound's eigendecompositions budget."""
    from npgym.heuristics.bisection_bound import triangle_certificate  # scipy: on use

    side, cut = heuristic_bisection(weights)
    side, cut, source = with_metis(weights, side, cut, KERNIGHAN_LIN)
    work = triangle_work(time_limit, weights.shape[0])
    lower, certificate = triangle_certificate(weights, work, cut, branch=False)
    lower = min(lower, cut)
    result = SolverResult(
        canonical_side(side),
        int(cut),
        lower,
        work,
        "" if lower == cut else "budget",
        certificate=certificate,
    )
    return result, f"{source}; bound: {TRIANGLE_BOUND}"


def node_budget(n: int, time_limit: float) -> int:
    """Deterministic node limit for ``time_limit`` seconds on an ``n``-vertex graph."""
    return max(1, int(time_limit * WORK_PER_SECOND / (20 * max(n, 1))))
