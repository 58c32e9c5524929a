"""Graph colouring reference solvers on a symmetric boolean adjacency matrix.

- :func:`dsatur`: Brélaz's greedy DSatur (most distinct neighbour colours first) (numba).
- :func:`tabucol`: Hertz and de Werra's tabu search for a conflict-free k-colouring, driven by a
  fixed-seed xorshift generator so it is deterministic on every machine (numba).
- :func:`heuristic_coloring`: DSatur, then Tabucol with one colour fewer until it fails.
- :func:`max_clique`: a clique as large as the branch and bound of Tomita's MCQ finds within a
  node budget; its size is a lower bound on the chromatic number (numba).
- :func:`exact_coloring`: the chromatic number with proof. The clique gives the lower bound and
  fixes the colours of its vertices (symmetry breaking); DSatur + Tabucol give the upper bound; if
  they differ, an exact DSatur branch and bound closes the gap within a node budget. The search
  runs in chunks between which the wall-clock safety net is checked, so its result never depends
  on machine load. A clique certificate given in advance (a planted one) counts only after
  :func:`is_clique` confirms it; with an incumbent of that many colours it is the proof at once.
  Every result carries the certificate of its bound (format: ``npgym.certificates.
  graph_coloring``): the clique, or, when the search closed a gap, the tree of
  :func:`_refutation`, the search rerun with its final colour limit (a subtree of the search's).

Colourings are int64 arrays of colours ``0..k-1`` indexed by vertex.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from npgym.heuristics.budget import Deadline, work_units
from npgym.heuristics.cliques import is_clique
from npgym.heuristics.jit import njit
from npgym.heuristics.result import SolverResult

TABUCOL_ITERATIONS = 10_000
"""Tabucol moves per attempted colour count before it gives up on that count."""
CLIQUE_NODE_LIMIT = 1_000_000
"""Branch-and-bound nodes for the clique bound: a fixed budget keeps the bound deterministic."""
SEARCH_CHUNK_NODES = 200_000
"""Colouring branch-and-bound nodes between two looks at the wall-clock safety net."""
CERTIFIED_SOLVER = "checked clique certificate + planted colouring"
"""How :func:`exact_coloring` names a proof that a confirmed clique certificate gave at once."""
TREE_STEP_LIMIT = 10_000_000
"""Most steps of the proof tree :func:`_refutation` records (a colour tried for a branching
vertex): the step limit of the checker of ``search`` certificates
(``npgym.certificates.graph_coloring.MAX_STEPS``), so it accepts every tree recorded here."""
TREE_BYTE_LIMIT = 8 * 1024 * 1024
"""Largest ``search`` certificate, as compact JSON text: the most the checker reads
(``npgym.certificates.MAX_CERTIFICATE_BYTES``)."""
WORK_PER_SECOND = 200_000_000
"""Colouring branch-and-bound work per nominal second of effort, in nodes times vertices (a node
scans every vertex for the most saturated one): 5 million nodes a second at 40 vertices."""


def neighbour_lists(adjacency: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Compressed sparse rows ``(indptr, indices)`` of the adjacency matrix, neighbours sorted."""
    rows, columns = np.nonzero(adjacency)
    indptr = np.zeros(adjacency.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=adjacency.shape[0]), out=indptr[1:])
    return indptr, columns.astype(np.int64)


@njit
def color_count(colors: np.ndarray) -> int:
    """Number of distinct colours used."""
    if colors.shape[0] == 0:
        return 0
    ordered = np.sort(colors)
    count = 1
    for position in range(1, ordered.shape[0]):
        if ordered[position] != ordered[position - 1]:
            count += 1
    return count


def canonical_coloring(colors: np.ndarray) -> list[int]:
    """Relabel colours by first appearance, so vertex 0 has colour 0, the next new one 1, ..."""
    labels: dict[int, int] = {}
    return [labels.setdefault(int(color), len(labels)) for color in colors]


def is_proper(adjacency: np.ndarray, colors: np.ndarray) -> bool:
    """True when no edge joins two vertices of the same colour."""
    first, second = np.nonzero(np.triu(adjacency, 1))
    return bool(np.all(colors[first] != colors[second]))


# --- upper bounds -------------------------------------------------------------------------------


@njit
def _most_saturated(colors: np.ndarray, saturation: np.ndarray, free_degree: np.ndarray) -> int:
    """DSatur's choice: the uncoloured vertex with the most distinct neighbour colours, then
    the most uncoloured neighbours, then the lowest id; -1 when all are coloured."""
    vertex = -1
    for candidate in range(colors.shape[0]):
        if colors[candidate] >= 0:
            continue
        if (
            vertex < 0
            or saturation[candidate] > saturation[vertex]
            or (
                saturation[candidate] == saturation[vertex]
                and free_degree[candidate] > free_degree[vertex]
            )
        ):
            vertex = candidate
    return vertex


@njit
def dsatur(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Greedy DSatur: colour next the vertex seeing the most colours (then the most uncoloured
    neighbours, then the lowest id) with the smallest colour its neighbours do not use."""
    n = indptr.shape[0] - 1
    colors = np.full(n, -1, np.int64)
    seen = np.zeros((n, n + 1), np.int64)
    saturation = np.zeros(n, np.int64)
    free_degree = indptr[1:] - indptr[:-1]
    for _ in range(n):
        vertex = _most_saturated(colors, saturation, free_degree)
        color = 0
        while seen[vertex, color] > 0:
            color += 1
        _assign(indptr, indices, colors, seen, saturation, free_degree, vertex, color)
    return colors


@njit
def _xorshift(state: np.ndarray) -> int:
    """Next value of a 64-bit xorshift generator kept in ``state[0]``, as a non-negative int."""
    x = state[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    state[0] = x
    return np.int64(x >> np.uint64(1))


@njit
def tabucol(
    indptr: np.ndarray, indices: np.ndarray, start: np.ndarray, k: int, iterations: int, seed: int
) -> tuple[np.ndarray, bool]:
    """Search for a proper colouring with colours ``0..k-1`` from ``start`` (Tabucol).

    Vertices of ``start`` with a colour of k or more are first recoloured greedily. Each move
    recolours one conflicting vertex, the best non-tabu move (ties broken by the seeded
    generator), allowing a tabu move when it beats the best conflict count so far; the reverse
    move stays tabu for ``0.6 * conflicting vertices + random(0..9)`` iterations. Returns the
    colouring and whether it is conflict-free.
    """
    n = indptr.shape[0] - 1
    colors = start.copy()
    counts = np.zeros((n, k), np.int64)
    for vertex in range(n):
        if colors[vertex] >= k:
            colors[vertex] = -1
    for vertex in range(n):
        if colors[vertex] >= 0:
            for position in range(indptr[vertex], indptr[vertex + 1]):
                counts[indices[position], colors[vertex]] += 1
    for vertex in range(n):
        if colors[vertex] < 0:
            color = 0
            for candidate in range(1, k):
                if counts[vertex, candidate] < counts[vertex, color]:
                    color = candidate
            colors[vertex] = color
            for position in range(indptr[vertex], indptr[vertex + 1]):
                counts[indices[position], color] += 1
    conflicts = 0
    for vertex in range(n):
        conflicts += counts[vertex, colors[vertex]]
    conflicts //= 2
    best_conflicts = conflicts
    tabu_until = np.zeros((n, k), np.int64)
    state = np.array([np.uint64(seed) * np.uint64(2654435761) + np.uint64(88172645463325252)])
    for iteration in range(iterations):
        if conflicts == 0:
            break
        best_delta, ties, moved_vertex, moved_color, conflicting = n + 1, 0, -1, -1, 0
        for vertex in range(n):
            current = colors[vertex]
            if counts[vertex, current] == 0:
                continue
            conflicting += 1
            for color in range(k):
                if color == current:
                    continue
                delta = counts[vertex, color] - counts[vertex, current]
                if tabu_until[vertex, color] > iteration and conflicts + delta >= best_conflicts:
                    continue
                if delta < best_delta:
                    best_delta, ties, moved_vertex, moved_color = delta, 1, vertex, color
                elif delta == best_delta:
                    ties += 1
                    if _xorshift(state) % ties == 0:
                        moved_vertex, moved_color = vertex, color
        if moved_vertex < 0:
            continue
        previous = colors[moved_vertex]
        colors[moved_vertex] = moved_color
        for position in range(indptr[moved_vertex], indptr[moved_vertex + 1]):
            neighbour = indices[position]
            counts[neighbour, previous] -= 1
            counts[neighbour, moved_color] += 1
        conflicts += best_delta
        best_conflicts = min(best_conflicts, conflicts)
        tenure = (6 * conflicting) // 10 + _xorshift(state) % 10
        tabu_until[moved_vertex, previous] = iteration + 1 + tenure
    return colors, conflicts == 0


def heuristic_coloring(
    adjacency: np.ndarray, lower_bound: int = 1, iterations: int = TABUCOL_ITERATIONS
) -> tuple[np.ndarray, int]:
    """DSatur, then Tabucol with one colour fewer while it succeeds (and the count is above
    ``lower_bound``). Returns the canonical colouring and its colour count. Deterministic."""
    adjacency = np.ascontiguousarray(adjacency, dtype=np.bool_)
    indptr, indices = neighbour_lists(adjacency)
    colors = dsatur(indptr, indices)
    count = int(color_count(colors))
    while count > max(lower_bound, 1):
        candidate, found = tabucol(indptr, indices, colors, count - 1, iterations, count)
        if not found:
            break
        colors, count = candidate, count - 1
    return np.array(canonical_coloring(colors), dtype=np.int64), count


# --- lower bound --------------------------------------------------------------------------------


@njit
def _color_sort(
    adjacency: np.ndarray,
    candidates: np.ndarray,
    count: int,
    out_order: np.ndarray,
    out_bound: np.ndarray,
) -> None:
    """Greedy-colour ``candidates[:count]`` in order and write them sorted by colour class, with
    ``out_bound[i]`` = class of ``out_order[i]`` + 1, a bound on a clique among the first i + 1."""
    classes = np.empty(count, np.int64)
    blocked = np.zeros(count + 1, np.bool_)
    class_total = 0
    for i in range(count):
        vertex = candidates[i]
        for j in range(i):
            if adjacency[vertex, candidates[j]]:
                blocked[classes[j]] = True
        chosen = 0
        while blocked[chosen]:
            chosen += 1
        classes[i] = chosen
        class_total = max(class_total, chosen + 1)
        for j in range(i):
            blocked[classes[j]] = False
    position = 0
    for color in range(class_total):
        for i in range(count):
            if classes[i] == color:
                out_order[position] = candidates[i]
                out_bound[position] = color + 1
                position += 1


@njit
def _max_clique(adjacency: np.ndarray, node_limit: int) -> tuple[np.ndarray, bool]:
    """Tomita's MCQ branch and bound, iterative; returns (clique, proven maximum)."""
    n = adjacency.shape[0]
    degree = np.zeros(n, np.int64)
    for vertex in range(n):
        for other in range(n):
            if adjacency[vertex, other]:
                degree[vertex] += 1
    initial = np.argsort(-degree, kind="mergesort").astype(np.int64)
    order = np.empty((n + 1, n), np.int64)
    bound = np.empty((n + 1, n), np.int64)
    remaining = np.zeros(n + 1, np.int64)
    current = np.empty(n, np.int64)
    best = np.empty(n, np.int64)
    best_size = 0
    scratch = np.empty(n, np.int64)
    _color_sort(adjacency, initial, n, order[0], bound[0])
    remaining[0] = n
    depth, nodes = 0, 0
    while depth >= 0:
        top = remaining[depth]
        if top == 0 or depth + bound[depth, top - 1] <= best_size:
            depth -= 1
            if depth >= 0:
                remaining[depth] -= 1
            continue
        if nodes >= node_limit:
            return best[:best_size].copy(), False
        nodes += 1
        vertex = order[depth, top - 1]
        current[depth] = vertex
        count = 0
        for i in range(top - 1):
            if adjacency[vertex, order[depth, i]]:
                scratch[count] = order[depth, i]
                count += 1
        if count == 0:
            if depth + 1 > best_size:
                best_size = depth + 1
                best[:best_size] = current[:best_size]
            remaining[depth] -= 1
            continue
        _color_sort(adjacency, scratch, count, order[depth + 1], bound[depth + 1])
        remaining[depth + 1] = count
        depth += 1
    return best[:best_size].copy(), True


def max_clique(
    adjacency: np.ndarray, node_limit: int = CLIQUE_NODE_LIMIT
) -> tuple[list[int], bool]:
    """A largest clique (sorted vertex ids) and whether it was proven maximum within the budget.

    Either way its size is a valid lower bound on the chromatic number.
    """
    adjacency = np.ascontiguousarray(adjacency, dtype=np.bool_)
    if adjacency.shape[0] == 0:
        return [], True
    clique, proven = _max_clique(adjacency, node_limit)
    return sorted(int(vertex) for vertex in clique), bool(proven)


# --- exact search -------------------------------------------------------------------------------

# Slots of the search's ``status`` array, which carries its state from one chunk to the next.
_DEPTH, _USED, _BEST, _LOWER, _DESCEND, _BASE, _FINISHED = range(7)


@njit
def _assign(
    indptr: np.ndarray,
    indices: np.ndarray,
    colors: np.ndarray,
    seen: np.ndarray,
    saturation: np.ndarray,
    free_degree: np.ndarray,
    vertex: int,
    color: int,
) -> None:
    """Give ``vertex`` ``color`` and update its neighbours' colour counts and saturation."""
    colors[vertex] = color
    for position in range(indptr[vertex], indptr[vertex + 1]):
        neighbour = indices[position]
        if seen[neighbour, color] == 0:
            saturation[neighbour] += 1
        seen[neighbour, color] += 1
        free_degree[neighbour] -= 1


@njit
def _unassign(
    indptr: np.ndarray,
    indices: np.ndarray,
    colors: np.ndarray,
    seen: np.ndarray,
    saturation: np.ndarray,
    free_degree: np.ndarray,
    vertex: int,
) -> None:
    """Undo :func:`_assign` for ``vertex``."""
    color = colors[vertex]
    colors[vertex] = -1
    for position in range(indptr[vertex], indptr[vertex + 1]):
        neighbour = indices[position]
        seen[neighbour, color] -= 1
        if seen[neighbour, color] == 0:
            saturation[neighbour] -= 1
        free_degree[neighbour] += 1


@njit
def _search(
    indptr: np.ndarray,
    indices: np.ndarray,
    colors: np.ndarray,
    seen: np.ndarray,
    saturation: np.ndarray,
    free_degree: np.ndarray,
    vertex_at: np.ndarray,
    next_color: np.ndarray,
    used_at: np.ndarray,
    best: np.ndarray,
    status: np.ndarray,
    node_budget: int,
) -> None:
    """Exact DSatur branch and bound for at most ``node_budget`` nodes, resumable.

    Depth d colours one more vertex: the uncoloured one with the highest saturation (then most
    uncoloured neighbours, then lowest id), trying each colour already used that its neighbours
    lack and then one new colour, but only colours below ``best - 1``: a branch must beat the
    incumbent. Depths below ``status[_BASE]`` are the pre-coloured clique. The search ends when it
    backtracks past them (the incumbent is optimal) or reaches the lower bound.
    """
    n = colors.shape[0]
    depth, used, best_count = status[_DEPTH], status[_USED], status[_BEST]
    lower, descend, base = status[_LOWER], status[_DESCEND], status[_BASE]
    nodes = 0
    while nodes < node_budget:
        if descend:
            if depth == n:
                best[:] = colors
                best_count = used
                if best_count <= lower:
                    status[_FINISHED] = 1
                    break
                depth -= 1
                descend = 0
                continue
            vertex = _most_saturated(colors, saturation, free_degree)
            vertex_at[depth] = vertex
            next_color[depth] = 0
            used_at[depth] = used
        vertex = vertex_at[depth]
        if colors[vertex] >= 0:
            _unassign(indptr, indices, colors, seen, saturation, free_degree, vertex)
            used = used_at[depth]
        limit = min(used, best_count - 2)
        color = next_color[depth]
        while color <= limit and seen[vertex, color] > 0:
            color += 1
        if color > limit:
            depth -= 1
            descend = 0
            if depth < base:
                status[_FINISHED] = 1
                break
            continue
        next_color[depth] = color + 1
        _assign(indptr, indices, colors, seen, saturation, free_degree, vertex, color)
        if color == used:
            used += 1
        depth += 1
        descend = 1
        nodes += 1
    status[_DEPTH], status[_USED], status[_BEST], status[_DESCEND] = (
        depth,
        used,
        best_count,
        descend,
    )


@njit
def _refutation(
    indptr: np.ndarray, indices: np.ndarray, clique: np.ndarray, colours: int, step_limit: int
) -> tuple[np.ndarray, bool]:
    """The DSatur tree that proves no proper colouring with colours ``0..colours-1`` gives
    ``clique[i]`` colour i, in pre-order (one branching vertex per node), and whether it was
    complete within ``step_limit`` steps (a node costs one step per colour it may try).

    The search of :func:`_search` with its colour limit fixed at ``colours - 1``: each node
    colours the most saturated vertex with every colour below ``min(used + 1, colours)`` that
    its neighbours lack, in increasing order (a new colour only as ``used``: unused colours are
    interchangeable). A node whose vertex has no such colour is a leaf. Returns an empty tree and
    False when the limit is reached or a colouring is found (then ``colours`` was enough).
    """
    n = indptr.shape[0] - 1
    colors = np.full(n, -1, np.int64)
    seen = np.zeros((n, n + 1), np.int64)
    saturation = np.zeros(n, np.int64)
    free_degree = indptr[1:] - indptr[:-1]
    for color in range(clique.shape[0]):
        _assign(indptr, indices, colors, seen, saturation, free_degree, clique[color], color)
    vertex_at = np.zeros(n + 1, np.int64)
    next_color = np.zeros(n + 1, np.int64)
    used_at = np.zeros(n + 1, np.int64)
    tree = np.empty(16, np.int64)
    size, steps, depth, used, descend = 0, 0, 0, clique.shape[0], True
    while True:
        if descend:
            vertex = _most_saturated(colors, saturation, free_degree)
            steps += min(used + 1, colours)
            if vertex < 0 or steps > step_limit:
                return tree[:0].copy(), False
            if size == tree.shape[0]:
                tree = np.concatenate((tree, np.empty(size, np.int64)))
            tree[size] = vertex
            size += 1
            vertex_at[depth], next_color[depth], used_at[depth] = vertex, 0, used
        vertex = vertex_at[depth]
        if colors[vertex] >= 0:
            _unassign(indptr, indices, colors, seen, saturation, free_degree, vertex)
            used = used_at[depth]
        limit = min(used, colours - 1)
        color = next_color[depth]
        while color <= limit and seen[vertex, color] > 0:
            color += 1
        if color > limit:
            depth -= 1
            descend = False
            if depth < 0:
                return tree[:size].copy(), True
            continue
        next_color[depth] = color + 1
        _assign(indptr, indices, colors, seen, saturation, free_degree, vertex, color)
        used = max(used, color + 1)
        depth += 1
        descend = True


def _checked(
    adjacency: np.ndarray, incumbent: np.ndarray | None, certificate: Sequence[int] | None
) -> tuple[np.ndarray | None, list[int]]:
    """The incumbent if it is a proper colouring (else ``None``) and the certificate's vertices
    if they form a clique (else ``[]``)."""
    n = adjacency.shape[0]
    if incumbent is not None and (incumbent.shape != (n,) or not is_proper(adjacency, incumbent)):
        incumbent = None
    known = sorted(int(v) for v in certificate) if certificate is not None else []
    return incumbent, known if is_clique(adjacency, known) else []


def certified_coloring(
    adjacency: np.ndarray, incumbent: np.ndarray | None, clique: list[int]
) -> SolverResult[np.ndarray] | None:
    """The incumbent, proven optimal, when it uses no more colours than ``clique`` has vertices;
    else ``None``. Both must already be checked (:func:`_checked`)."""
    if incumbent is None or not clique or color_count(incumbent) > len(clique):
        return None
    count = len(clique)
    witness = np.array(canonical_coloring(incumbent), dtype=np.int64)
    return SolverResult(
        witness, count, count, solver=CERTIFIED_SOLVER, certificate=clique_certificate(clique)
    )


def clique_certificate(clique: Sequence[int]) -> dict[str, Any]:
    """The ``clique`` certificate of the lower bound ``len(clique)`` (format:
    ``npgym.certificates.graph_coloring``)."""
    return {"kind": "clique", "clique": [int(vertex) for vertex in clique]}


def search_certificate(
    adjacency: np.ndarray, clique: Sequence[int], count: int
) -> dict[str, Any] | None:
    """The ``search`` certificate that no colouring has fewer than ``count`` colours, the tree of
    :func:`_refutation` from ``clique`` (fewer than ``count`` vertices); ``None`` when the tree
    is past :data:`TREE_STEP_LIMIT` or :data:`TREE_BYTE_LIMIT`, or a colouring with fewer
    colours exists."""
    indptr, indices = neighbour_lists(np.ascontiguousarray(adjacency, dtype=np.bool_))
    fixed = np.array(clique, dtype=np.int64)
    tree, complete = _refutation(indptr, indices, fixed, count - 1, TREE_STEP_LIMIT)
    if not complete:
        return None
    proof = {"kind": "search", "bound": count, "clique": fixed.tolist(), "tree": tree.tolist()}
    return proof if len(json.dumps(proof, separators=(",", ":"))) <= TREE_BYTE_LIMIT else None


def quick_coloring(
    adjacency: np.ndarray,
    incumbent: np.ndarray | None = None,
    certificate: Sequence[int] | None = None,
    tabucol_iterations: int = TABUCOL_ITERATIONS,
    clique_node_limit: int = CLIQUE_NODE_LIMIT,
) -> SolverResult[np.ndarray]:
    """The heuristic reference, never more work than :func:`exact_coloring` before its search.

    Returns the certificate's proof when :func:`certified_coloring` gives one, else
    :func:`heuristic_coloring`'s colouring and count, stopped at the clique bound of
    :func:`max_clique` (or of the confirmed ``certificate``, if larger), with that bound and its
    ``clique`` certificate (``solver`` empty). Tabucol can never succeed below a clique's size,
    so the colouring is the one :func:`heuristic_coloring` finds without the bound, minus the
    search for a colouring that cannot exist (up to ``tabucol_iterations`` wasted moves).
    """
    adjacency = np.ascontiguousarray(adjacency, dtype=np.bool_)
    incumbent, known = _checked(adjacency, incumbent, certificate)
    shortcut = certified_coloring(adjacency, incumbent, known)
    if shortcut is not None:
        return shortcut
    clique, _ = max_clique(adjacency, clique_node_limit)
    clique = max(clique, known, key=len)
    colors, count = heuristic_coloring(adjacency, len(clique), tabucol_iterations)
    if not clique and adjacency.shape[0]:
        clique = [0]  # a vertex, if the clique budget was 0
    return SolverResult(colors, count, len(clique), certificate=clique_certificate(clique))


def exact_coloring(
    adjacency: np.ndarray,
    effort: float = 60.0,
    incumbent: np.ndarray | None = None,
    tabucol_iterations: int = TABUCOL_ITERATIONS,
    clique_node_limit: int = CLIQUE_NODE_LIMIT,
    deadline: Deadline | None = None,
    certificate: Sequence[int] | None = None,
) -> SolverResult[np.ndarray]:
    """The chromatic number and a canonical optimal colouring, proven within ``effort`` nominal
    seconds of nodes (:data:`WORK_PER_SECOND`); otherwise the best found and the clique bound.

    ``incumbent`` (a proper colouring, e.g. a planted one; ignored if it is not proper) is kept
    when nothing beats it. ``certificate`` is a clique known in advance (a planted one): only if
    :func:`is_clique` confirms it does its size count as a lower bound, and an incumbent with that
    many colours is then optimal at once, with no search. Smaller ``tabucol_iterations`` or
    ``clique_node_limit`` weaken the bounds (tests use 0 to make the branch and bound do all the
    work); the result stays exact. ``work`` counts nodes. The ``certificate`` proves the bound:
    the clique, or the search tree (:func:`search_certificate`); a proof whose tree is past
    :data:`TREE_STEP_LIMIT` or :data:`TREE_BYTE_LIMIT` is reported unproven, with the clique
    bound.
    """
    adjacency = np.ascontiguousarray(adjacency, dtype=np.bool_)
    n = adjacency.shape[0]
    deadline = deadline or Deadline.for_effort(effort)
    incumbent, known = _checked(adjacency, incumbent, certificate)
    shortcut = certified_coloring(adjacency, incumbent, known)
    if shortcut is not None:
        return shortcut
    clique, _ = max_clique(adjacency, clique_node_limit)
    if len(known) > len(clique):
        clique = known
    lower = max(len(clique), 1 if n else 0)
    colors, count = heuristic_coloring(adjacency, lower, tabucol_iterations)
    if incumbent is not None and color_count(incumbent) < count:
        colors = np.array(canonical_coloring(incumbent), dtype=np.int64)
        count = int(color_count(colors))
    lower_clique = list(clique) if len(clique) == lower else [0]  # a vertex, if the budget was 0
    if count <= lower:
        return SolverResult(colors, count, count, certificate=clique_certificate(lower_clique))
    indptr, indices = neighbour_lists(adjacency)
    partial = np.full(n, -1, np.int64)
    seen = np.zeros((n, n + 1), np.int64)
    saturation = np.zeros(n, np.int64)
    free_degree = indptr[1:] - indptr[:-1]
    for color, vertex in enumerate(clique):
        _assign(indptr, indices, partial, seen, saturation, free_degree, vertex, color)
    best = colors.copy()
    status = np.array([len(clique), len(clique), count, lower, 1, len(clique), 0], np.int64)
    vertex_at, next_color, used_at = (np.zeros(n + 1, np.int64) for _ in range(3))
    node_budget, nodes = max(1, work_units(effort, WORK_PER_SECOND) // n), 0
    while not status[_FINISHED] and nodes < node_budget and not deadline.expired():
        chunk = min(SEARCH_CHUNK_NODES, node_budget - nodes)
        _search(
            indptr,
            indices,
            partial,
            seen,
            saturation,
            free_degree,
            vertex_at,
            next_color,
            used_at,
            best,
            status,
            chunk,
        )
        nodes += chunk
    count = int(status[_BEST])
    proven = bool(status[_FINISHED])
    stopped = "" if proven else "deadline" if deadline.fired else "budget"
    proof = search_certificate(adjacency, clique, count) if proven and count > lower else None
    if proof is None:
        proven = proven and count == lower  # a search tree too big to certify: the clique bound
    return SolverResult(
        np.array(canonical_coloring(best), dtype=np.int64),
        count,
        count if proven else lower,
        nodes,
        stopped,
        certificate=proof or clique_certificate(lower_clique),
    )
