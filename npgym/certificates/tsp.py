"""TSP certificates: a lower bound on the shortest closed tour, from subtour-LP duals.

The instance is its JSON object: ``distances``, an n x n matrix of integers (3 <= n <=
:data:`MAX_CITIES`), symmetric, zero on the diagonal, entries in 0..2**62; ``c(u, v)`` is
``distances[u][v]``. The witness is the closed tour ``[c0, c1, ..., c_{n-1}, c0]``: the n
cities 0..n-1 once each, then the first again; its objective is the sum of ``c`` over its n
edges. Cities are 0-based. A certificate is::

    {"kind": "subtour-dual", "scale": s, "cuts": [S_0, S_1, ...], "tree": [node, ...]}

- ``s`` (an integer >= 1) is the denominator of every dual below.
- Each ``S_k`` is a list of distinct cities with ``1 <= |S_k| <= n - 1``: a subtour cut, which
  every tour crosses at least twice (``x(delta(S)) >= 2``).
- ``tree`` is a branching tree, flattened in pre-order. A node is ``["split", u, v]`` (the edge
  ``{u, v}``, ``u != v``, not fixed above it; its two subtrees follow: first the one with the
  edge fixed out of the tour, then the one with it fixed in), ``["dual", pi, mu]`` (a leaf:
  ``pi`` a list of n integers, the node potentials, any sign; ``mu`` a list of pairs ``[k,
  m]``, cut ``k`` with the multiplier ``m >= 0``, a cut listed twice counting twice) or
  ``["infeasible"]`` (a leaf whose fixings no tour meets; the checker sees it: a city with
  more than two edges fixed in, or fewer than two edges not fixed out; edges fixed in that
  close a cycle of fewer than n cities; or edges not fixed out that do not connect all cities).
  A single ``["dual", pi, mu]`` node is the root LP's bound alone.

At a dual leaf, with ``mu_S`` the summed multiplier of each cut, the scaled reduced cost of an
edge is ``r(u, v) = s * c(u, v) - pi_u - pi_v - sum over the cuts S that {u, v} crosses (one end
in S) of mu_S``, and every tour x under the leaf's fixings has ``s * length(x) >= 2 * sum(pi) +
2 * sum(mu) + sum over the edges of (r if fixed in; 0 if fixed out; min(0, r) if free)``: weak
duality, since ``s * length = sum_e r_e x_e + sum_v pi_v deg(v) + sum_S mu_S x(delta(S))``
with every degree 2 and ``x(delta(S)) >= 2``. The leaf's bound is that total divided by ``s``,
rounded up (lengths are integers); an infeasible leaf bounds nothing. The certificate's bound is
the smallest leaf bound (refused when every leaf is infeasible, which no sound tree has).

Limits: every scale, potential and multiplier is below 2**128 in magnitude
(:data:`MAX_MAGNITUDE`). Cost, in numpy array-element updates: a dual leaf ``n^2``, plus
``|S|^2 +`` :data:`CUT_COST` for each distinct cut it gives a multiplier, all times
:data:`BIG_INTEGER_COST` when summed in Python integers (below); an infeasible leaf
:data:`INFEASIBLE_COST` ``* n^2``. A
certificate over :data:`MAX_WORK` in all is refused before that work is done. numpy sums a leaf
in int64 when :func:`_fits_int64` shows that no sum can reach 2**62, else in exact Python
integers (object arrays), so a result is never rounded or wrapped. Measured: the 100
benchmark-tier (45-55 cities) certificates check in about 0.1 s, one at 500 cities in about
0.1 s, and a certificate at :data:`MAX_WORK` in a few seconds.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from npgym.certificates import CertificateError, integer, integers

SENSE: Literal["min", "max"] = "min"

MAX_CITIES = 2000
"""Largest instance read (the task's own limit): its matrix is n x n."""
INT64_ROOM = 2**62
"""A leaf is summed in int64 only when the largest possible sum stays below this."""
MAX_MAGNITUDE = 2**128
"""Every scale, potential and multiplier is below this in magnitude (bounds big-integer work)."""
MAX_WORK = 200_000_000
"""Most array-element updates a certificate may cost the checker (counted as the module
docstring says); a few seconds (measured 1-4 s on a busy 2-core machine), past it refused."""
BIG_INTEGER_COST = 20
"""How many int64 updates one update in exact Python integers counts for (measured ratio)."""
CUT_COST = 1000
"""The updates that each cut of a dual leaf counts for besides its ``|S|^2`` (its overhead)."""
INFEASIBLE_COST = 3
"""The updates per ``n^2`` that an infeasible leaf counts for (its walk over the cities)."""


def _matrix(instance: Mapping[str, Any]) -> np.ndarray:
    """The instance's distances as an int64 array (ints < 2**62 only), validated."""
    rows = instance.get("distances")
    if not isinstance(rows, list) or not 3 <= len(rows) <= MAX_CITIES:
        raise CertificateError(f"distances must be a list of 3 to {MAX_CITIES} rows")
    n = len(rows)
    for row in rows:
        if not isinstance(row, list) or len(row) != n:
            raise CertificateError(f"distances must be a {n} x {n} matrix")
        if not all(type(value) is int and 0 <= value < INT64_ROOM for value in row):
            raise CertificateError("distances must be integers in 0..2**62")
    matrix = np.array(rows, dtype=np.int64)
    if (matrix != matrix.T).any() or matrix.diagonal().any():
        raise CertificateError("distances must be symmetric with a zero diagonal")
    return matrix


def objective(instance: Mapping[str, Any], solution: Any) -> int:
    """The length of the closed tour ``solution``; :class:`CertificateError` if it is not one."""
    matrix = _matrix(instance)
    n = matrix.shape[0]
    tour = integers(solution, "the tour")
    if len(tour) != n + 1 or tour[0] != tour[-1] or sorted(tour[:-1]) != list(range(n)):
        raise CertificateError(f"the tour must visit the {n} cities once each and close")
    return sum(int(matrix[a, b]) for a, b in itertools.pairwise(tour))


def _fits_int64(scale: int, matrix: np.ndarray, pi: list[int], mu: list[int]) -> bool:
    """Whether every sum of a leaf stays below 2**62: each reduced cost is below ``size`` in
    magnitude and a leaf adds at most ``n^2 + 2n + 2`` such terms."""
    n = matrix.shape[0]
    size = scale * int(matrix.max()) + 2 * max(map(abs, pi)) + 4 * sum(mu) + 1
    return size * (n * n + 2 * n + 2) < INT64_ROOM


def _dual_leaf(
    matrix: np.ndarray,
    scale: int,
    cuts: list[np.ndarray],
    node: list[Any],
    fixings: list[tuple[int, int, bool]],
    budget: int,
) -> tuple[int, int]:
    """The bound of a ``["dual", pi, mu]`` leaf under ``fixings`` (u, v, fixed in), and its
    work: ``n^2`` plus ``|S|^2`` for each distinct cut with a multiplier, refused before it is
    done when over ``budget``."""
    n = matrix.shape[0]
    if len(node) != 3:
        raise CertificateError("a dual leaf is ['dual', pi, mu]")
    pi = integers(node[1], "pi")
    if len(pi) != n or not all(-MAX_MAGNITUDE < value < MAX_MAGNITUDE for value in pi):
        raise CertificateError(f"pi must list {n} potentials below 2**128 in magnitude")
    if not isinstance(node[2], list):
        raise CertificateError("mu must be a list of [cut, multiplier] pairs")
    multipliers: dict[int, int] = {}
    for pair in node[2]:
        pair_ok = isinstance(pair, list) and len(pair) == 2
        k, m = integers(pair, "a [cut, multiplier] pair") if pair_ok else (-1, -1)
        if not 0 <= k < len(cuts) or not 0 <= m < MAX_MAGNITUDE:
            raise CertificateError("mu pairs are [cut index, multiplier in 0..2**128)")
        multipliers[k] = multipliers.get(k, 0) + m
    dtype = np.int64 if _fits_int64(scale, matrix, pi, list(multipliers.values())) else object
    work = n * n + sum(cuts[k].size ** 2 + CUT_COST for k in multipliers)
    work *= 1 if dtype is np.int64 else BIG_INTEGER_COST
    if work > budget:
        raise CertificateError(f"the tree costs over {MAX_WORK} steps to check")
    potential = np.array(pi, dtype=dtype)
    inside = np.zeros((n, n), dtype=dtype)  # 2 * the multipliers of the cuts holding u and v
    for k, m in multipliers.items():
        potential[cuts[k]] += m
        inside[np.ix_(cuts[k], cuts[k])] += 2 * m
    reduced = matrix.astype(dtype) * scale - potential[:, None] - potential[None, :] + inside
    negative = np.minimum(reduced, 0)  # symmetric: each edge twice, off the diagonal
    total = 2 * sum(pi) + 2 * sum(multipliers.values())
    total += (int(negative.sum()) - int(negative.diagonal().sum())) // 2
    for u, v, chosen in fixings:  # a fixed edge adds r (in) or 0 (out), not min(0, r)
        total += (int(reduced[u, v]) if chosen else 0) - int(negative[u, v])
    return -(-total // scale), work


def _infeasible(fixed: np.ndarray) -> bool:
    """Whether no tour meets the fixings: a degree over 2 or under 2 possible, a short cycle of
    fixed-in edges, or the edges not fixed out leaving the cities disconnected."""
    n = fixed.shape[0]
    inside = fixed == 1
    if (inside.sum(1) > 2).any() or ((fixed != -1).sum(1) < 2).any():
        return True
    parent = list(range(n))

    def root(city: int) -> int:
        while parent[city] != city:
            parent[city] = parent[parent[city]]
            city = parent[city]
        return city

    edges = np.argwhere(np.triu(inside, 1)).tolist()
    for a, b in edges:
        ra, rb = root(a), root(b)
        if ra == rb:
            return len(edges) < n  # a cycle: fewer than n edges in means a short one
        parent[ra] = rb
    reached, frontier = np.zeros(n, dtype=np.bool_), [0]
    reached[0] = True
    while frontier:
        city = frontier.pop()
        step = np.flatnonzero((fixed[city] != -1) & ~reached)
        reached[step] = True
        frontier.extend(step.tolist())
    return not reached.all()


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
    """The lower bound on the shortest tour that ``certificate`` proves (module docstring)."""
    if certificate.get("kind") != "subtour-dual":
        raise CertificateError(f"unknown certificate kind {certificate.get('kind')!r:.40}")
    missing = {"scale", "cuts", "tree"} - set(certificate)
    if missing:
        raise CertificateError(f"the certificate lacks {sorted(missing)}")
    matrix = _matrix(instance)
    n = matrix.shape[0]
    scale = integer(certificate["scale"], "scale")
    if not 1 <= scale < MAX_MAGNITUDE:
        raise CertificateError("scale must be in 1..2**128")
    if not isinstance(certificate["cuts"], list):
        raise CertificateError("cuts must be a list of city lists")
    cuts = []
    for cut in map(integers, certificate["cuts"], itertools.repeat("a cut")):
        if not 1 <= len(set(cut)) == len(cut) <= n - 1 or not 0 <= min(cut) <= max(cut) < n:
            raise CertificateError(f"a cut must hold 1 to {n - 1} distinct cities of 0..{n - 1}")
        cuts.append(np.array(cut, dtype=np.int64))
    work = 0
    tree = certificate["tree"]
    if not isinstance(tree, list) or not tree:
        raise CertificateError("tree must be a non-empty list of nodes")
    fixed = np.zeros((n, n), dtype=np.int64)
    np.fill_diagonal(fixed, -1)
    stack: list[tuple[int, int, bool]] = []  # (u, v, in its second subtree: fixed in)
    best: int | None = None
    for position, node in enumerate(tree):
        if not isinstance(node, list) or not node:
            raise CertificateError("a node is a non-empty list")
        if node[0] == "split":
            u, v = integers(node[1:], "a split edge") if len(node) == 3 else (-1, -1)
            if not (0 <= u < n and 0 <= v < n and u != v and fixed[u, v] == 0):
                raise CertificateError("a split is ['split', u, v], a free edge of two cities")
            fixed[u, v] = fixed[v, u] = -1
            stack.append((u, v, False))
            continue
        if node[0] == "dual":
            leaf, cost = _dual_leaf(matrix, scale, cuts, node, stack, MAX_WORK - work)
            best = leaf if best is None else min(best, leaf)
        elif node != ["infeasible"] or not _infeasible(fixed):
            raise CertificateError(f"node {position} is neither a split, a dual nor infeasible")
        work += cost if node[0] == "dual" else INFEASIBLE_COST * n * n
        if work > MAX_WORK:
            raise CertificateError(f"the tree costs over {MAX_WORK} steps to check")
        while stack and stack[-1][2]:
            u, v, _ = stack.pop()
            fixed[u, v] = fixed[v, u] = 0
        if not stack:
            if position != len(tree) - 1:
                raise CertificateError("nodes follow the end of the tree")
            break
        u, v, _ = stack.pop()
        fixed[u, v] = fixed[v, u] = 1
        stack.append((u, v, True))
    if stack:
        raise CertificateError("the tree ends before every split has two subtrees")
    if best is None:
        raise CertificateError("every leaf is infeasible: no sound tree says so")
    return best
