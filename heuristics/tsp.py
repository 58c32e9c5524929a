"""TSP reference solvers on a symmetric integer distance matrix.

- :func:`heuristic_tour`: multi-start nearest neighbour, each start improved by 2-opt and Or-opt
  until neither finds an improving move, within a budget of matrix passes (numba).
- :func:`held_karp`: exact dynamic programme, O(2^n n^2), for small instances and tests.
- :func:`one_tree_bound`: the Held-Karp 1-tree lower bound, its vertex penalties tuned by
  subgradient optimisation for a fixed number of iterations (numba): close to the subtour LP's
  bound at a fraction of its cost, and affordable for thousands of cities.
- :func:`improved_tour`: iterated 2-opt + Or-opt on near-neighbour candidate lists with
  fixed-seed segment-swap kicks (numba), the tour of references above the published sizes.
- :func:`certified_branch_and_cut`: above :data:`PUBLISHED_MAX_CITIES`, the subtour LP in one
  persistent ``highspy`` model (rows and priced columns added per round, warm-started), its
  bound recomputed by npgym from the duals in integers: the proof. Where the subtour LP has an
  integrality gap, :func:`_certified_tree` branches on the certified LP (edges fixed out, then
  in, every leaf with its own duals or combinatorially infeasible); HiGHS's integer programme
  may still find a shorter tour and report it optimal, but that report proves nothing here: the
  reference stays unproven, its bound npgym's own, and ``solver`` says what HiGHS claimed.
- :func:`certify_tour`: the same certified search below a given tour, which it never changes:
  the proof of the published sizes' references (a ``subtour-dual`` certificate that
  :mod:`npgym.certificates.tsp` checks, built by :func:`tree_certificate`).
- :func:`branch_and_cut` (:func:`highs_branch_and_cut` up to the published sizes, unchanged so
  that NP-Bench rebuilds byte for byte, then :func:`certify_tour` for the proof, HiGHS's word
  being no proof): exact integer programme with degree constraints and
  subtour elimination cuts, separated on LP relaxations (connected components, then a global minimum
  cut) and then added lazily to the integer programme until its optimum is a single tour. Solved
  with HiGHS through ``scipy.optimize.milp`` (OR-Tools' bundled HiGHS clashes with ``highspy``),
  within a work budget of LP columns solved and branch-and-bound nodes, so that the same matrix
  gives the same result on every machine. Above :data:`LP_MAX_CITIES` only the 1-tree bound is
  computed.

Tours are permutations of ``0..n-1`` (int64 arrays) without the closing city.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from npgym.heuristics.budget import Deadline, work_units
from npgym.heuristics.jit import njit
from npgym.heuristics.result import SolverResult

HELD_KARP_MAX_CITIES = 16
PASS_CELLS_PER_SECOND = 20_000_000
"""Local-search work per nominal second: matrix cells scanned (a 2-opt pass scans n * n)."""
LP_COLUMNS_PER_SECOND = 20_000
"""Branch and cut work per nominal second: LP columns (edges) of the relaxations solved, an
integer solve counting its columns once per branch-and-bound node."""
ONE_TREE_CELLS_PER_SECOND = 200_000_000
"""1-tree bound work per nominal second: matrix cells scanned (one iteration scans n * n)."""
ONE_TREE_ITERATIONS = 1000
"""Subgradient iterations of the 1-tree bound when the budget allows (its quality levels off)."""
PUBLISHED_MAX_CITIES = 55
"""The largest published tier (benchmark, 45-55 cities): up to this size the references keep the
multi-start tour of :func:`heuristic_tour` with which NP-Bench v1 and v2 were built (same bytes);
above it the task starts from :func:`improved_tour`."""
ILS_NEIGHBOURS = 10
"""Candidate cities per city in the iterated local search (its nearest, by distance)."""
ILS_SEGMENT = 30
"""Longest segment that an iterated-local-search kick moves."""
ILS_KICKS_PER_CITY = 100
"""Kicks of the iterated local search per city when the budget allows. Measured on uniform
instances (difficulty 1.0-2.0): 300 reach within 0.2% of LKH-3 but cost 2 CPU-s at 500 cities
and triple the references at 70-110 cities; the reduced-cost-guided second search and the
integer programme close what fewer kicks leave."""
ILS_CELLS_PER_SECOND = 30_000_000
"""Iterated local search work per nominal second: a kick counts ``n`` cells (its tour copy)."""
ILS_SOLVER = "iterated 2-opt+or-opt"
BRANCH_AND_CUT_SOLVER = "branch-and-cut (HiGHS)"
ONE_TREE_SOLVER = "Held-Karp 1-tree bound"
CERTIFIED_SOLVER = "subtour cutting planes (HiGHS LP, npgym dual bound)"
CERTIFIED_TREE_SOLVER = "branching on the certified LP"
HIGHS_CLAIM = "HiGHS's integer programme calls it optimal (unproven: npgym's bound stands)"
"""Said by a reference that HiGHS's branch and bound calls optimal and npgym's dual bound does
not prove: it stays unproven."""
CERTIFICATE_MAX_BYTES = 6 * 1024 * 1024
"""Largest certificate a certified search writes (its JSON text, estimated at 12 bytes a
number), below the checker's 8 MiB: past it the tree stops growing and its open nodes keep
their parents' bounds."""
LP_MAX_CITIES = 600
"""Largest instance given to the LP relaxation (n (n - 1) / 2 columns); beyond it the 1-tree
bound alone certifies the heuristic tour."""


@njit
def tour_length(dist: np.ndarray, tour: np.ndarray) -> int:
    """Length of the closed tour ``tour`` (a permutation, closing edge included)."""
    total = 0
    n = tour.shape[0]
    for i in range(n):
        total += dist[tour[i], tour[(i + 1) % n]]
    return total


@njit
def nearest_neighbour(dist: np.ndarray, start: int) -> np.ndarray:
    """Greedy tour from ``start``: always go to the closest unvisited city (lowest id on ties)."""
    n = dist.shape[0]
    tour = np.empty(n, np.int64)
    visited = np.zeros(n, np.bool_)
    tour[0] = start
    visited[start] = True
    for position in range(1, n):
        current = tour[position - 1]
        best, best_distance = -1, 0
        for city in range(n):
            if not visited[city] and (best < 0 or dist[current, city] < best_distance):
                best, best_distance = city, dist[current, city]
        tour[position] = best
        visited[best] = True
    return tour


@njit
def two_opt(dist: np.ndarray, tour: np.ndarray, max_passes: int) -> tuple[bool, int]:
    """Apply improving 2-opt moves (segment reversals) in place until none is left or
    ``max_passes`` sweeps are done; return (improved, sweeps used)."""
    return _repeat(dist, tour, max_passes, move_segments=False)


@njit
def or_opt(dist: np.ndarray, tour: np.ndarray, max_passes: int) -> tuple[bool, int]:
    """Move segments of 1-3 consecutive cities elsewhere (either way round) while it helps, for
    at most ``max_passes`` scans (each up to three sweeps); return (improved, scans used)."""
    return _repeat(dist, tour, max_passes, move_segments=True)


@njit
def _repeat(
    dist: np.ndarray, tour: np.ndarray, max_passes: int, move_segments: bool
) -> tuple[bool, int]:
    """Run 2-opt sweeps (Or-opt scans with ``move_segments``) until one finds nothing to improve or
    ``max_passes`` have run; return (improved, passes run)."""
    improved_any = False
    passes = 0
    while passes < max_passes:
        passes += 1
        if not (_or_opt_scan(dist, tour) if move_segments else _two_opt_sweep(dist, tour)):
            break
        improved_any = True
    return improved_any, passes


@njit
def _two_opt_sweep(dist: np.ndarray, tour: np.ndarray) -> bool:
    """One sweep of improving segment reversals, in place; whether it made any."""
    n = tour.shape[0]
    improved = False
    for i in range(n - 1):
        a, b = tour[i], tour[i + 1]
        for j in range(i + 2, n if i > 0 else n - 1):
            c, e = tour[j], tour[(j + 1) % n]
            delta = dist[a, c] + dist[b, e] - dist[a, b] - dist[c, e]
            if delta < 0:
                tour[i + 1 : j + 1] = tour[i + 1 : j + 1][::-1].copy()
                a, b = tour[i], tour[i + 1]
                improved = True
    return improved


@njit
def _or_opt_scan(dist: np.ndarray, tour: np.ndarray) -> bool:
    """Make the first improving segment move found (shortest segments first), in place; whether
    there was one."""
    n = tour.shape[0]
    for length in range(1, 4):
        if length >= n - 2:
            break
        for start in range(n):
            first = tour[start]
            last = tour[(start + length - 1) % n]
            before = tour[(start - 1) % n]
            after = tour[(start + length) % n]
            removal_gain = dist[before, first] + dist[last, after] - dist[before, after]
            for offset in range(length, n - 1):
                p = tour[(start + offset) % n]
                q = tour[(start + offset + 1) % n]
                base = dist[p, q] - removal_gain
                forward = dist[p, first] + dist[last, q] + base
                backward = dist[p, last] + dist[first, q] + base
                if forward < 0 or backward < 0:
                    _move_segment(tour, start, length, offset, backward < forward)
                    return True
    return False


@njit
def _move_segment(tour: np.ndarray, start: int, length: int, offset: int, reverse: bool) -> None:
    """Re-insert ``tour[start:start+length]`` (cyclically) after the city ``offset`` ahead."""
    n = tour.shape[0]
    segment = np.empty(length, np.int64)
    for k in range(length):
        segment[k] = tour[(start + k) % n]
    if reverse:
        segment = segment[::-1].copy()
    rest = np.empty(n - length, np.int64)
    for k in range(n - length):
        rest[k] = tour[(start + length + k) % n]
    insert_after = offset - length  # position in ``rest`` of the city the segment follows
    position = 0
    for k in range(n - length):
        tour[position] = rest[k]
        position += 1
        if k == insert_after:
            for city in segment:
                tour[position] = city
                position += 1


@njit
def local_search(dist: np.ndarray, tour: np.ndarray, max_passes: int) -> int:
    """Alternate 2-opt and Or-opt in place until neither improves the tour or ``max_passes``
    sweeps are spent (an Or-opt scan counts three); return the sweeps used."""
    used = 0
    while used < max_passes:
        used += two_opt(dist, tour, max_passes - used)[1]
        if used >= max_passes:
            break
        improved, scans = or_opt(dist, tour, max(1, (max_passes - used) // 3))
        used += 3 * scans
        if not improved:
            break
    return used


def heuristic_tour(
    dist: np.ndarray, max_starts: int = 32, effort: float = 60.0
) -> tuple[np.ndarray, int]:
    """Best tour over nearest-neighbour starts from cities ``0..max_starts-1`` after local search.

    Deterministic: ties keep the earliest start. ``effort`` nominal seconds
    (:data:`PASS_CELLS_PER_SECOND`) cap the sweeps of the matrix over all starts: a start costs
    one for its construction plus its local search, and none begins once the budget is spent
    (the first always runs), so large instances get fewer starts, never a timeout.
    """
    dist = np.ascontiguousarray(dist, dtype=np.int64)
    n = dist.shape[0]
    if n <= 3:
        tour = np.arange(n, dtype=np.int64)
        return tour, int(tour_length(dist, tour)) if n else 0
    passes = work_units(effort, PASS_CELLS_PER_SECOND) // (n * n)
    best_tour, best_length = np.empty(0, np.int64), -1
    for start in range(min(n, max_starts)):
        if start and passes < 2:
            break
        tour = nearest_neighbour(dist, start)
        passes -= 1 + local_search(dist, tour, max(passes - 1, 1))
        length = int(tour_length(dist, tour))
        if best_length < 0 or length < best_length:
            best_tour, best_length = tour, length
    return best_tour, best_length


@njit
def _reverse(tour: np.ndarray, pos: np.ndarray, i: int, j: int) -> None:
    """Reverse the cyclic path from position ``i`` forward to ``j`` (or, the same tour read the
    other way, its complement when that is shorter), keeping ``pos`` the inverse of ``tour``."""
    n = tour.shape[0]
    length = (j - i) % n + 1
    if 2 * length > n:
        i, j = (j + 1) % n, (i - 1) % n
        length = n - length
    for _ in range(length // 2):
        a, b = tour[i], tour[j]
        tour[i], pos[b] = b, i
        tour[j], pos[a] = a, j
        i = (i + 1) % n
        j = (j - 1) % n


@njit
def _move(
    tour: np.ndarray,
    pos: np.ndarray,
    first: int,
    length: int,
    after: int,
    reverse: bool,
    scratch: np.ndarray,
) -> None:
    """Move the ``length`` cities from city ``first`` on to follow city ``after`` (reversed when
    ``reverse``), shifting the cities in between back."""
    n = tour.shape[0]
    start = pos[first]
    for k in range(length):
        scratch[k] = tour[(start + k) % n]
    position = start
    at = (start + length) % n
    while True:
        city = tour[at]
        tour[position] = city
        pos[city] = position
        position = (position + 1) % n
        if city == after:
            break
        at = (at + 1) % n
    for k in range(length):
        city = scratch[length - 1 - k] if reverse else scratch[k]
        tour[position] = city
        pos[city] = position
        position = (position + 1) % n


@njit
def _improve_city(
    dist: np.ndarray,
    neighbours: np.ndarray,
    tour: np.ndarray,
    pos: np.ndarray,
    a: int,
    scratch: np.ndarray,
    active: np.ndarray,
) -> bool:
    """Apply the first improving move around city ``a``: a 2-opt move adding an edge from ``a``
    to a near neighbour (either tour direction), else an Or-opt move of the 1-3 cities from ``a``
    on next to a near neighbour of either end. The cities whose edges changed become active."""
    n = tour.shape[0]
    for direction in range(2):
        pa = pos[a]
        b = tour[(pa + 1) % n] if direction == 0 else tour[(pa - 1) % n]
        dab = dist[a, b]
        for c in neighbours[a]:
            gain1 = dab - dist[a, c]
            if gain1 <= 0:
                continue
            pc = pos[c]
            d = tour[(pc + 1) % n] if direction == 0 else tour[(pc - 1) % n]
            if c == b or d == a:
                continue
            if gain1 + dist[c, d] - dist[b, d] > 0:
                if direction == 0:
                    _reverse(tour, pos, (pa + 1) % n, pc)
                else:
                    _reverse(tour, pos, pa, (pc - 1) % n)
                active[a] = active[b] = active[c] = active[d] = True
                return True
    for length in range(1, 4):
        if length + 2 >= n:
            break
        pa = pos[a]
        last = tour[(pa + length - 1) % n]
        p = tour[(pa - 1) % n]
        q = tour[(pa + length) % n]
        removal = dist[p, a] + dist[last, q] - dist[p, q]
        if removal <= 0:
            continue
        for end in range(2):
            s = a if end == 0 else last
            for c in neighbours[s]:
                offset = (pos[c] - pa) % n
                if offset < length:
                    continue
                for side in range(2):
                    e = tour[(pos[c] + 1) % n] if side == 0 else tour[(pos[c] - 1) % n]
                    if (pos[e] - pa) % n < length:
                        continue
                    if side == 0:
                        x, y = c, e
                    else:
                        x, y = e, c
                    forward = dist[x, a] + dist[last, y]
                    backward = dist[x, last] + dist[a, y]
                    add = min(forward, backward) - dist[x, y]
                    if add < removal:
                        _move(tour, pos, a, length, x, backward < forward, scratch)
                        active[a] = active[last] = active[p] = active[q] = True
                        active[x] = active[y] = True
                        return True
    return False


@njit
def _local_search(
    dist: np.ndarray,
    neighbours: np.ndarray,
    tour: np.ndarray,
    pos: np.ndarray,
    active: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """Improve around active cities until none is left (don't-look bits); return the moves."""
    n = tour.shape[0]
    moves = 0
    changed = True
    while changed:
        changed = False
        for a in range(n):
            while active[a]:
                if _improve_city(dist, neighbours, tour, pos, a, scratch, active):
                    moves += 1
                    changed = True
                else:
                    active[a] = False
    return moves


@njit
def _iterated_local_search(
    dist: np.ndarray, neighbours: np.ndarray, tour: np.ndarray, draws: np.ndarray
) -> tuple[np.ndarray, int]:
    """Local search, then one kick per row of ``draws`` (random integers): swap two adjacent
    segments of at most :data:`ILS_SEGMENT` cities (a local double bridge), search again around
    the changed edges, and keep the result unless it is longer than the best tour."""
    n = tour.shape[0]
    pos = np.empty(n, np.int64)
    for i in range(n):
        pos[tour[i]] = i
    active = np.ones(n, np.bool_)
    scratch = np.empty(n, np.int64)
    _local_search(dist, neighbours, tour, pos, active, scratch)
    best = tour.copy()
    best_len = tour_length(dist, tour)
    window = min(n - 1, ILS_SEGMENT)
    current = tour.copy()
    cur_pos = pos.copy()
    for k in range(draws.shape[0]):
        start = draws[k, 0] % n
        l1 = 1 + draws[k, 1] % window
        l2 = 1 + draws[k, 2] % window
        if l1 + l2 + 1 >= n:
            continue
        for j in range(l1 + l2):
            scratch[j] = current[(start + 1 + j) % n]
        for j in range(l2):
            city = scratch[l1 + j]
            current[(start + 1 + j) % n] = city
            cur_pos[city] = (start + 1 + j) % n
        for j in range(l1):
            city = scratch[j]
            current[(start + 1 + l2 + j) % n] = city
            cur_pos[city] = (start + 1 + l2 + j) % n
        for j in (start, start + l2, start + l1 + l2):
            active[current[j % n]] = active[current[(j + 1) % n]] = True
        _local_search(dist, neighbours, current, cur_pos, active, scratch)
        length = tour_length(dist, current)
        if length <= best_len:
            best_len = length
            best[:] = current
        else:
            current[:] = best
            for i in range(n):
                cur_pos[current[i]] = i
    return best, best_len


def improved_tour(
    dist: np.ndarray,
    start: np.ndarray,
    effort: float = 60.0,
    seed: int = 0,
    closeness: np.ndarray | None = None,
) -> tuple[np.ndarray, int]:
    """``start`` improved by iterated 2-opt + Or-opt on the :data:`ILS_NEIGHBOURS` closest
    cities of each city (by ``closeness``, default the distances; the subtour LP's reduced costs
    make better candidates): at most :data:`ILS_KICKS_PER_CITY` kicks per city and ``effort``
    nominal seconds of them (:data:`ILS_CELLS_PER_SECOND`, a kick costing ``n`` cells), from the
    fixed random stream ``seed``; so the same matrix gives the same tour on every machine."""
    dist = np.ascontiguousarray(dist, dtype=np.int64)
    n = dist.shape[0]
    tour = np.array(start, dtype=np.int64)
    if n < 5:
        return tour, int(tour_length(dist, tour))
    kicks = min(ILS_KICKS_PER_CITY * n, work_units(effort, ILS_CELLS_PER_SECOND) // n)
    order = dist if closeness is None else np.asarray(closeness, dtype=np.int64)
    barrier = np.where(np.eye(n, dtype=np.bool_), np.iinfo(np.int64).max, order)
    neighbours = np.argsort(barrier, axis=1, kind="stable")[:, : min(ILS_NEIGHBOURS, n - 1)]
    draws = np.random.default_rng(seed).integers(0, 2**62, size=(kicks, 3))
    best, length = _iterated_local_search(dist, neighbours.astype(np.int64), tour, draws)
    return best, int(length)


@njit
def _held_karp_table(dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = dist.shape[0]
    size = 1 << (n - 1)
    infinity = np.iinfo(np.int64).max // 4
    cost = np.full((size, n - 1), infinity, np.int64)
    parent = np.full((size, n - 1), -1, np.int64)
    for city in range(n - 1):
        cost[1 << city, city] = dist[n - 1, city]
    for subset in range(1, size):
        for last in range(n - 1):
            if not (subset >> last) & 1 or cost[subset, last] >= infinity:
                continue
            for nxt in range(n - 1):
                if (subset >> nxt) & 1:
                    continue
                extended = subset | (1 << nxt)
                candidate = cost[subset, last] + dist[last, nxt]
                if candidate < cost[extended, nxt]:
                    cost[extended, nxt] = candidate
                    parent[extended, nxt] = last
    return cost, parent


def held_karp(dist: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact optimal tour by dynamic programming (``n <= HELD_KARP_MAX_CITIES``)."""
    dist = np.ascontiguousarray(dist, dtype=np.int64)
    n = dist.shape[0]
    if n > HELD_KARP_MAX_CITIES:
        raise ValueError(f"held_karp handles at most {HELD_KARP_MAX_CITIES} cities, got {n}")
    if n <= 3:
        return heuristic_tour(dist)
    cost, parent = _held_karp_table(dist)
    full = (1 << (n - 1)) - 1
    closing = cost[full] + dist[: n - 1, n - 1]
    last = int(np.argmin(closing))
    length = int(closing[last])
    tour = [n - 1]
    subset = full
    while last >= 0:
        tour.append(last)
        last, subset = int(parent[subset, last]), subset & ~(1 << last)
    return np.array(tour, dtype=np.int64), length


def canonical_tour(tour: np.ndarray) -> list[int]:
    """The closed tour as a list from city 0 back to 0, its second city the smaller neighbour."""
    order = [int(city) for city in tour]
    start = order.index(0)
    order = order[start:] + order[:start]
    if len(order) > 2 and order[-1] < order[1]:
        order = [0, *order[:0:-1]]
    return [*order, 0]


@njit
def _one_tree(dist: np.ndarray, penalty: np.ndarray, degree: np.ndarray) -> float:
    """Cost of a minimum 1-tree under ``dist[i, j] + penalty[i] + penalty[j]`` (a spanning tree
    on cities 1..n-1 by Prim's algorithm, plus city 0's two cheapest edges), with each city's
    degree written to ``degree``."""
    n = dist.shape[0]
    in_tree = np.zeros(n, np.bool_)
    key = np.full(n, np.inf)
    parent = np.full(n, -1, np.int64)
    degree[:] = 0
    total = 0.0
    key[1] = 0.0
    for _ in range(n - 1):
        city, smallest = -1, np.inf
        for other in range(1, n):
            if not in_tree[other] and key[other] < smallest:
                city, smallest = other, key[other]
        in_tree[city] = True
        total += smallest
        if parent[city] >= 0:
            degree[city] += 1
            degree[parent[city]] += 1
        for other in range(1, n):
            if not in_tree[other]:
                cost = dist[city, other] + penalty[city] + penalty[other]
                if cost < key[other]:
                    key[other], parent[other] = cost, city
    first, second = -1, -1
    for other in range(1, n):
        cost = dist[0, other] + penalty[0] + penalty[other]
        if first < 0 or cost < dist[0, first] + penalty[0] + penalty[first]:
            first, second = other, first
        elif second < 0 or cost < dist[0, second] + penalty[0] + penalty[second]:
            second = other
    total += dist[0, first] + dist[0, second] + 2 * penalty[0] + penalty[first] + penalty[second]
    degree[0] = 2
    degree[first] += 1
    degree[second] += 1
    return total


@njit
def _subgradient(dist: np.ndarray, upper: float, iterations: int) -> float:
    """Best Held-Karp bound ``1-tree(penalty) - 2 * sum(penalty)`` over ``iterations`` steps of
    subgradient ascent (Held, Wolfe and Crowder's step rule, halved after 20 steps without
    progress)."""
    n = dist.shape[0]
    penalty = np.zeros(n)
    degree = np.zeros(n, np.int64)
    best = -np.inf
    scale, stale = 2.0, 0
    for _ in range(iterations):
        value = _one_tree(dist, penalty, degree) - 2.0 * penalty.sum()
        if value > best + 1e-9:
            best, stale = value, 0
        else:
            stale += 1
            if stale >= 20:
                scale, stale = scale / 2.0, 0
        norm = 0.0
        for city in range(n):
            norm += (degree[city] - 2) ** 2
        if norm == 0 or scale < 1e-6:
            break
        step = scale * (upper - value) / norm
        for city in range(n):
            penalty[city] += step * (degree[city] - 2)
    return best


def one_tree_bound(dist: np.ndarray, upper: int, effort: float = 60.0) -> int:
    """Held-Karp lower bound on the optimal tour, rounded up: at most :data:`ONE_TREE_ITERATIONS`
    subgradient steps and at most ``effort`` nominal seconds of them
    (:data:`ONE_TREE_CELLS_PER_SECOND`). ``upper`` (a tour length) scales the steps."""
    dist = np.ascontiguousarray(dist, dtype=np.int64)
    n = dist.shape[0]
    if n <= 3:
        return int(upper)
    iterations = min(ONE_TREE_ITERATIONS, work_units(effort, ONE_TREE_CELLS_PER_SECOND) // (n * n))
    value = _subgradient(dist.astype(np.float64), float(upper), max(iterations, 1))
    if not math.isfinite(value):
        return 0
    return min(int(upper), max(0, math.ceil(value - 1e-6 * max(1.0, abs(value)))))


def new_cut(members: np.ndarray, seen: set[bytes]) -> np.ndarray | None:
    """The subtour cut of a city mask as its smaller side (a copy), recorded in ``seen``; None
    when that side has fewer than two cities or the cut is already in ``seen``."""
    smaller = ~members if members.sum() * 2 > members.size else members.copy()
    if smaller.sum() < 2:
        return None
    key = np.packbits(smaller).tobytes()
    if key in seen:
        return None
    seen.add(key)
    return smaller


class _SubtourModel:
    """Edge variables ``x_ij`` (i < j), degree-2 rows and a growing pool of subtour cuts."""

    def __init__(self, dist: np.ndarray) -> None:
        from scipy.optimize import LinearConstraint
        from scipy.sparse import csr_matrix

        self.n = n = dist.shape[0]
        self.tail, self.head = np.triu_indices(n, 1)
        self.costs = dist[self.tail, self.head].astype(np.float64)
        edges = np.arange(self.tail.size)
        degree = csr_matrix(
            (np.ones(2 * edges.size), (np.concatenate([self.tail, self.head]), np.tile(edges, 2))),
            shape=(n, edges.size),
        )
        self.degree_rows = LinearConstraint(degree, 2, 2)
        self.cuts: list[np.ndarray] = []
        self._seen: set[bytes] = set()
        self.upper = np.ones(self.costs.size)  # 0 for an edge ruled out

    def add_cut(self, cities: list[int] | np.ndarray) -> bool:
        """Add ``sum x(E(S)) <= |S| - 1`` for the city set S (smaller side); False if known."""
        members = np.zeros(self.n, np.bool_)
        members[np.asarray(cities, dtype=np.int64)] = True
        cut = new_cut(members, self._seen)
        if cut is None:
            return False
        self.cuts.append(cut)
        return True

    def solve(
        self, integral: bool, time_limit: float, node_limit: int
    ) -> tuple[np.ndarray | None, float, bool, int]:
        """Solve the relaxation; return (x, lower bound (-inf if none), solved to optimality,
        branch-and-bound nodes used (1 for an LP))."""
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import csr_matrix

        constraints = [self.degree_rows]
        if self.cuts:
            rows, columns = [], []
            for index, members in enumerate(self.cuts):
                inside = np.flatnonzero(members[self.tail] & members[self.head])
                rows.append(np.full(inside.size, index))
                columns.append(inside)
            matrix = csr_matrix(
                (
                    np.ones(sum(c.size for c in columns)),
                    (np.concatenate(rows), np.concatenate(columns)),
                ),
                shape=(len(self.cuts), self.costs.size),
            )
            upper = np.array([members.sum() - 1 for members in self.cuts], dtype=np.float64)
            constraints.append(LinearConstraint(matrix, -np.inf, upper))
        result = milp(
            self.costs,
            constraints=constraints,
            integrality=np.full(self.costs.size, 1 if integral else 0),
            bounds=Bounds(0, self.upper),
            options={"time_limit": max(time_limit, 0.001), "node_limit": node_limit},
        )
        nodes = max(1, int(getattr(result, "mip_node_count", 1) or 1))
        if result.status == 0:
            return result.x, float(result.fun), True, nodes
        bound = getattr(result, "mip_dual_bound", None)
        if bound is None or not np.isfinite(bound):
            bound = -np.inf
        return result.x, float(bound), False, nodes

    def components(self, chosen: np.ndarray) -> list[list[int]]:
        """Connected components of the graph formed by the chosen edge indices."""
        import networkx as nx

        graph = nx.Graph()
        graph.add_nodes_from(range(self.n))
        graph.add_edges_from(
            zip(self.tail[chosen].tolist(), self.head[chosen].tolist(), strict=True)
        )
        return [sorted(component) for component in nx.connected_components(graph)]

    def tour_from(self, x: np.ndarray) -> np.ndarray:
        """The single cycle formed by the edges with ``x > 0.5`` as a city order."""
        neighbours: list[list[int]] = [[] for _ in range(self.n)]
        for edge in np.flatnonzero(x > 0.5):
            neighbours[self.tail[edge]].append(int(self.head[edge]))
            neighbours[self.head[edge]].append(int(self.tail[edge]))
        order, previous = [0], -1
        while len(order) < self.n:
            current = order[-1]
            step = (
                neighbours[current][0]
                if neighbours[current][0] != previous
                else neighbours[current][1]
            )
            order.append(step)
            previous = current
        return np.array(order, dtype=np.int64)


@njit
def _min_cut(weight: np.ndarray) -> tuple[float, np.ndarray]:
    """Global minimum cut of the dense symmetric ``weight`` matrix (Stoer and Wagner's maximum
    adjacency phases, O(n^3)): its value and one side as a boolean mask."""
    n = weight.shape[0]
    w = weight.copy()
    merged = np.eye(n, dtype=np.bool_)  # merged[v] = original cities inside super-vertex v
    alive = np.ones(n, np.bool_)
    best_value, best_side = np.inf, np.zeros(n, np.bool_)
    for phase in range(n - 1):
        added = np.zeros(n, np.bool_)
        key = np.zeros(n)
        previous, last = -1, -1
        for _ in range(n - phase):
            city, largest = -1, -1.0
            for v in range(n):
                if alive[v] and not added[v] and key[v] > largest:
                    city, largest = v, key[v]
            added[city] = True
            previous, last = last, city
            for v in range(n):
                if alive[v] and not added[v]:
                    key[v] += w[city, v]
        if key[last] < best_value:
            best_value, best_side = key[last], merged[last].copy()
        alive[last] = False
        merged[previous] |= merged[last]
        for v in range(n):
            w[previous, v] += w[last, v]
            w[v, previous] = w[previous, v]
        w[previous, previous] = 0.0
    return best_value, best_side


@njit
def _dual_bound(
    costs: np.ndarray,
    tail: np.ndarray,
    head: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    degree_dual: np.ndarray,
    cut_members: np.ndarray,
    cut_starts: np.ndarray,
    cut_dual: np.ndarray,
    reduced: np.ndarray,
) -> int:
    """The Lagrangian bound ``2 sum(y) + sum_S (|S| - 1) z_S + sum_e min(l_e rc_e, u_e rc_e)`` on
    every tour within the edge bounds, in integers (all values pre-scaled by the caller), with
    the reduced costs ``rc_e = c_e - y_i - y_j - sum_{S contains e} z_S`` written to
    ``reduced``. Valid for any ``y`` and any ``z <= 0``, so whatever the LP solver returned."""
    n = degree_dual.shape[0]
    total = 2 * degree_dual.sum()
    index = np.full((n, n), -1, np.int64)
    for e in range(costs.shape[0]):
        reduced[e] = costs[e] - degree_dual[tail[e]] - degree_dual[head[e]]
        index[tail[e], head[e]] = e
        index[head[e], tail[e]] = e
    for s in range(cut_dual.shape[0]):
        members = cut_members[cut_starts[s] : cut_starts[s + 1]]
        total += (members.shape[0] - 1) * cut_dual[s]
        for a in range(members.shape[0]):
            for b in range(a + 1, members.shape[0]):
                reduced[index[members[a], members[b]]] -= cut_dual[s]
    for e in range(costs.shape[0]):
        total += min(lower[e] * reduced[e], upper[e] * reduced[e])
    return total


class _CuttingPlaneLP:
    """The subtour LP in ``highspy``, kept alive across rounds: edge columns (a core of near
    neighbours, grown by pricing), degree rows, and subtour rows ``x(E(S)) <= |S| - 1`` added as
    they are separated, each re-solve warm-started from the previous basis."""

    def __init__(self, dist: np.ndarray, incumbent: np.ndarray) -> None:

        from npgym.heuristics.highs import quiet_highs

        self.n = n = dist.shape[0]
        self.tail, self.head = np.triu_indices(n, 1)
        self.costs = dist[self.tail, self.head].astype(np.int64)
        self.edge_index = np.full((n, n), -1, np.int64)
        self.edge_index[self.tail, self.head] = np.arange(self.tail.size)
        self.edge_index[self.head, self.tail] = np.arange(self.tail.size)
        self.lower = np.zeros(self.tail.size, np.int64)
        self.upper = np.ones(self.tail.size, np.int64)
        self.dist = dist
        self._fixed: list[int] = []
        self._duals: tuple[np.ndarray, np.ndarray, int, int] = (self.lower, self.lower, 1, 0)
        self.highs = quiet_highs()
        self.highs.setOptionValue("random_seed", 0)
        self.highs.setOptionValue("threads", 1)
        for _ in range(n):
            self.highs.addRow(2.0, 2.0, 0, np.empty(0, np.int32), np.empty(0))
        self.cuts: list[np.ndarray] = []
        self._seen: set[bytes] = set()
        self.columns: list[int] = []  # LP column -> edge
        self.column_of = np.full(self.tail.size, -1, np.int64)
        order = np.argsort(np.where(np.eye(n, dtype=np.bool_), np.iinfo(np.int64).max, dist), 1)
        nearest = order[:, : min(ILS_NEIGHBOURS, n - 1)]
        core = self.edge_index[np.arange(n)[:, None], nearest].ravel()
        ring = self.edge_index[incumbent, np.roll(incumbent, -1)]
        self.add_columns(np.unique(np.concatenate([core, ring])))
        self.iterations = 0

    def add_columns(self, edges: np.ndarray) -> None:
        """Add the edges as columns, with their entries in the degree and subtour rows."""
        for edge in edges.tolist():
            a, b = int(self.tail[edge]), int(self.head[edge])
            rows = [a, b] + [
                self.n + k for k, members in enumerate(self.cuts) if members[a] and members[b]
            ]
            self.highs.addCol(
                float(self.costs[edge]),
                float(self.lower[edge]),
                float(self.upper[edge]),
                len(rows),
                np.array(rows, np.int32),
                np.ones(len(rows)),
            )
            self.column_of[edge] = len(self.columns)
            self.columns.append(edge)

    def add_cut(self, members: np.ndarray) -> bool:
        """Add ``x(E(S)) <= |S| - 1`` for the smaller side S of the mask; False if known."""
        cut = new_cut(members, self._seen)
        if cut is None:
            return False
        members = cut
        self.cuts.append(members)
        edges = np.asarray(self.columns)
        inside = members[self.tail[edges]] & members[self.head[edges]]
        columns = np.flatnonzero(inside).astype(np.int32)
        self.highs.addRow(
            -math.inf, float(members.sum() - 1), columns.size, columns, np.ones(columns.size)
        )
        return True

    def solve(self) -> np.ndarray | None:
        """Re-solve; the value of every edge (0 off the core), or None when not optimal."""
        import highspy

        self.highs.run()
        self.iterations += int(self.highs.getInfo().simplex_iteration_count)
        if self.highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        x = np.zeros(self.tail.size)
        x[self.columns] = np.asarray(self.highs.getSolution().col_value)
        return x

    def certificate(self) -> tuple[int, np.ndarray, int, int]:
        """npgym's own lower bound from the current row duals (:func:`_dual_bound`, in integers
        scaled by ``self.scale``, rounded up), and the scaled reduced cost of every edge."""
        largest = int(self.costs.max(initial=1))
        scale = _dual_scale(largest, self.n, len(self.cuts))
        duals = np.asarray(self.highs.getSolution().row_dual, dtype=np.float64)
        limit = 4.0 * largest * scale
        scaled = np.clip(np.rint(duals * scale), -limit, limit).astype(np.int64)
        degree, cut = scaled[: self.n], np.minimum(scaled[self.n :], 0)
        members = [np.flatnonzero(mask) for mask in self.cuts]
        starts = np.cumsum([0] + [m.size for m in members]).astype(np.int64)
        flat = np.concatenate(members) if members else np.empty(0, np.int64)
        reduced = np.empty(self.costs.size, np.int64)
        total = _dual_bound(
            self.costs * scale,
            self.tail,
            self.head,
            self.lower,
            self.upper,
            degree,
            flat.astype(np.int64),
            starts,
            cut,
            reduced,
        )
        self._duals = (degree, cut, scale, -(-int(total) // scale))
        return -(-int(total) // scale), reduced, int(total), scale

    def leaf(self) -> Leaf:
        """The duals of the last :meth:`certificate` as a certificate leaf, in the crossing form
        ``x(delta(S)) >= 2`` at twice the scale: potentials ``2 y_v + sum_{S holds v} z_S`` and
        multipliers ``-z_S`` give exactly the same bound (the ``S`` terms cancel)."""
        degree, cut, scale, bound = self._duals
        potentials = 2 * degree
        pairs = []
        for k in np.flatnonzero(cut).tolist():
            potentials[self.cuts[k]] += cut[k]
            pairs.append([k, -int(cut[k])])
        return 2 * scale, potentials.tolist(), pairs, bound

    def fix(self, fixings: list[tuple[int, int]]) -> None:
        """Fix each ``(edge, value)`` (0 out, 1 in), freeing the edges fixed before; an edge
        fixed in that is not yet a column becomes one."""
        for edge in self._fixed:
            self.lower[edge], self.upper[edge] = 0, 1
            if self.column_of[edge] >= 0:
                self.highs.changeColBounds(int(self.column_of[edge]), 0.0, 1.0)
        for edge, value in fixings:
            self.lower[edge] = self.upper[edge] = value
            if self.column_of[edge] >= 0:
                self.highs.changeColBounds(int(self.column_of[edge]), value, value)
        missing = [edge for edge, value in fixings if value and self.column_of[edge] < 0]
        if missing:
            self.add_columns(np.array(missing, np.int64))
        self._fixed = [edge for edge, _ in fixings]


def _dual_scale(largest_cost: int, n: int, cuts: int) -> int:
    """A power of two that turns the duals into integers, at most 2^20, small enough that every
    sum in :func:`_dual_bound` stays in int64: the duals are clipped to 4 times the largest cost,
    so a reduced cost is below ``(4 cuts + 9)`` times it and the total has ``n^2`` terms."""
    room = 62 - ((4 * cuts + 9) * largest_cost).bit_length() - (n * n).bit_length()
    return 1 << max(0, min(20, room))


Leaf = tuple[int, list[int], list[list[int]], int]
"""A certified leaf: its scale, node potentials and ``[cut, multiplier]`` pairs, in the crossing
form of :mod:`npgym.certificates.tsp` (``x(delta(S)) >= 2``), and the bound they prove."""


@dataclass
class _Node:
    """What the cutting planes proved at a node: the certified bound and its ``leaf``, the last
    LP solution ``x`` (None when the LP was not solved), and the last round's scaled reduced
    costs with the scaled total and scale they come from."""

    lower: int
    leaf: Leaf | None
    x: np.ndarray | None
    reduced: np.ndarray
    total: int
    scale: int


def _cutting_planes(
    lp: _CuttingPlaneLP, length: int, budget: int, deadline: Deadline, work: int
) -> tuple[_Node, int]:
    """Subtour cutting planes with pricing on ``lp`` under its current edge bounds, until the
    certified bound reaches ``length``, nothing is left to add or the work passes ``budget``;
    return what was proven and the work (LP columns per solve plus ``n^2 / 10`` per minimum
    cut), counted from ``work`` on."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = lp.n
    node = _Node(-1, None, None, np.zeros(lp.costs.size, np.int64), 0, 1)
    while work < budget and not deadline.expired():
        x = lp.solve()
        work += len(lp.columns)
        node.x = x
        if x is None:
            break
        bound, node.reduced, node.total, node.scale = lp.certificate()
        if bound > node.lower:
            node.lower, node.leaf = bound, lp.leaf()
        if node.lower >= length:
            break
        priced = np.flatnonzero((node.reduced < 0) & (lp.column_of < 0))
        if priced.size:
            lp.add_columns(priced[np.argsort(node.reduced[priced], kind="stable")[:n]])
            continue
        support = np.flatnonzero(x > 1e-6)
        graph = coo_matrix((x[support], (lp.tail[support], lp.head[support])), shape=(n, n))
        count, labels = connected_components(graph, directed=False)
        if count > 1:
            added = [lp.add_cut(labels == label) for label in range(count)]
        else:
            weight = graph.toarray()
            value, side = _min_cut(weight + weight.T)
            work += n * n // 10
            added = [value < 2 - 1e-6 and lp.add_cut(side)]
        if not any(added):
            break
    node.lower = max(node.lower, 0)
    return node, work


def _root_cutting_planes(
    dist: np.ndarray, tour: np.ndarray, budget: int, deadline: Deadline
) -> tuple[int, _CuttingPlaneLP, _Node, int, np.ndarray]:
    """The root of :func:`_cutting_planes` on a new persistent LP; return npgym's certified
    lower bound, the LP (its cuts), the root's proof, the work spent and, from the last duals, a
    matrix of the least length that a tour through each edge can have (the bound plus the edge's
    reduced cost, certified the same way)."""
    n = dist.shape[0]
    length = int(tour_length(dist, tour))
    lp = _CuttingPlaneLP(dist, tour)
    root, work = _cutting_planes(lp, length, budget, deadline, 0)
    through = np.zeros((n, n), np.int64)
    least = -(-(root.total + np.maximum(root.reduced, 0)) // root.scale)
    through[lp.tail, lp.head] = through[lp.head, lp.tail] = least
    return root.lower, lp, root, work, through


def _infeasible_fixings(n: int, fixings: list[tuple[int, int]], lp: _CuttingPlaneLP) -> bool:
    """Whether no tour meets the edge fixings (edge, 0 or 1): a city with more than two edges
    fixed in or fewer than two not fixed out, or fixed-in edges closing a short cycle (the
    tests that :mod:`npgym.certificates.tsp` repeats for an ``infeasible`` leaf)."""
    inside = [0] * n
    out = [0] * n
    parent = list(range(n))

    def root(city: int) -> int:
        while parent[city] != city:
            city = parent[city]
        return city

    chosen = [edge for edge, value in fixings if value == 1]
    for edge, value in fixings:
        for city in (int(lp.tail[edge]), int(lp.head[edge])):
            (inside if value else out)[city] += 1
    if max(inside) > 2 or n - 1 - max(out) < 2:
        return True
    for edge in chosen:
        a, b = root(int(lp.tail[edge])), root(int(lp.head[edge]))
        if a == b:
            return len(chosen) < n
        parent[a] = b
    return False


def _branch_edge(x: np.ndarray) -> int:
    """The most fractional edge of ``x`` (lowest index on ties), or -1 when ``x`` is integral."""
    fractional = np.abs(x - np.rint(x))
    edge = int(np.argmax(fractional))
    return edge if fractional[edge] > 1e-6 else -1


def _certified_tree(
    lp: _CuttingPlaneLP,
    root: _Node,
    tour: np.ndarray,
    budget: int,
    deadline: Deadline,
    work: int,
) -> tuple[np.ndarray, int, list[Any], int]:
    """Branch and bound on the certified subtour LP below a root whose bound does not reach the
    tour: depth first, edge fixed out before in, every node's cutting planes in the same LP
    (:func:`_cutting_planes`). A node whose certified bound reaches the best tour, or whose
    fixings no tour meets, is a leaf; an integral LP optimum is a tour and, if shorter, the new
    best. Once ``budget``, the deadline or :data:`CERTIFICATE_MAX_BYTES` runs out, each open
    node becomes a leaf with its parent's duals (still a valid bound there). Return the best
    tour, its length, the tree (pre-order: ``("split", u, v)``, ``("dual", leaf)``,
    ``("infeasible",)``) and the work, counted from ``work`` on."""
    n = lp.n
    tour = np.asarray(tour, dtype=np.int64)
    length = int(tour_length(lp.dist, tour))
    tree: list[Any] = []
    size = 0
    open_nodes: list[tuple[list[tuple[int, int]], Leaf | None, _Node | None]] = [([], None, root)]
    while open_nodes:
        fixings, parent, solved = open_nodes.pop()
        exhausted = work >= budget or deadline.expired() or size > CERTIFICATE_MAX_BYTES
        if solved is None and exhausted and parent is not None:
            tree.append(("dual", parent))
            continue
        if solved is None:
            lp.fix(fixings)
            if _infeasible_fixings(n, fixings, lp):
                tree.append(("infeasible",))
                continue
            solved, work = _cutting_planes(lp, length, budget, deadline, work)
        x = solved.x
        edge = -1 if x is None or solved.lower >= length else _branch_edge(x)
        if x is not None and edge < 0 and solved.lower < length:
            found = _tour_of(lp, x)
            if found is not None and int(tour_length(lp.dist, found)) < length:
                tour, length = found, int(tour_length(lp.dist, found))
        leaf = solved.leaf if solved.leaf is not None else parent
        if leaf is None:
            raise RuntimeError("the root LP proved nothing: no tree to build")
        if edge < 0 or exhausted:
            tree.append(("dual", leaf))
            size += 12 * (n + 2 * len(leaf[2]))
            continue
        tree.append(("split", int(lp.tail[edge]), int(lp.head[edge])))
        open_nodes.append(([*fixings, (edge, 1)], leaf, None))
        open_nodes.append(([*fixings, (edge, 0)], leaf, None))
    lp.fix([])
    return tour, length, tree, work


def _tour_of(lp: _CuttingPlaneLP, x: np.ndarray) -> np.ndarray | None:
    """The tour that an integral ``x`` forms, or None when its edges are not one cycle."""
    chosen = np.flatnonzero(x > 0.5)
    if chosen.size != lp.n:
        return None
    neighbours: list[list[int]] = [[] for _ in range(lp.n)]
    for edge in chosen.tolist():
        neighbours[lp.tail[edge]].append(int(lp.head[edge]))
        neighbours[lp.head[edge]].append(int(lp.tail[edge]))
    if any(len(near) != 2 for near in neighbours):
        return None
    order, previous = [0], -1
    while len(order) < lp.n:
        near = neighbours[order[-1]]
        step = near[0] if near[0] != previous else near[1]
        if step == 0:
            return None
        previous = order[-1]
        order.append(step)
    return np.array(order, dtype=np.int64)


def tree_certificate(cuts: list[np.ndarray], tree: list[Any]) -> dict[str, Any]:
    """The ``subtour-dual`` certificate (:mod:`npgym.certificates.tsp`) of a tree from
    :func:`_certified_tree`: the leaves' duals brought to one scale (their powers of two)."""
    scale = max((node[1][0] for node in tree if node[0] == "dual"), default=1)
    nodes: list[list[Any]] = []
    for node in tree:
        if node[0] == "dual":
            factor = scale // node[1][0]
            pi = [value * factor for value in node[1][1]]
            nodes.append(["dual", pi, [[k, m * factor] for k, m in node[1][2]]])
        else:
            nodes.append(list(node))
    members = [np.flatnonzero(mask).tolist() for mask in cuts]
    return {"kind": "subtour-dual", "scale": scale, "cuts": members, "tree": nodes}


class _Certifier:
    """:func:`certify_tour` in two steps: the root LP below a first tour, then (:meth:`below`)
    the tree below the tour that is finally published, reusing the root and its cuts."""

    def __init__(
        self, dist: np.ndarray, tour: np.ndarray, effort: float, deadline: Deadline | None = None
    ) -> None:
        self.deadline = deadline or Deadline.for_effort(effort)
        self.budget = work_units(effort, LP_COLUMNS_PER_SECOND)
        self.lower, self.lp, self.root, self.work, _ = _root_cutting_planes(
            dist, tour, self.budget, self.deadline
        )

    def below(self, tour: np.ndarray) -> tuple[int, dict[str, Any] | None]:
        """The certified bound and certificate for ``tour`` (no longer than the first tour, so
        the root's cutting planes ran at least as far as it needs)."""
        if self.root.leaf is None:
            return 0, None
        if self.lower >= int(tour_length(self.lp.dist, tour)):
            return self.lower, tree_certificate(self.lp.cuts, [("dual", self.root.leaf)])
        _, _, tree, self.work = _certified_tree(
            self.lp, self.root, tour, self.budget, self.deadline, self.work
        )
        return _tree_bound(tree), tree_certificate(self.lp.cuts, tree)


def certify_tour(
    dist: np.ndarray, tour: np.ndarray, effort: float = 60.0
) -> tuple[int, dict[str, Any] | None]:
    """npgym's own certified lower bound on the optimum below ``tour`` and its certificate:
    the subtour LP's duals (:func:`_root_cutting_planes`), and where they fall short of the
    tour, :func:`_certified_tree` with ``effort`` nominal seconds of LP work. The tour is never
    changed: a shorter one found on the way only lowers the bound. (0, None) for n < 3."""
    dist = np.ascontiguousarray(dist, dtype=np.int64)
    if dist.shape[0] < 3:
        return 0, None
    return _Certifier(dist, tour, effort).below(tour)


def _tree_bound(tree: list[Any]) -> int:
    """The bound a tree proves: the least bound of its dual leaves (their own computation)."""
    return min(node[1][3] for node in tree if node[0] == "dual")


def _rounded_bound(bound: float) -> int:
    """A relaxation's objective as an integer lower bound (0 when there is none)."""
    return math.ceil(bound - 1e-6) if math.isfinite(bound) else 0


def branch_and_cut(
    dist: np.ndarray,
    effort: float = 60.0,
    incumbent: np.ndarray | None = None,
    deadline: Deadline | None = None,
) -> SolverResult[np.ndarray]:
    """Prove the optimal tour within ``effort`` nominal seconds of work, or report the best tour
    and a lower bound, with its certificate: :func:`certified_branch_and_cut` from
    :data:`PUBLISHED_MAX_CITIES` + 1 to :data:`LP_MAX_CITIES` cities, else the tour of
    :func:`highs_branch_and_cut` (as NP-Bench was built) and the bound of :func:`certify_tour`
    (none above :data:`LP_MAX_CITIES`: there the 1-tree bound has no certificate). When the
    certified root LP already proves ``incumbent`` optimal, HiGHS's search, which would return
    that same tour proven, is skipped."""
    n = np.shape(dist)[0]
    if PUBLISHED_MAX_CITIES < n <= LP_MAX_CITIES:
        return certified_branch_and_cut(dist, effort, incumbent, deadline)
    if n > LP_MAX_CITIES:
        return highs_branch_and_cut(dist, effort, incumbent, deadline)
    dist = np.ascontiguousarray(dist, dtype=np.int64)
    if incumbent is None:
        incumbent, _ = heuristic_tour(dist, effort=effort)
    tour = np.asarray(incumbent, dtype=np.int64)
    length = int(tour_length(dist, tour))
    certifier = _Certifier(dist, tour, effort, deadline)
    if certifier.lower >= length:  # HiGHS would end here too, with this very tour proven
        _, certificate = certifier.below(tour)
        return SolverResult(
            tour, length, length, certifier.work, "", BRANCH_AND_CUT_SOLVER, certificate
        )
    result = highs_branch_and_cut(dist, effort, tour, deadline)
    bound, certificate = certifier.below(result.witness)
    bound = min(bound, result.objective)
    stopped = result.stopped
    if bound < result.objective and not stopped:  # HiGHS's word is no proof: why ours fell short
        stopped = "deadline" if certifier.deadline.expired() else "budget"
    return replace(result, bound=bound, stopped=stopped, certificate=certificate)


def certified_branch_and_cut(
    dist: np.ndarray,
    effort: float = 60.0,
    incumbent: np.ndarray | None = None,
    deadline: Deadline | None = None,
) -> SolverResult[np.ndarray]:
    """A tour proven optimal by npgym's own certificate, or the best tour and that bound.

    Subtour cutting planes on a persistent HiGHS LP (:func:`_root_cutting_planes`) give a lower
    bound that npgym recomputes from the LP's duals in integers (:func:`_dual_bound`), so it holds
    whatever the LP solver returned. When it does not reach the tour, a second iterated local
    search guided by the reduced costs looks for a shorter one; then :func:`_certified_tree`
    branches on the certified LP with half the remaining budget (:data:`CERTIFIED_TREE_SOLVER`),
    the tree becoming the certificate. If that still leaves a gap, :func:`highs_branch_and_cut`
    continues from the cuts with the rest, to find a shorter tour; HiGHS's claim of optimality
    is not npgym's certificate, so the result stays unproven with npgym's bound and ``solver``
    ends in :data:`HIGHS_CLAIM`. ``incumbent`` defaults to :func:`improved_tour` from nearest
    neighbour. The result carries the ``subtour-dual`` certificate of its bound.
    """
    dist = np.ascontiguousarray(dist, dtype=np.int64)
    deadline = deadline or Deadline.for_effort(effort)
    if incumbent is None:
        incumbent, _ = improved_tour(dist, nearest_neighbour(dist, 0), effort)
    tour = np.asarray(incumbent, dtype=np.int64)
    length = int(tour_length(dist, tour))
    if dist.shape[0] <= 3:
        return SolverResult(tour, length, length, 0, "", CERTIFIED_SOLVER)
    budget = work_units(effort, LP_COLUMNS_PER_SECOND)
    certified, lp, root, work, through = _root_cutting_planes(dist, tour, budget, deadline)
    cuts = lp.cuts
    certificate = None if root.leaf is None else tree_certificate(cuts, [("dual", root.leaf)])
    solver = CERTIFIED_SOLVER
    if certified < length:  # search again with the LP's candidates (LKH's alpha-nearness idea)
        guided, _ = improved_tour(dist, tour, effort, seed=1, closeness=through)
        guided_length = int(tour_length(dist, guided))  # measured here, never taken on trust
        if guided_length < length:
            tour, length = guided, guided_length
            solver = f"{CERTIFIED_SOLVER}; tour guided by its reduced costs"
    if certified < length and root.leaf is not None:
        share = work + (budget - work) // 2  # the rest stays for HiGHS's search of a tour
        found, found_length, tree, work = _certified_tree(lp, root, tour, share, deadline, work)
        certified, certificate = _tree_bound(tree), tree_certificate(cuts, tree)
        solver = f"{solver}; {CERTIFIED_TREE_SOLVER}"
        if found_length < length:
            tour, length = found, found_length
            solver = f"{CERTIFIED_SOLVER}; tour from {CERTIFIED_TREE_SOLVER}"
    if certified < length:
        tail, head = np.triu_indices(dist.shape[0], 1)
        allowed = through[tail, head] < length  # no shorter tour uses any other edge
        search = highs_branch_and_cut(dist, effort, tour, deadline, cuts, work, allowed)
        work = search.work
        if search.objective < length:
            tour, length = search.witness, int(search.objective)
            solver = f"{CERTIFIED_SOLVER}; tour from {BRANCH_AND_CUT_SOLVER}"
        if search.proven_optimal and certified < length:  # beyond the subtour LP's reach
            solver = f"{solver}; {HIGHS_CLAIM}"
    bound = min(certified, length)
    stopped = "" if bound == length else "deadline" if deadline.expired() else "budget"
    return SolverResult(tour, length, bound, work, stopped, solver, certificate)


def highs_branch_and_cut(
    dist: np.ndarray,
    effort: float = 60.0,
    incumbent: np.ndarray | None = None,
    deadline: Deadline | None = None,
    cuts: list[np.ndarray] | None = None,
    spent: int = 0,
    allowed: np.ndarray | None = None,
) -> SolverResult[np.ndarray]:
    """Prove the optimal tour within ``effort`` nominal seconds of work, or report the best tour
    and the best lower bound (the subtour LP's or the Held-Karp 1-tree's).

    ``incumbent`` (a tour, e.g. from :func:`heuristic_tour`) is returned when a bound proves it
    optimal, which often ends the search before any integer solve. The work is counted in LP
    columns solved (:data:`LP_COLUMNS_PER_SECOND`; an integer solve gets the nodes that the rest
    of the budget pays for); ``deadline`` is the wall-clock safety net. ``work`` counts LP
    columns, from ``spent`` on; ``cuts`` (city masks) start the cut pool; ``allowed`` (a mask over
    the edges ``i < j``) rules the others out, to look only for tours shorter than the
    incumbent. Optimality rests on HiGHS's word here.
    """
    import networkx as nx

    dist = np.ascontiguousarray(dist, dtype=np.int64)
    n = dist.shape[0]
    deadline = deadline or Deadline.for_effort(effort)
    if incumbent is None:
        incumbent, _ = heuristic_tour(dist, effort=effort)
    best_tour = np.asarray(incumbent, dtype=np.int64)
    best_length = int(tour_length(dist, best_tour))
    if n <= 3:
        return SolverResult(best_tour, best_length, best_length, 0, "", BRANCH_AND_CUT_SOLVER)
    if n > LP_MAX_CITIES:
        tree_bound = one_tree_bound(dist, best_length, effort)
        proven = tree_bound >= best_length
        stopped = "" if proven else "deadline" if deadline.expired() else "budget"
        return SolverResult(best_tour, best_length, tree_bound, 0, stopped, ONE_TREE_SOLVER)
    model = _SubtourModel(dist)
    if allowed is not None:
        model.upper = np.asarray(allowed, dtype=np.float64)
    budget = work_units(effort, LP_COLUMNS_PER_SECOND)
    work, lower_bound = spent, 0
    for members in cuts or []:
        model.add_cut(np.flatnonzero(members))

    def out_of_work() -> bool:
        return work >= budget or deadline.expired()

    # Phase 1: cutting planes on the LP relaxation.
    while not out_of_work():
        x, bound, solved, _ = model.solve(False, deadline.remaining(), 1)
        work += model.costs.size
        if not solved or x is None:
            break
        lower_bound = max(lower_bound, _rounded_bound(bound))
        if lower_bound >= best_length:
            return SolverResult(
                best_tour, best_length, best_length, work, "", BRANCH_AND_CUT_SOLVER
            )
        support = np.flatnonzero(x > 1e-6)
        parts = model.components(support)
        if len(parts) > 1:
            added = [model.add_cut(part) for part in parts]
        else:
            graph = nx.Graph()
            for edge in support:
                graph.add_edge(int(model.tail[edge]), int(model.head[edge]), weight=float(x[edge]))
            cut_value, (side, _) = nx.stoer_wagner(graph)
            added = [cut_value < 2 - 1e-6 and model.add_cut(side)]
        if not any(added):
            break

    # Phase 2: integer programme, adding the subtours of its optimum until it is one tour.
    while not out_of_work():
        node_limit = max(1, (budget - work) // model.costs.size)
        x, bound, solved, nodes = model.solve(True, deadline.remaining(), node_limit)
        work += model.costs.size * nodes
        lower_bound = max(lower_bound, _rounded_bound(bound))
        if not solved or x is None:
            break
        parts = model.components(np.flatnonzero(x > 0.5))
        if len(parts) == 1:
            tour = model.tour_from(x)
            length = int(tour_length(dist, tour))
            if length < best_length:
                best_tour, best_length = tour, length
            return SolverResult(
                best_tour, best_length, best_length, work, "", BRANCH_AND_CUT_SOLVER
            )
        for part in parts:
            model.add_cut(part)
    timed_out = deadline.expired()
    solver = BRANCH_AND_CUT_SOLVER
    if lower_bound < best_length:
        tree = one_tree_bound(dist, best_length, effort)
        if tree > lower_bound:
            lower_bound, solver = tree, f"{solver}; {ONE_TREE_SOLVER}"
    lower_bound = min(lower_bound, best_length)
    stopped = "" if lower_bound == best_length else "deadline" if timed_out else "budget"
    return SolverResult(best_tour, best_length, lower_bound, work, stopped, solver)
