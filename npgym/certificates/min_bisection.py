"""MinBisection certificates: a lower bound on the minimum bisection, from an SDP dual.

The instance is its JSON object: ``n`` (an integer in 2..:data:`MAX_VERTICES`) and ``edges``,
rows ``[u, v, w]`` with ``0 <= u, v < n``, ``u != v`` and an integer weight ``1 <= w <=``
:data:`MAX_MAGNITUDE` (the task's weights are at most 10**6). The
witness is ``[[part A], [part B]]``: every vertex in exactly one part, sizes differing by at
most one; its objective is the total weight of the edges with ends in different parts.

Let ``N = n + n % 2`` (an odd graph gets an isolated vertex ``n``, which changes no cut, so
every bisection is a vector ``x`` in ``{-1, 1}^N`` with ``sum(x) = 0``) and ``L`` the graph's
N x N Laplacian: ``x^T L x = 4 cut(x)``. A certificate is::

    {"kind": "sdp", "scale": D, "tree": [node, ...]}

- ``D`` (an integer >= 1) is the denominator of every dual below.
- ``tree`` is a branching tree over vertex pairs, flattened in pre-order. A node is
  ``["split", i, j]`` (``0 <= i < j < N``, a pair not split above it; its two subtrees follow,
  first the bisections with ``x_i x_j = 1``, i and j on the same side, then those with
  ``x_i x_j = -1``) or ``["dual", y, triangles, pairs, shift, factor]``, a leaf:

  - ``y``: N integers ``Y_v``, any sign;
  - ``triangles``: a flat list of rows ``i, j, k, sign, Z`` (``0 <= i < j < k < N``, ``sign`` in
    0..3, ``Z >= 0``); with ``(s1, s2, s3)`` row ``sign`` of :data:`SIGNS`, ``S_t`` is the
    symmetric matrix with ``s1`` at ``(i, j)``, ``s2`` at ``(j, k)``, ``s3`` at ``(i, k)``;
    every ``x`` in ``{-1, 1}^N`` has ``x^T S_t x >= -2`` (the triangle inequalities);
  - ``pairs``: a flat list of rows ``i, j, U`` (``U`` any sign), each pair split on the leaf's
    path, with ``s_p = +1`` (same side) or ``-1`` as the path says; ``E_p`` is the symmetric
    matrix with 1 at ``(i, j)`` and ``(j, i)``, so ``x^T E_p x = 2 s_p`` on the leaf;
  - ``shift``: an integer ``lambda``;
  - ``factor``: the lower triangle of an integer (N-1) x (N-1) matrix ``F``, row by row
    (``N (N-1) / 2`` integers).

  Let ``A = D L - Diag(Y) - sum_t Z_t S_t - sum_p U_p E_p - lambda I`` and ``Q = B^T A B``
  with ``B`` the N x (N-1) matrix whose column ``c`` is ``e_c - e_{N-1}``: ``Q[a][b] = A[a][b]
  - A[a][N-1] - A[N-1][b] + A[N-1][N-1]``. Let ``R = Q - F F^T`` and ``rho`` the least of the
  largest row sum of ``|R|`` and, when ``(N-1) max|R|^2 < 2**62``, the integer square root,
  rounded up, of the largest row sum of ``|R R|``: either bounds ``||R||_2``, so
  ``F F^T + R >= -rho I``. Every ``x`` with ``sum(x) = 0`` is ``B w`` for
  ``w = x[:N-1]``, ``|w|^2 = N - 1``, so on the leaf ``4 D cut(x) = sum(Y) + sum_t Z_t x^T S_t
  x + 2 sum_p U_p s_p + lambda N + w^T Q w >= sum(Y) - 2 sum(Z) + 2 sum_p U_p s_p + lambda N -
  rho (N - 1)``. The leaf's bound is that number divided by ``4 D``, rounded up.

A single ``["dual", ...]`` node is the root's bound alone. The certificate's bound is the
smallest leaf bound, at least 0, raised to the next multiple of the weights' gcd (every cut is
one). Cost: per leaf O(N^3) integer operations, two int64 matrix products (``F F^T``, and
``R R`` where it fits). A leaf is refused when a number's magnitude passes
:data:`MAX_MAGNITUDE` or ``(N-1) max|F|^2 >= 2**62``, so no int64 entry of ``A``, ``Q`` or
``F F^T`` wraps. A leaf has at least ``N (N-1) / 2``
numbers, so the total is bounded by the certificate's size times N. Measured: NP-Bench's 100
MinBisection certificates (N about 52, some 50 KB each) check in about 0.25 CPU-s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from npgym.certificates import CertificateError, integer

SENSE: Literal["min", "max"] = "min"
MAX_VERTICES = 1000
"""Largest graph the checker reads (the task's own limit)."""
MAX_MAGNITUDE = 1 << 58
"""Largest sum of the absolute values of the numbers that make one entry of ``A`` (``D`` times
the weighted degree, ``|Y_v|``, the multipliers, ``|lambda|``): 4 times it stays below 2**62."""
SIGNS = ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1))
"""The sign patterns ``(s1, s2, s3)`` of the triangle inequalities on ``(i, j), (j, k), (i, k)``."""


def _whole(values: Any, what: str) -> list[int]:
    """``values`` as a list of JSON integers (never a bool, a float or a string)."""
    if not isinstance(values, list) or not set(map(type, values)) <= {int}:
        raise CertificateError(f"{what} must be a list of integers")
    return values


def _graph(instance: Mapping[str, Any]) -> tuple[int, list[list[int]]]:
    """``n`` and the ``[u, v, w]`` edge rows, validated."""
    n = integer(instance["n"], "n")
    if not 2 <= n <= MAX_VERTICES:
        raise CertificateError(f"n must lie in 2..{MAX_VERTICES}, got {n}")
    edges = instance["edges"]
    if not isinstance(edges, list) or not set(map(type, edges)) <= {list}:
        raise CertificateError("edges must be a list of [u, v, w] rows")
    if not set(map(len, edges)) <= {3}:
        raise CertificateError("edges must be a list of [u, v, w] rows")
    flat = _whole([x for edge in edges for x in edge], "an edge")
    if edges and not (min(flat) >= 0 and max(flat) <= MAX_MAGNITUDE):
        raise CertificateError(f"an edge has a number outside 0..{MAX_MAGNITUDE}")
    rows = np.array(edges, dtype=np.int64).reshape(-1, 3)
    u, v, w = rows.T
    if not ((u < n) & (v < n) & (u != v) & (w >= 1)).all():
        raise CertificateError("an edge is not two distinct vertices and a weight >= 1")
    return n, edges


def objective(instance: Mapping[str, Any], solution: Any) -> int:
    """The cut of ``solution``, a bisection ``[[part A], [part B]]``."""
    n, edges = _graph(instance)
    if not isinstance(solution, list) or len(solution) != 2:
        raise CertificateError("a solution is two parts [[part A], [part B]]")
    side = [-1] * n
    for index, part in enumerate(solution):
        for v in _whole(part, "a part"):
            if not 0 <= v < n or side[v] >= 0:
                raise CertificateError(f"vertex {v} is not a vertex or is listed twice")
            side[v] = index
    if -1 in side or abs(len(solution[0]) - len(solution[1])) > 1:
        raise CertificateError("the parts miss a vertex or differ in size by more than one")
    return sum(w for u, v, w in edges if side[u] != side[v])


def _leaf(
    size: int, laplacian: np.ndarray, scale: int, fixed: dict[tuple[int, int], int], node: list
) -> int:
    """The bound of a ``["dual", y, triangles, pairs, shift, factor]`` leaf."""
    if len(node) != 6:
        raise CertificateError('a dual leaf is ["dual", y, triangles, pairs, shift, factor]')
    y, triangles = _whole(node[1], "y"), _whole(node[2], "triangles")
    pairs, lower = _whole(node[3], "pairs"), _whole(node[5], "factor")
    shift = integer(node[4], "shift")
    last = size - 1
    if len(y) != size or len(triangles) % 5 or len(pairs) % 3 or len(lower) != size * last // 2:
        raise CertificateError(
            f"y must have {size} entries, factor {size * last // 2}, a triangle row 5 numbers "
            "and a pair row 3"
        )
    duals = [pairs[row : row + 3] for row in range(0, len(pairs), 3)]
    for i, j, _ in duals:
        if (i, j) not in fixed:
            raise CertificateError(f"pair ({i}, {j}) is not split on the leaf's path")
    z_sum = sum(triangles[4::5])
    magnitude = (
        scale * int(laplacian.max())
        + max(map(abs, y))
        + abs(shift)
        + max(map(abs, triangles), default=0)
        + sum(map(abs, triangles[4::5]))
        + sum(abs(u) for _, _, u in duals)
    )
    if magnitude > MAX_MAGNITUDE or max(map(abs, lower)) > MAX_MAGNITUDE:
        raise CertificateError(f"a leaf's numbers add up past {MAX_MAGNITUDE}")
    rows = np.array(triangles, dtype=np.int64).reshape(-1, 5)
    a, b, c, sign, z = rows.T
    valid = (a >= 0) & (a < b) & (b < c) & (c < size) & (sign >= 0) & (sign < 4) & (z >= 0)
    if not valid.all():
        raise CertificateError("a triangle row is not 0 <= i < j < k < N, sign in 0..3, Z >= 0")
    total = sum(y) + shift * size - 2 * z_sum + 2 * sum(u * fixed[i, j] for i, j, u in duals)
    matrix = scale * laplacian
    matrix[np.diag_indices(size)] -= np.array(y, dtype=np.int64) + shift
    signs = np.array(SIGNS, dtype=np.int64)[sign]
    first = np.concatenate([a, b, a, [i for i, _, _ in duals]]).astype(np.int64)
    second = np.concatenate([b, c, c, [j for _, j, _ in duals]]).astype(np.int64)
    values = -np.concatenate([(signs * z[:, None]).T.ravel(), [u for _, _, u in duals]])
    np.add.at(matrix, (first, second), values.astype(np.int64))
    np.add.at(matrix, (second, first), values.astype(np.int64))
    q = matrix[:last, :last] - matrix[:last, last:] - matrix[last, :last] + matrix[last, last]
    factor = np.zeros((last, last), np.int64)
    factor[np.tril_indices(last)] = lower
    largest = max(map(abs, lower))
    if last * largest * largest >= 1 << 62:
        raise CertificateError("the factor's entries are too large for an exact int64 product")
    rho = _norm_bound(q - factor @ factor.T)
    return -((rho * last - total) // (4 * scale))


def _norm_bound(residual: np.ndarray) -> int:
    """An integer ``rho >= ||R||_2`` for the symmetric ``R``: the least of the largest row sum
    of ``|R|`` and, when ``R R`` fits int64, ``ceil(sqrt(largest row sum of |R R|))``
    (``||R||_2^2 = ||R R||_2``, and a row sum bounds a symmetric matrix's norm)."""
    largest = int(np.abs(residual).max())
    size = residual.shape[0]
    if size * largest * largest >= 1 << 62:  # row sums of int64 could wrap: Python integers
        return int(np.abs(residual).astype(object).sum(axis=1).max())
    rows = int(np.abs(residual).sum(axis=1).max())
    square = int(np.abs(residual @ residual).sum(axis=1, dtype=object).max())
    return min(rows, math.isqrt(square - 1) + 1 if square else 0)


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
    """The lower bound on the minimum bisection that ``certificate`` proves."""
    n, edges = _graph(instance)
    if certificate.get("kind") != "sdp" or set(certificate) != {"kind", "scale", "tree"}:
        raise CertificateError('expected {"kind": "sdp", "scale": D, "tree": [...]}')
    scale, tree = integer(certificate["scale"], "scale"), certificate["tree"]
    if not 1 <= scale <= MAX_MAGNITUDE or not isinstance(tree, list) or not tree:
        raise CertificateError(f"scale must lie in 1..{MAX_MAGNITUDE} and tree be a non-empty list")
    size = n + n % 2
    degrees = [0] * size
    for u, v, w in edges:
        degrees[u] += w
        degrees[v] += w
    if scale * max(degrees) > MAX_MAGNITUDE:
        raise CertificateError(f"the scale times a weighted degree exceeds {MAX_MAGNITUDE}")
    laplacian = np.diag(np.array(degrees, dtype=np.int64))
    if edges:
        u, v, w = np.array(edges, dtype=np.int64).T
        np.add.at(laplacian, (u, v), -w)
        np.add.at(laplacian, (v, u), -w)
    fixed: dict[tuple[int, int], int] = {}
    open_splits: list[list[Any]] = []  # [pair, which subtree] of each split on the path
    least: int | None = None
    for index, node in enumerate(tree):
        if least is not None and not open_splits:
            raise CertificateError(f"node {index} follows the end of the tree")
        if not isinstance(node, list) or not node or node[0] not in ("split", "dual"):
            raise CertificateError(f"node {index} is neither a split nor a dual leaf")
        if node[0] == "split":
            pair = tuple(_whole(node[1:], "a split pair"))
            if len(pair) != 2 or not 0 <= pair[0] < pair[1] < size or pair in fixed:
                raise CertificateError(f"split {list(pair)} is no new pair of vertices")
            fixed[pair] = 1
            open_splits.append([pair, 0])
            continue
        leaf = _leaf(size, laplacian, scale, fixed, node)
        least = leaf if least is None else min(least, leaf)
        while open_splits and open_splits[-1][1] == 1:
            del fixed[open_splits.pop()[0]]
        if open_splits:
            open_splits[-1][1] = 1
            fixed[open_splits[-1][0]] = -1
    if least is None or open_splits:
        raise CertificateError("the tree ends before every split has two subtrees")
    divisor = math.gcd(*(w for _, _, w in edges))
    if divisor == 0:
        return 0
    return max(0, -(-least // divisor) * divisor)
