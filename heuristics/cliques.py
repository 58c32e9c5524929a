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
  looks at the wall-clock safety net in between; its result never depends on the chunking. It
  records its search tree as the certificate of its bound (:func:`coloring_classes` when the
  root colouring suffices), in the formats of :mod:`npgym.certificates.max_clique`.

Cliques are returned as sorted int64 arrays of vertex ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
MAX_TREE_ENTRIES = 1_000_000
"""Most entries (nodes) of a recorded search tree: its JSON stays under 6 MB (the checker reads
8 MiB). A larger search gives up its tree and certifies only the root colouring's bound."""
CHECK_MAX_STEPS = 30_000_000
"""The checker's step limit for a ``search`` certificate (``npgym.certificates._cliques.
MAX_STEPS``, which a test keeps equal). Checking the tree of a search that did ``work`` units
on n vertices with a root colouring of k colours costs at most ``2 work + n k + n`` steps, so a
search records its tree only while that stays within the limit (:func:`_tree_work_limit`)."""
LEAF = -1
"""The tree entry of a leaf (a node closed by the colouring of its candidates)."""


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


def coloring_classes(adjacency: np.ndarray) -> list[list[int]]:
    """The colour classes of the greedy colouring in smallest-last order: a ``coloring``
    certificate of :func:`color_bound` (for the complement graph: a clique cover)."""
    adj = _as_matrix(adjacency)
    if adj.shape[0] == 0:
        return []
    vertices, colors, count = _root_coloring(adj)
    return [vertices[colors == color].tolist() for color in range(1, count + 1)]


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
    tree: np.ndarray,
) -> bool:
    """Run the MCQ search from the state in the arrays until the work counter reaches
    ``work_limit``; True when the search space is exhausted (``best`` is then a maximum clique).

    Level d holds the candidates after choosing ``path[:d]``, colour-sorted, at
    ``level_*[level_start[d] : level_start[d] + level_size[d]]``; they are tried from the last
    (highest colour) to the first, ``level_next[d]`` being the next to try. A candidate with
    colour c cannot lead to a clique larger than d + c, which prunes it and all before it.
    ``counters`` holds the depth, the best size, the nodes explored and the work done so far
    (both cumulative, so the result does not depend on how the search is cut into calls), then
    the length of the tree recorded in ``tree`` (-1: not recording) and where its last level-0
    branching starts. The tree is the search's in the ``search`` certificate format: a vertex
    for each branching (take it, then leave it out), :data:`LEAF` where a level is pruned or a
    vertex has no candidates left. The call returns early when ``tree`` is full.
    """
    n = adj.shape[0]
    depth, best_size = counters[0], counters[1]
    candidates = np.empty(n, np.int64)
    head = np.empty(n, np.int64)
    tail = np.empty(n, np.int64)
    following = np.empty(n, np.int64)
    nodes, work = 0, counters[3]
    length, level_zero = counters[4], counters[5]
    exhausted = False
    while work < work_limit and (length < 0 or length + 2 <= tree.size):
        base = level_start[depth]
        index = level_next[depth]
        if index < 0 or depth + level_colors[base + index] <= best_size:
            if length >= 0:
                tree[length] = LEAF
                length += 1
            if depth == 0:
                level_next[0] = -1
                exhausted = True
                break
            depth -= 1
            continue
        vertex = level_vertices[base + index]
        level_next[depth] = index - 1
        path[depth] = vertex
        if length >= 0:
            if depth == 0:
                level_zero = length
            tree[length] = vertex
            length += 1
        nodes += 1
        work += index + 1
        count = 0
        for j in range(index):
            other = level_vertices[base + j]
            if adj[vertex, other]:
                candidates[count] = other
                count += 1
        if count == 0:
            if length >= 0:
                tree[length] = LEAF
                length += 1
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
    counters[4], counters[5] = length, level_zero
    return exhausted


def _unexplored(level_colors: np.ndarray, level_next: np.ndarray, n: int) -> int:
    """Colours of the level-0 candidates not yet done: every clique not yet seen lies in the
    level-0 branch being explored or an earlier one, whose colours are no larger."""
    return int(level_colors[min(level_next[0] + 1, n - 1)])


def _tree_work_limit(n: int, colours: int) -> int:
    """Most search work whose tree its checker accepts (see :data:`CHECK_MAX_STEPS`)."""
    return (CHECK_MAX_STEPS - n * colours - n) // 2


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
    ``work`` counts nodes. The ``certificate`` proves the bound: the root colouring
    (``coloring``) when it meets the incumbent, else the search tree (``search``), cut before
    the level-0 branch in progress, which its colour bounds, when the search stops early. A
    search records its tree only up to :func:`_tree_work_limit` work or
    :data:`MAX_TREE_ENTRIES` nodes, so that its checker accepts it; past that the tree is cut
    there, and the bound is what the cut tree proves, finished or not (``stopped`` is
    ``budget``).
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
        return SolverResult(clique, 0, 0, certificate={"kind": "coloring", "classes": []})
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
    tree = np.empty(min(1024, MAX_TREE_ENTRIES), np.int64)
    tree_work = _tree_work_limit(n, upper)
    counters = np.array([0, clique.size, 0, 0, 0 if tree_work > 0 else -1, 0], dtype=np.int64)
    cut = (0, upper)  # where the tree stopped and the colours of what it left: all at first
    exhausted = clique.size >= upper
    while not exhausted and counters[3] < work_budget and not deadline.expired():
        limit = min(int(counters[3]) + CHUNK_WORK, work_budget)
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
            limit if counters[4] < 0 else min(limit, tree_work),
            tree,
        )
        if counters[4] < 0 or exhausted:  # a chunk ends on its work limit or a full tree, so
            continue  # an exhausted search stayed under tree_work
        if counters[3] >= tree_work or counters[4] + 2 > tree.size >= MAX_TREE_ENTRIES:
            # the tree would cost its checker too much: keep it up to the level-0 branch in
            # progress, which the colouring closes (as below), and record no more
            cut = (int(counters[5]), _unexplored(level_colors, level_next, n))
            counters[4] = -1
        elif counters[4] + 2 > tree.size:
            room = min(tree.size, MAX_TREE_ENTRIES - tree.size)
            tree = np.concatenate([tree, np.empty(room, np.int64)])
    size = int(counters[1])
    if clique.size >= upper:
        colouring = {"kind": "coloring", "classes": coloring_classes(adj)}
        return SolverResult(np.sort(best[:size]), size, size, 0, "", certificate=colouring)
    if exhausted and counters[4] >= 0:
        bound, entries = size, tree[: counters[4]]
    else:
        if counters[4] >= 0:
            cut = (int(counters[5]), _unexplored(level_colors, level_next, n))
        bound, entries = max(size, cut[1]), np.append(tree[: cut[0]], LEAF)
    certificate: dict[str, Any] = {
        "kind": "search",
        "bound": bound,
        "order": root_vertices.tolist(),
        "tree": entries.tolist(),
    }
    stopped = "" if bound == size else "deadline" if deadline.fired else "budget"
    return SolverResult(
        np.sort(best[:size]), size, bound, int(counters[2]), stopped, certificate=certificate
    )
