"""Maximum clique solvers on a boolean adjacency matrix (MaxClique and MaxIndependentSet).

A maximum independent set of a graph is a maximum clique of its complement
(:func:`complement`), so both tasks use the solvers here.

- :func:`heuristic_clique`: greedy construction from several start vertices (always add the
  candidate with the most candidate neighbours), each improved by a local search of additions
  and (1,2)-swaps (drop one vertex, add two) until neither applies (numba).
- :func:`color_bound`: greedy sequential colouring in smallest-last order; no clique is larger
  than the number of colours.
- :func:`exact_clique`: branch and bound with greedy colouring bounds (MCQ, Tomita and Seki
  2003) within a work budget: the search state lives in arrays, so it runs in chunks of nodes and
  looks at the wall-clock safety net in between; its result never depends on the chunking.

Cliques are returned as sorted int64 arrays of vertex ids.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from npgym.heuristics.budget import Deadline, work_units
from npgym.heuristics.jit import njit
from npgym.heuristics.result import SolverResult

CHUNK_WORK = 20_000_000
"""Branch-and-bound work units between two looks at the wall-clock safety net."""
WORK_PER_SECOND = 100_000_000
"""Branch-and-bound work units per nominal second of effort: each node costs the candidates it
scans plus candidates times colours for their greedy colouring (a node near the root of a large
graph costs millions, one near a leaf a handful)."""
HEURISTIC_WORK_PER_SECOND = 100_000_000
"""Heuristic work units (adjacency-matrix cells scanned) per nominal second of effort."""


def complement(adjacency: np.ndarray) -> np.ndarray:
    """Adjacency matrix of the complement graph (no self-loops)."""
    inverse = ~np.asarray(adjacency, dtype=np.bool_)
    np.fill_diagonal(inverse, False)
    return inverse


def _as_matrix(adjacency: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(adjacency, dtype=np.bool_)


# --- heuristic ---------------------------------------------------------------------------------


@njit
def _greedy_clique(adj: np.ndarray, start: int) -> np.ndarray:
    """Membership mask of a maximal clique grown from ``start``: repeatedly add the candidate
    with the most neighbours among the candidates (lowest id on ties)."""
    n = adj.shape[0]
    member = np.zeros(n, np.bool_)
    candidate = adj[start].copy()
    member[start] = True
    inner_degree = np.zeros(n, np.int64)
    for u in range(n):
        if candidate[u]:
            for w in range(n):
                if candidate[w] and adj[u, w]:
                    inner_degree[u] += 1
    while True:
        chosen = -1
        for u in range(n):
            if candidate[u] and (chosen < 0 or inner_degree[u] > inner_degree[chosen]):
                chosen = u
        if chosen < 0:
            return member
        member[chosen] = True
        for r in range(n):
            if candidate[r] and (r == chosen or not adj[chosen, r]):
                candidate[r] = False
                for w in range(n):
                    if candidate[w] and adj[r, w]:
                        inner_degree[w] -= 1


def greedy_clique(adjacency: np.ndarray) -> np.ndarray:
    """Sorted vertices of the clique grown greedily from a vertex of highest degree."""
    adj = _as_matrix(adjacency)
    if adj.shape[0] == 0:
        return np.empty(0, np.int64)
    start = int(np.argmax(adj.sum(axis=1)))
    return np.flatnonzero(_greedy_clique(adj, start)).astype(np.int64)


@njit
def _toggle(adj: np.ndarray, member: np.ndarray, missing: np.ndarray, v: int, add: bool) -> None:
    """Add ``v`` to (or drop it from) the clique, keeping ``missing`` up to date."""
    member[v] = add
    step = 1 if add else -1
    for u in range(adj.shape[0]):
        if u != v and not adj[u, v]:
            missing[u] += step


@njit
def local_search(adj: np.ndarray, member: np.ndarray, max_rounds: int) -> int:
    """Improve the clique mask ``member`` in place by additions and (1,2)-swaps; return the rounds
    used (at most ``max_rounds``, each a scan of the matrix).

    An outside vertex with no missing edge to the clique is added; a clique vertex v whose
    removal frees two adjacent outside vertices (each missing an edge to v only) is swapped for
    them. Every move grows the clique by one, so the search ends at a local optimum unless it
    runs out of rounds first.
    """
    n = adj.shape[0]
    missing = np.zeros(n, np.int64)  # clique members not adjacent to u
    for u in range(n):
        for v in range(n):
            if member[v] and v != u and not adj[u, v]:
                missing[u] += 1
    freed = np.empty(n, np.int64)
    rounds = 0
    while rounds < max_rounds:
        rounds += 1
        for u in range(n):
            if not member[u] and missing[u] == 0:
                _toggle(adj, member, missing, u, True)
        swapped = False
        for v in range(n):
            if not member[v]:
                continue
            count = 0
            for u in range(n):
                if not member[u] and missing[u] == 1 and not adj[u, v]:
                    freed[count] = u
                    count += 1
            for a in range(count):
                for b in range(a + 1, count):
                    if adj[freed[a], freed[b]]:
                        _toggle(adj, member, missing, v, False)
                        _toggle(adj, member, missing, freed[a], True)
                        _toggle(adj, member, missing, freed[b], True)
                        swapped = True
                        break
                if swapped:
                    break
            if swapped:
                break
        if not swapped:
            break
    return rounds


def heuristic_clique(
    adjacency: np.ndarray, max_starts: int = 64, effort: float = 60.0
) -> np.ndarray:
    """Best clique over greedy starts from the ``max_starts`` highest-degree vertices (lowest id
    first on ties), each after :func:`local_search`. Deterministic: ties keep the earliest start.

    ``effort`` (nominal seconds) caps the work in matrix scans of n * n cells: a start costs two
    scans plus one per local-search round, and no start begins once the budget is spent (the
    first always runs), so large graphs get fewer starts and shorter searches, never a timeout.
    """
    adj = _as_matrix(adjacency)
    n = adj.shape[0]
    if n == 0:
        return np.empty(0, np.int64)
    scans = work_units(effort, HEURISTIC_WORK_PER_SECOND) // (n * n)
    starts = np.argsort(-adj.sum(axis=1), kind="stable")[:max_starts]
    best = np.empty(0, np.int64)
    for index, start in enumerate(starts):
        if index and scans < 3:
            break
        member = _greedy_clique(adj, int(start))
        scans -= 2 + local_search(adj, member, max(scans - 2, 1))
        if member.sum() > best.size:
            best = np.flatnonzero(member).astype(np.int64)
    return best


def first_non_edge(adjacency: np.ndarray, vertices: Sequence[int]) -> tuple[int, int] | None:
    """The first pair of ``vertices`` (distinct ids, in list order) that is not an edge, or None
    when they form a clique."""
    members = np.asarray(vertices, dtype=np.int64)
    block = np.asarray(adjacency, dtype=np.bool_)[np.ix_(members, members)]
    first, second = np.nonzero(~(block | np.eye(members.size, dtype=np.bool_)))
    if first.size == 0:
        return None
    return int(members[first[0]]), int(members[second[0]])


def is_clique(adjacency: np.ndarray, vertices: Sequence[int] | np.ndarray) -> bool:
    """True when ``vertices`` are distinct vertex ids of the graph, pairwise adjacent: also the
    check a clique certificate (a planted one) must pass before its size is trusted."""
    n = adjacency.shape[0]
    ids = [int(vertex) for vertex in vertices]
    if len(set(ids)) != len(ids) or not all(0 <= vertex < n for vertex in ids):
        return False
    return first_non_edge(adjacency, ids) is None


# --- bounds and branch and bound ---------------------------------------------------------------


def smallest_last_order(adjacency: np.ndarray) -> np.ndarray:
    """Vertices in reverse order of repeated removal of a minimum-degree vertex (lowest id on
    ties): dense cores first. Colouring in this order uses at most degeneracy + 1 colours."""
    adj = _as_matrix(adjacency)
    degree = adj.sum(axis=1).astype(np.int64)
    removed = np.zeros(adj.shape[0], np.bool_)
    removal = []
    for _ in range(adj.shape[0]):
        vertex = int(np.argmin(np.where(removed, np.iinfo(np.int64).max, degree)))
        removal.append(vertex)
        removed[vertex] = True
        degree -= adj[vertex]
    return np.array(removal[::-1], dtype=np.int64)


@njit
def _color_sort(
    adj: np.ndarray,
    vertices: np.ndarray,
    count: int,
    out_vertices: np.ndarray,
    out_colors: np.ndarray,
    offset: int,
    head: np.ndarray,
    tail: np.ndarray,
    following: np.ndarray,
) -> int:
    """Colour ``vertices[:count]`` greedily in their order (first class without a neighbour) and
    write them class by class, with colours 1, 2, ..., to ``out_*[offset:offset + count]``.

    ``head``, ``tail`` and ``following`` are scratch space for the classes (linked lists of
    positions in ``vertices``). Returns the number of colours.
    """
    colors = 0
    for index in range(count):
        vertex = vertices[index]
        color = 0
        while color < colors:
            member = head[color]
            clash = False
            while member >= 0:
                if adj[vertex, vertices[member]]:
                    clash = True
                    break
                member = following[member]
            if not clash:
                break
            color += 1
        if color == colors:
            head[color] = index
            colors += 1
        else:
            following[tail[color]] = index
        tail[color] = index
        following[index] = -1
    position = offset
    for color in range(colors):
        member = head[color]
        while member >= 0:
            out_vertices[position] = vertices[member]
            out_colors[position] = color + 1
            position += 1
            member = following[member]
    return colors


def _root_coloring(adj: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """All vertices colour-sorted in smallest-last order: (vertices, colours, colour count)."""
    n = adj.shape[0]
    vertices, colors = np.empty(n, np.int64), np.empty(n, np.int64)
    head, tail, following = (np.empty(n, np.int64) for _ in range(3))
    count = _color_sort(
        adj, smallest_last_order(adj), n, vertices, colors, 0, head, tail, following
    )
    return vertices, colors, int(count)


def color_bound(adjacency: np.ndarray) -> int:
    """Number of colours of a greedy colouring in smallest-last order: an upper bound on the
    clique number (for the complement graph: on the independence number)."""
    adj = _as_matrix(adjacency)
    return _root_coloring(adj)[2] if adj.shape[0] else 0


@njit
def _branch(
    adj: np.ndarray,
    level_vertices: np.ndarray,
    level_colors: np.ndarray,
    level_start: np.ndarray,
    level_size: np.ndarray,
    level_next: np.ndarray,
    path: np.ndarray,
    best: np.ndarray,
    counters: np.ndarray,
    work_limit: int,
) -> bool:
    """Run the MCQ search from the state in the arrays until the work counter reaches
    ``work_limit``; True when the search space is exhausted (``best`` is then a maximum clique).

    Level d holds the candidates after choosing ``path[:d]``, colour-sorted, at
    ``level_*[level_start[d] : level_start[d] + level_size[d]]``; they are tried from the last
    (highest colour) to the first, ``level_next[d]`` being the next to try. A candidate with
    colour c cannot lead to a clique larger than d + c, which prunes it and all before it.
    ``counters`` holds the depth, the best size, the nodes explored and the work done so far
    (both cumulative, so the result does not depend on how the search is cut into calls).
    """
    n = adj.shape[0]
    depth, best_size = counters[0], counters[1]
    candidates = np.empty(n, np.int64)
    head = np.empty(n, np.int64)
    tail = np.empty(n, np.int64)
    following = np.empty(n, np.int64)
    nodes, work = 0, counters[3]
    exhausted = False
    while work < work_limit:
        base = level_start[depth]
        index = level_next[depth]
        if index < 0 or depth + level_colors[base + index] <= best_size:
            if depth == 0:
                level_next[0] = -1
                exhausted = True
                break
            depth -= 1
            continue
        vertex = level_vertices[base + index]
        level_next[depth] = index - 1
        path[depth] = vertex
        nodes += 1
        work += index + 1
        count = 0
        for j in range(index):
            other = level_vertices[base + j]
            if adj[vertex, other]:
                candidates[count] = other
                count += 1
        if count == 0:
            if depth + 1 > best_size:
                best_size = depth + 1
                best[:best_size] = path[:best_size]
            continue
        child = base + level_size[depth]
        colors = _color_sort(
            adj, candidates, count, level_vertices, level_colors, child, head, tail, following
        )
        work += count * colors
        depth += 1
        level_start[depth] = child
        level_size[depth] = count
        level_next[depth] = count - 1
    counters[0], counters[1] = depth, best_size
    counters[2] += nodes
    counters[3] = work
    return exhausted


def exact_clique(
    adjacency: np.ndarray,
    effort: float = 60.0,
    incumbent: np.ndarray | None = None,
    deadline: Deadline | None = None,
) -> SolverResult[np.ndarray]:
    """A maximum clique (sorted ids), proven by branch and bound within ``effort`` nominal seconds
    of work (:data:`WORK_PER_SECOND`); otherwise the best found and an upper bound.

    ``incumbent`` (a clique, by default :func:`heuristic_clique`'s) prunes from the start and is
    returned when nothing larger exists. ``deadline`` is the wall-clock safety net.
    ``work`` counts nodes.
    """
    adj = _as_matrix(adjacency)
    n = adj.shape[0]
    deadline = deadline or Deadline.for_effort(effort)
    clique = (
        heuristic_clique(adj, effort=effort)
        if incumbent is None
        else np.asarray(incumbent, np.int64)
    )
    if n == 0:
        return SolverResult(clique, 0, 0)
    work_budget = work_units(effort, WORK_PER_SECOND)
    root_vertices, root_colors, upper = _root_coloring(adj)
    levels = min(upper, n)  # level d follows d chosen vertices, so d < clique number <= upper
    capacity = min(n * levels, n * (n + 1) // 2)  # level sizes shrink strictly down the path
    level_vertices = np.empty(capacity, np.int64)
    level_colors = np.empty(capacity, np.int64)
    level_vertices[:n], level_colors[:n] = root_vertices, root_colors
    level_start = np.zeros(levels + 1, np.int64)
    level_size = np.zeros(levels + 1, np.int64)
    level_next = np.zeros(levels + 1, np.int64)
    level_size[0], level_next[0] = n, n - 1
    path = np.empty(levels + 1, np.int64)
    best = np.empty(n, np.int64)
    best[: clique.size] = clique
    counters = np.array([0, clique.size, 0, 0], dtype=np.int64)
    exhausted = clique.size >= upper
    while not exhausted and counters[3] < work_budget and not deadline.expired():
        exhausted = _branch(
            adj,
            level_vertices,
            level_colors,
            level_start,
            level_size,
            level_next,
            path,
            best,
            counters,
            min(int(counters[3]) + CHUNK_WORK, work_budget),
        )
    size = int(counters[1])
    # Every clique not yet seen lies in the level-0 branch being explored or an earlier one,
    # whose colours are no larger.
    unexplored = int(level_colors[min(level_next[0] + 1, n - 1)])
    bound = size if exhausted else max(size, unexplored)
    stopped = "" if bound == size else "deadline" if deadline.fired else "budget"
    return SolverResult(np.sort(best[:size]), size, bound, int(counters[2]), stopped)
