"""TSP reference solvers on a symmetric integer distance matrix.

- :func:`heuristic_tour`: multi-start nearest neighbour, each start improved by 2-opt and Or-opt
  until neither finds an improving move (numba).
- :func:`held_karp`: exact dynamic programme, O(2^n n^2), for small instances and tests.
- :func:`branch_and_cut`: exact integer programme with degree constraints and subtour
  elimination cuts, separated on LP relaxations (connected components, then a global minimum
  cut) and then added lazily to the integer programme until its optimum is a single tour. Solved
  with HiGHS through ``scipy.optimize.milp`` (OR-Tools' bundled HiGHS clashes with ``highspy``).

Tours are permutations of ``0..n-1`` (int64 arrays) without the closing city.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from npgym.heuristics._numba import njit

HELD_KARP_MAX_CITIES = 16


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
def two_opt(dist: np.ndarray, tour: np.ndarray) -> bool:
    """Apply improving 2-opt moves (segment reversals) in place until none is left."""
    n = tour.shape[0]
    improved_any = False
    improved = True
    while improved:
        improved = False
        for i in range(n - 1):
            a, b = tour[i], tour[i + 1]
            for j in range(i + 2, n if i > 0 else n - 1):
                c, e = tour[j], tour[(j + 1) % n]
                delta = dist[a, c] + dist[b, e] - dist[a, b] - dist[c, e]
                if delta < 0:
                    tour[i + 1 : j + 1] = tour[i + 1 : j + 1][::-1].copy()
                    a, b = tour[i], tour[i + 1]
                    improved = improved_any = True
    return improved_any


@njit
def or_opt(dist: np.ndarray, tour: np.ndarray) -> bool:
    """Move segments of 1-3 consecutive cities elsewhere (either way round) while it helps."""
    n = tour.shape[0]
    improved_any = False
    improved = True
    while improved:
        improved = False
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
                        improved = improved_any = True
                        break
                if improved:
                    break
            if improved:
                break
    return improved_any


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
def local_search(dist: np.ndarray, tour: np.ndarray) -> None:
    """Alternate 2-opt and Or-opt in place until neither improves the tour."""
    while True:
        two_opt(dist, tour)
        if not or_opt(dist, tour):
            return


def heuristic_tour(dist: np.ndarray, max_starts: int = 32) -> tuple[np.ndarray, int]:
    """Best tour over nearest-neighbour starts from cities ``0..max_starts-1`` after local search.

    Deterministic: ties keep the earliest start.
    """
    dist = np.ascontiguousarray(dist, dtype=np.int64)
    n = dist.shape[0]
    if n <= 3:
        tour = np.arange(n, dtype=np.int64)
        return tour, int(tour_length(dist, tour)) if n else 0
    best_tour, best_length = np.empty(0, np.int64), -1
    for start in range(min(n, max_starts)):
        tour = nearest_neighbour(dist, start)
        local_search(dist, tour)
        length = int(tour_length(dist, tour))
        if best_length < 0 or length < best_length:
            best_tour, best_length = tour, length
    return best_tour, best_length


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


@dataclass(frozen=True)
class ExactResult:
    """Outcome of :func:`branch_and_cut`: the best tour and what was proven about it."""

    tour: np.ndarray
    length: int
    proven_optimal: bool
    lower_bound: int


class _SubtourModel:
    """Edge variables ``x_ij`` (i < j), degree-2 rows and a growing pool of subtour cuts."""

    def __init__(self, dist: np.ndarray) -> None:
        from scipy.optimize import LinearConstraint  # scipy loads when an exact solve needs it
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

    def add_cut(self, cities: list[int] | np.ndarray) -> bool:
        """Add ``sum x(E(S)) <= |S| - 1`` for the city set S (smaller side); False if known."""
        members = np.zeros(self.n, np.bool_)
        members[np.asarray(cities, dtype=np.int64)] = True
        if members.sum() * 2 > self.n:
            members = ~members
        if members.sum() < 2:
            return False
        key = np.packbits(members).tobytes()
        if key in self._seen:
            return False
        self._seen.add(key)
        self.cuts.append(members)
        return True

    def solve(self, integral: bool, time_limit: float) -> tuple[np.ndarray | None, float, bool]:
        """Solve the relaxation; return (x, lower bound, solved to optimality)."""
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
            bounds=Bounds(0, 1),
            options={"time_limit": max(time_limit, 0.01)},
        )
        if result.status == 0:
            return result.x, float(result.fun), True
        bound = getattr(result, "mip_dual_bound", None)
        return result.x, float(bound) if bound is not None else -np.inf, False

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


def branch_and_cut(
    dist: np.ndarray, time_limit: float = 60.0, incumbent: np.ndarray | None = None
) -> ExactResult:
    """Prove the optimal tour (or report the best bound found within ``time_limit`` seconds).

    ``incumbent`` (a tour, e.g. from :func:`heuristic_tour`) is returned when it is proven
    optimal by the relaxation's bound, which often ends the search before any integer solve.
    """
    dist = np.ascontiguousarray(dist, dtype=np.int64)
    n = dist.shape[0]
    if incumbent is None:
        incumbent, _ = heuristic_tour(dist)
    best_tour = np.asarray(incumbent, dtype=np.int64)
    best_length = int(tour_length(dist, best_tour))
    if n <= 3:
        return ExactResult(best_tour, best_length, True, best_length)
    deadline = time.monotonic() + time_limit
    model = _SubtourModel(dist)
    lower_bound = 0

    # Phase 1: cutting planes on the LP relaxation.
    while time.monotonic() < deadline:
        x, bound, solved = model.solve(False, deadline - time.monotonic())
        if not solved or x is None:
            break
        lower_bound = max(lower_bound, int(np.ceil(bound - 1e-6)))
        if lower_bound >= best_length:
            return ExactResult(best_tour, best_length, True, best_length)
        support = np.flatnonzero(x > 1e-6)
        parts = model.components(support)
        if len(parts) > 1:
            added = [model.add_cut(part) for part in parts]
        else:
            import networkx as nx

            graph = nx.Graph()
            for edge in support:
                graph.add_edge(int(model.tail[edge]), int(model.head[edge]), weight=float(x[edge]))
            cut_value, (side, _) = nx.stoer_wagner(graph)
            added = [cut_value < 2 - 1e-6 and model.add_cut(side)]
        if not any(added):
            break

    # Phase 2: integer programme, adding the subtours of its optimum until it is one tour.
    while time.monotonic() < deadline:
        x, bound, solved = model.solve(True, deadline - time.monotonic())
        lower_bound = max(lower_bound, int(np.ceil(bound - 1e-6)))
        if not solved or x is None:
            break
        parts = model.components(np.flatnonzero(x > 0.5))
        if len(parts) == 1:
            tour = model.tour_from(x)
            length = int(tour_length(dist, tour))
            if length < best_length:
                best_tour, best_length = tour, length
            return ExactResult(best_tour, best_length, True, best_length)
        for part in parts:
            model.add_cut(part)
    return ExactResult(
        best_tour, best_length, lower_bound >= best_length, min(lower_bound, best_length)
    )
