"""Longest-cycle reference solvers on an undirected graph (boolean adjacency matrix).

Every cycle of a graph lies inside one of its blocks (biconnected components), so the solvers work
block by block, largest first, and the size of the largest block is a first upper bound.
:func:`separator_bound` turns a vertex set whose removal leaves many components into another.

- :func:`heuristic_cycle`: Posa rotation-extension on each block (numba): grow a path greedily
  (Warnsdorff's rule), rotate it when stuck, re-open it when it closes into a cycle that misses
  vertices, and record the longest cycle that any path state closes. Deterministic (own seeded
  generator).
- :func:`exact_cycle`: CP-SAT circuit model per block, each vertex optional (a self-loop skips it),
  maximising the visited vertices and asked only for cycles longer than the best known; one
  worker, a fixed seed and a budget in CP-SAT's deterministic time, so the same graph gives the
  same answer on every run and every machine.
- :func:`longest_cycle_dp`: exact bitmask dynamic programme for small graphs and tests.
- :func:`certify_cycle`: the proof of an upper bound that :mod:`npgym.certificates.
  hamiltonian_cycle` checks: cuts at cut vertices down to the blocks, each block bounded by the
  better of its size, a given separator and the complement of a large independent set. It does
  not take CP-SAT's word: where these bounds fall short of CP-SAT's optimum, the reference is
  reported unproven with the certified bound.

Cycles are int64 arrays of distinct vertices without the closing vertex.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from npgym.heuristics.budget import CP_SAT_DETERMINISTIC_PER_SECOND, Deadline, cp_sat_solver
from npgym.heuristics.jit import njit
from npgym.heuristics.result import SolverResult

DP_MAX_VERTICES = 18
_RANDOM_MODULUS = 2147483648  # 2**31: a linear congruential generator that numba runs exactly


def blocks(adjacency: np.ndarray) -> list[np.ndarray]:
    """Vertex sets of the blocks that can hold a cycle (3+ vertices), largest first.

    Ties are ordered by their smallest vertex, so the order does not depend on networkx internals.
    """
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(range(adjacency.shape[0]))
    first, second = np.nonzero(np.triu(adjacency))
    graph.add_edges_from(zip(first.tolist(), second.tolist(), strict=True))
    found = [np.array(sorted(block), dtype=np.int64) for block in nx.biconnected_components(graph)]
    found = [block for block in found if block.size >= 3]
    return sorted(found, key=lambda block: (-block.size, int(block[0])))


def cycle_bound(adjacency: np.ndarray) -> int:
    """Upper bound on the longest cycle: the size of the largest block (0 for a forest)."""
    found = blocks(adjacency)
    return int(found[0].size) if found else 0


def separator_bound(adjacency: np.ndarray, separator: np.ndarray) -> int:
    """Upper bound on the longest cycle from any vertex set S (a certificate, checked here).

    A cycle that avoids S lies in one component of G - S. One that meets S at k vertices falls
    into k arcs between them, each inside one component, so it visits at most k <= |S|
    components. Hence no cycle is longer than the larger of the largest component and |S| plus
    the |S| largest components together.
    """
    import networkx as nx

    n = adjacency.shape[0]
    inside = np.ones(n, dtype=np.bool_)
    inside[np.asarray(separator, dtype=np.int64)] = False
    kept = np.flatnonzero(inside)
    graph = nx.Graph()
    graph.add_nodes_from(kept.tolist())
    first, second = np.nonzero(np.triu(adjacency[np.ix_(kept, kept)]))
    graph.add_edges_from(zip(kept[first].tolist(), kept[second].tolist(), strict=True))
    sizes = sorted((len(part) for part in nx.connected_components(graph)), reverse=True)
    hubs = n - kept.size
    through_hubs = hubs + sum(sizes[:hubs]) if hubs else 0
    return min(n, max(sizes[0] if sizes else 0, through_hubs))


@njit
def _next_random(state: int) -> int:
    return (state * 1103515245 + 12345) % _RANDOM_MODULUS


@njit
def _posa(
    adjacency: np.ndarray, members: np.ndarray, target: int, steps: int, patience: int, seed: int
) -> np.ndarray:
    """Longest cycle found by rotation-extension inside the block ``members`` (numba).

    Runs ``steps`` moves in all and starts a new path whenever ``patience`` moves in a row did not
    lengthen the current one; stops early at a cycle of ``target`` vertices.
    """
    n = adjacency.shape[0]
    size = members.shape[0]
    neighbours = np.full((n, size), -1, np.int64)
    degree = np.zeros(n, np.int64)
    for u in members:
        for v in members:
            if adjacency[u, v]:
                neighbours[u, degree[u]] = v
                degree[u] += 1
    best = np.empty(0, np.int64)
    state = seed % _RANDOM_MODULUS
    path = np.empty(size, np.int64)
    position = np.full(n, -1, np.int64)
    free_degree = np.zeros(n, np.int64)
    length, stalled = 0, patience
    for _ in range(steps):
        if stalled >= patience:
            for index in range(length):
                position[path[index]] = -1
            for vertex in members:
                free_degree[vertex] = degree[vertex]
            state = _next_random(state)
            start = members[state % size]
            path[0] = start
            position[start] = 0
            length, stalled = 1, 0
            for k in range(degree[start]):
                free_degree[neighbours[start, k]] -= 1
        stalled += 1
        end = path[length - 1]
        # The longest cycle closed by an edge from the end back into the path.
        first = length
        for k in range(degree[end]):
            at = position[neighbours[end, k]]
            if 0 <= at < first:
                first = at
        if first <= length - 3 and length - first > best.shape[0]:
            best = path[first:length].copy()
            if best.shape[0] >= target:
                return best
        # Extension: the free neighbour with the fewest free neighbours (Warnsdorff's rule).
        chosen, chosen_free, ties = -1, 0, 0
        for k in range(degree[end]):
            candidate = neighbours[end, k]
            if position[candidate] >= 0:
                continue
            if chosen < 0 or free_degree[candidate] < chosen_free:
                chosen, chosen_free, ties = candidate, free_degree[candidate], 1
            elif free_degree[candidate] == chosen_free:
                ties += 1
                state = _next_random(state)
                if state % ties == 0:
                    chosen = candidate
        if chosen < 0 and first == 0 and length >= 3:
            # The path closes into a cycle: re-open it next to a vertex outside it.
            for at in range(length):
                for k in range(degree[path[at]]):
                    if position[neighbours[path[at], k]] < 0:
                        chosen = neighbours[path[at], k]
                        break
                if chosen >= 0:
                    path[:length] = np.concatenate((path[at + 1 : length], path[: at + 1]))
                    for index in range(length):
                        position[path[index]] = index
                    break
        if chosen >= 0:
            path[length] = chosen
            position[chosen] = length
            length += 1
            stalled = 0
            for k in range(degree[chosen]):
                free_degree[neighbours[chosen, k]] -= 1
            continue
        # Rotation: the edge from the end to path[at] makes path[at + 1] the new end. Now and
        # then (or when no rotation exists) turn the path round to work on its other end.
        options = 0
        for k in range(degree[end]):
            if 0 <= position[neighbours[end, k]] <= length - 3:
                options += 1
        state = _next_random(state)
        if options == 0 or state % 8 == 0:
            path[:length] = path[:length][::-1].copy()
            for index in range(length):
                position[path[index]] = index
            continue
        state = _next_random(state)
        pick = state % options
        for k in range(degree[end]):
            at = position[neighbours[end, k]]
            if 0 <= at <= length - 3:
                if pick == 0:
                    path[at + 1 : length] = path[at + 1 : length][::-1].copy()
                    for index in range(at + 1, length):
                        position[path[index]] = index
                    break
                pick -= 1
    return best


def heuristic_cycle(adjacency: np.ndarray, effort: int = 50, seed: int = 0) -> np.ndarray:
    """Longest cycle found by rotation-extension, block by block (empty for a forest).

    A block of b vertices gets ``effort * b * b`` moves at most, with a fresh path after ``4 * b``
    moves without progress.
    """
    adjacency = np.ascontiguousarray(adjacency, dtype=np.bool_)
    best = np.empty(0, np.int64)
    for block in blocks(adjacency):
        if block.size <= best.size:
            break
        steps = effort * block.size * block.size
        found = _posa(adjacency, block, block.size, steps, 4 * block.size, seed)
        if found.size > best.size:
            best = found
    return best


def exact_cycle(
    adjacency: np.ndarray,
    effort: float = 60.0,
    incumbent: np.ndarray | None = None,
    deadline: Deadline | None = None,
) -> SolverResult[np.ndarray]:
    """Prove the longest cycle within ``effort`` nominal seconds of CP-SAT deterministic time
    (:data:`~npgym.heuristics.budget.CP_SAT_DETERMINISTIC_PER_SECOND`, shared by the blocks,
    largest first), or report the best cycle and an upper bound.

    ``incumbent`` (a cycle, e.g. from :func:`heuristic_cycle`) is kept unless a longer cycle
    exists; blocks no larger than the incumbent are never searched. ``deadline`` is the
    wall-clock safety net. ``work`` counts CP-SAT deterministic milliseconds.
    """
    from ortools.sat.python import cp_model

    adjacency = np.ascontiguousarray(adjacency, dtype=np.bool_)
    best = np.empty(0, np.int64) if incumbent is None else np.asarray(incumbent, dtype=np.int64)
    deadline = deadline or Deadline.for_effort(effort)
    allowance = max(effort, 0.0) * CP_SAT_DETERMINISTIC_PER_SECOND
    upper_bound, spent, stopped = best.size, 0.0, ""
    for block in blocks(adjacency):
        if block.size <= best.size:
            break
        if spent >= allowance or deadline.expired():
            upper_bound = max(upper_bound, int(block.size))
            stopped = stopped or ("deadline" if deadline.fired else "budget")
            continue
        status, cycle, bound, used = _solve_block(
            adjacency, block, max(best.size + 1, 3), allowance - spent, deadline
        )
        spent += used
        if cycle.size > best.size:
            best = cycle
        if status != cp_model.OPTIMAL and status != cp_model.INFEASIBLE:
            upper_bound = max(upper_bound, bound)
            stopped = stopped or ("deadline" if deadline.expired() else "budget")
    upper_bound = max(upper_bound, best.size)
    stopped = "" if upper_bound == best.size else stopped
    return SolverResult(best, int(best.size), int(upper_bound), int(spent * 1000), stopped)


def _solve_block(
    adjacency: np.ndarray, block: np.ndarray, at_least: int, allowance: float, deadline: Deadline
) -> tuple[int, np.ndarray, int, float]:
    """Longest cycle of at least ``at_least`` vertices inside ``block``:
    (status, cycle, bound, deterministic seconds used)."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    size = block.size
    skip = [model.new_bool_var(f"skip{v}") for v in range(size)]
    arcs: list[tuple[int, int, cp_model.IntVar]] = [(v, v, skip[v]) for v in range(size)]
    incident: list[list[cp_model.IntVar]] = [[] for _ in range(size)]
    sub = adjacency[np.ix_(block, block)]
    for u, v in zip(*np.nonzero(np.triu(sub)), strict=True):
        forward, backward = model.new_bool_var(f"a{u}_{v}"), model.new_bool_var(f"a{v}_{u}")
        model.add_at_most_one(forward, backward)
        arcs += [(int(u), int(v), forward), (int(v), int(u), backward)]
        incident[u] += [forward, backward]
        incident[v] += [forward, backward]
    model.add_circuit(arcs)
    for v in range(size):
        model.add(sum(incident[v]) == 2 - 2 * skip[v])
    visited = size - sum(skip)
    model.add(visited >= at_least)
    model.maximize(visited)
    solver = cp_sat_solver(allowance, deadline)
    status = solver.solve(model)
    used = float(solver.deterministic_time)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        bound = at_least - 1 if status == cp_model.INFEASIBLE else size
        return status, np.empty(0, np.int64), bound, used
    successor = {u: v for u, v, literal in arcs if u != v and solver.boolean_value(literal)}
    order = [min(successor)]
    while successor[order[-1]] != order[0]:
        order.append(successor[order[-1]])
    bound = min(size, int(solver.best_objective_bound + 1e-6))
    return status, block[np.array(order, dtype=np.int64)], bound, used


@njit
def _dp_longest(adjacency: np.ndarray) -> np.ndarray:
    """Longest cycle: for each start, which (vertex set, end) paths exist, with back-pointers."""
    n = adjacency.shape[0]
    best_length, best_start, best_mask, best_end = 0, -1, 0, -1
    best_cycle = np.empty(0, np.int64)
    parent = np.full((1 << n, n), -1, np.int64)
    for start in range(n):
        # Paths from ``start`` through higher vertices only: each cycle is found from its minimum.
        parent[:, :] = -1
        parent[1 << start, start] = start
        for higher in range(1 << (n - start - 1)):
            mask = (higher << (start + 1)) | (1 << start)
            for end in range(start, n):
                if parent[mask, end] < 0:
                    continue
                count = 0
                for bit in range(n):
                    count += (mask >> bit) & 1
                if count >= 3 and adjacency[end, start] and count > best_length:
                    best_length, best_start, best_mask, best_end = count, start, mask, end
                for nxt in range(start + 1, n):
                    grown = mask | (1 << nxt)
                    if adjacency[end, nxt] and grown != mask and parent[grown, nxt] < 0:
                        parent[grown, nxt] = end
        if best_start == start:
            cycle = np.empty(best_length, np.int64)
            mask, end = best_mask, best_end
            for index in range(best_length - 1, -1, -1):
                cycle[index] = end
                previous = parent[mask, end]
                mask &= ~(1 << end)
                end = previous
            best_cycle = cycle
    return best_cycle


def longest_cycle_dp(adjacency: np.ndarray) -> np.ndarray:
    """Exact longest cycle by dynamic programming over vertex subsets (``n <= DP_MAX_VERTICES``)."""
    adjacency = np.ascontiguousarray(adjacency, dtype=np.bool_)
    n = adjacency.shape[0]
    if n > DP_MAX_VERTICES:
        raise ValueError(f"longest_cycle_dp handles at most {DP_MAX_VERTICES} vertices, got {n}")
    return _dp_longest(adjacency)


def canonical_cycle(cycle: np.ndarray) -> list[int]:
    """The closed cycle from its smallest vertex back to it, the smaller neighbour second."""
    order = [int(vertex) for vertex in cycle]
    start = order.index(min(order))
    order = order[start:] + order[:start]
    if len(order) > 2 and order[-1] < order[1]:
        order = [order[0], *order[:0:-1]]
    return [*order, order[0]]


CERTIFIED_TREE_MAX_WORK = 10_000_000
"""The checker's limit on ``nodes * (n + 2 * edges)`` (:data:`npgym.certificates.
hamiltonian_cycle.TREE_MAX_WORK`); a larger tree is given up for the trivial bound n."""


SEPARATOR_EVALUATIONS = 4_000
"""Most separator bounds :func:`search_separator` evaluates per block (each a components count
of the block: about 0.1 ms at 50 vertices)."""
SEPARATOR_TRIES = 30
"""Vertex orders per component size in :func:`search_separator`'s greedy phase."""
SEPARATOR_MAX_PART = 6
"""Largest component size that :func:`search_separator`'s greedy keeps."""


def _separator_value(adjacency: np.ndarray, chosen: np.ndarray) -> int:
    """:func:`separator_bound` of the vertex mask ``chosen`` (scipy's components: fast)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    kept = np.flatnonzero(~chosen)
    hubs = int(chosen.sum())
    if kept.size == 0:
        return hubs  # every vertex a hub: the bound n
    _, labels = connected_components(csr_matrix(adjacency[np.ix_(kept, kept)]), directed=False)
    sizes = np.sort(np.bincount(labels))[::-1]
    through = hubs + int(sizes[:hubs].sum()) if hubs else 0
    return min(adjacency.shape[0], max(int(sizes[0]), through))


def _kept_parts(adjacency: np.ndarray, order: np.ndarray, largest: int) -> np.ndarray:
    """The separator (a mask) left by keeping vertices in ``order`` while every kept component
    stays within ``largest`` vertices (``largest`` 1: a maximal independent set kept)."""
    part = np.full(adjacency.shape[0], -1, np.int64)
    members: dict[int, list[int]] = {}
    for label, vertex in enumerate(order.tolist()):
        joined = {int(part[u]) for u in np.flatnonzero(adjacency[vertex]) if part[u] >= 0}
        if 1 + sum(len(members[other]) for other in joined) > largest:
            continue
        merged = [vertex, *(u for other in joined for u in members.pop(other))]
        part[merged] = label
        members[label] = merged
    return part < 0


def search_separator(adjacency: np.ndarray, target: int) -> tuple[int, np.ndarray]:
    """A vertex set whose :func:`separator_bound` is as low as found (stopping at ``target``),
    with that bound. Greedy: keep vertices (fewest neighbours first, ties in seeded random
    orders) while the kept components stay small, for each size up to
    :data:`SEPARATOR_MAX_PART`; then the best found improved by single-vertex moves, within
    :data:`SEPARATOR_EVALUATIONS` evaluations. Deterministic."""
    n = adjacency.shape[0]
    rng = np.random.default_rng(0)
    degree = adjacency.sum(axis=1)
    best, chosen = n, np.zeros(n, np.bool_)
    evaluations = 0
    for largest in range(1, min(SEPARATOR_MAX_PART, n - 1) + 1):
        for attempt in range(SEPARATOR_TRIES if n > largest + 2 else 1):
            ties = rng.permutation(n) if attempt else np.arange(n)
            candidate = _kept_parts(adjacency, np.lexsort((ties, degree)), largest)
            value = _separator_value(adjacency, candidate)
            evaluations += 1
            if value < best:
                best, chosen = value, candidate
            if best <= target:
                return best, np.flatnonzero(chosen)
    improved = True
    while improved and best > target and evaluations < SEPARATOR_EVALUATIONS:
        improved = False
        for vertex in range(n):
            chosen[vertex] = not chosen[vertex]
            value = _separator_value(adjacency, chosen)
            evaluations += 1
            if value < best:
                best, improved = value, True
            else:
                chosen[vertex] = not chosen[vertex]
            if best <= target or evaluations >= SEPARATOR_EVALUATIONS:
                break
    return best, np.flatnonzero(chosen)


def _leaf_separator(
    adjacency: np.ndarray,
    within: np.ndarray,
    length: int,
    separators: list[np.ndarray],
    search: bool,
) -> tuple[int, list[int]]:
    """The best separator of the block ``within``, with its bound: the empty one, or (when
    ``search`` and that bound exceeds ``length``) each of ``separators`` (its part inside the
    block), the complement of a large independent set
    (:func:`npgym.heuristics.cliques.heuristic_clique` on the complement graph) and
    :func:`search_separator`'s."""
    from npgym.heuristics.cliques import complement, heuristic_clique

    sub = adjacency[np.ix_(within, within)]
    best: tuple[int, list[int]] = (separator_bound(sub, np.empty(0, np.int64)), [])
    if best[0] <= length or not search:
        return best
    local = np.arange(within.size)
    candidates = [np.flatnonzero(np.isin(within, separator)) for separator in separators]
    candidates.append(np.setdiff1d(local, heuristic_clique(complement(sub))))
    for candidate in candidates:
        found = separator_bound(sub, candidate)
        if found < best[0]:
            best = (found, sorted(within[candidate].tolist()))
    if best[0] > length:
        candidate = search_separator(sub, length)[1]
        found = separator_bound(sub, candidate)
        if found < best[0]:
            best = (found, sorted(within[candidate].tolist()))
    return best


def certify_cycle(
    adjacency: np.ndarray,
    length: int,
    separators: tuple[np.ndarray, ...] = (),
    search: bool = True,
) -> tuple[int, dict[str, Any]]:
    """A certified upper bound on the longest cycle and its certificate (``"tree"``,
    :mod:`npgym.certificates.hamiltonian_cycle`).

    Cuts at the smallest cut vertex of each vertex set until the blocks are left, in the
    checker's order (children by their smallest vertex, components of one vertex dropped); a
    block larger than ``length`` gets the best separator of :func:`_leaf_separator` when
    ``search``, else none (the block bound). ``separators`` are vertex sets to try (e.g. the
    instance's recorded one).
    """
    import networkx as nx

    adjacency = np.ascontiguousarray(adjacency, dtype=np.bool_)
    n = adjacency.shape[0]
    graph = nx.from_numpy_array(adjacency.astype(np.int8))
    pending = [np.arange(n)]
    tree: list[list[Any]] = []
    best = 0
    while pending:
        within = pending.pop()
        sub = graph.subgraph(within.tolist())
        cuts = sorted(nx.articulation_points(sub))
        if cuts:
            cut = cuts[0]
            rest = sub.subgraph(set(sub) - {cut})
            parts = sorted((sorted(part) for part in nx.connected_components(rest)), key=min)
            tree.append(["cut", cut])
            pending += reversed(
                [np.array(sorted([*part, cut]), np.int64) for part in parts if len(part) >= 2]
            )
            continue
        leaf, separator = _leaf_separator(adjacency, within, length, list(separators), search)
        tree.append(["separator", separator])
        best = max(best, leaf)
    if len(tree) * (n + 2 * int(np.count_nonzero(np.triu(adjacency)))) > CERTIFIED_TREE_MAX_WORK:
        return n, {"kind": "trivial"}
    return best, {"kind": "tree", "tree": tree}
