"""A certified lower bound on the minimum bisection: the semidefinite relaxation strengthened by
triangle inequalities, through its Lagrangian dual (the bound that proves MinBisection past the
benchmark sizes, where the branch and bound's placement bound is far too weak).

For a bisection x in {-1, 1}^n (sum x = 0; an odd graph gets an isolated dummy vertex, which
changes no cut) the cut is x^T C x with C = L/4 (L the Laplacian). Every such x also satisfies
the triangle inequalities s1 x_i x_j + s2 x_j x_k + s3 x_i x_k >= -1 for the sign patterns of
:data:`SIGNS`. So for any y in R^n and any z >= 0 (one multiplier per triangle t):

    cut(x) >= sum(y) - sum(z) + n * lambda_min(M restricted to the vectors orthogonal to 1),
    M = C - Diag(y) - sum_t z_t T_t,

where T_t holds s/2 at the three pairs of t. The ascent maximises a smoothed version of the right
side (the soft-min of the eigenvalues, itself below lambda_min) with L-BFGS-B, z >= 0 as bounds.
Its gradient is a primal matrix X = n V diag(softmax) V^T; between rounds the most violated
triangle inequalities of X join the working set and the idle ones (z = 0) leave it.

The proof (:func:`certified_value`): after each round the (y, z) the optimiser reached is
evaluated afresh, the least eigenvalue computed by LAPACK and the whole value lowered by an
explicit margin for floating-point error (a backward-stable eigensolver's error bound with
generous constants, the rounding of the reflector and of the sums). The optimiser's own estimate
is never used. Every cut is a multiple of the weights' gcd g, so the best certified value r
becomes the least multiple of g that is >= r.

Work is counted in eigendecompositions (``work``), never in time, so the bound does not depend
on the machine's load; BLAS runs on one thread (``threadpoolctl``), which makes the arithmetic
the same from run to run and spends no CPU on threads that the small dense problems cannot use.
(Its last unit may still differ between BLAS builds: each machine certifies its own.)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg
import scipy.optimize
from threadpoolctl import threadpool_limits

from npgym.heuristics.jit import njit

SIGNS = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=np.float64)
"""The sign patterns (s1, s2, s3) of the triangle inequalities on pairs (i, j), (j, k), (i, k)."""
SMOOTHING_START = 0.05
"""First smoothing width, as a fraction of the largest entry of C."""
SMOOTHING_END = 1e-4
"""Last smoothing width, same unit."""
DECAY = 0.8
"""Per-round decay of the smoothing width, the same for every budget: a faster decay stalls the
ascent short of the bound (measured at difficulty 1.5), and a schedule stretched over the
budget slowed down the instances that prove early."""
TRIANGLES_PER_VERTEX = 6.0
"""At most this many new triangle inequalities per vertex in a separation round."""
STEPS_PER_ROUND = 40
"""L-BFGS-B iterations between two separation rounds."""
SOFTMIN_CUTOFF = 30.0
"""Eigenvalues more than this many widths above the least carry weight below exp(-30): dropped."""
MIN_VIOLATION = 1e-3
"""A triangle inequality violated by less is not separated."""


@njit
def _violation_histogram(primal: np.ndarray, bins: int, width: float) -> np.ndarray:
    """How many triangle inequalities of ``primal`` are violated by each amount (bins of
    ``width``, the last bin open)."""
    n = primal.shape[0]
    histogram = np.zeros(bins, np.int64)
    for i in range(n):
        for j in range(i + 1, n):
            a = primal[i, j]
            for k in range(j + 1, n):
                b, c = primal[j, k], primal[i, k]
                for violation in (
                    -1.0 - (a + b + c),
                    -1.0 - (a - b - c),
                    -1.0 - (-a + b - c),
                    -1.0 - (-a - b + c),
                ):
                    if violation > 0.0:
                        histogram[min(int(violation / width), bins - 1)] += 1
    return histogram


@njit
def _violated(primal: np.ndarray, threshold: float, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``cap`` triangle inequalities violated by more than ``threshold``: rows
    ``(i, j, k, sign)`` and their violations."""
    n = primal.shape[0]
    rows = np.empty((cap, 4), np.int64)
    violations = np.empty(cap, np.float64)
    count = 0
    for i in range(n):
        for j in range(i + 1, n):
            a = primal[i, j]
            for k in range(j + 1, n):
                b, c = primal[j, k], primal[i, k]
                found = (
                    -1.0 - (a + b + c),
                    -1.0 - (a - b - c),
                    -1.0 - (-a + b - c),
                    -1.0 - (-a - b + c),
                )
                for sign in range(4):
                    if found[sign] > threshold and count < cap:
                        rows[count, 0], rows[count, 1], rows[count, 2] = i, j, k
                        rows[count, 3] = sign
                        violations[count] = found[sign]
                        count += 1
    return rows[:count], violations[:count]


def most_violated(primal: np.ndarray, count: int) -> np.ndarray:
    """Up to ``count`` of the most violated triangle inequalities of ``primal`` (by at least
    :data:`MIN_VIOLATION`), most violated first: rows ``(i, j, k, sign)``."""
    bins, width = 2000, 1e-3
    histogram = _violation_histogram(primal, bins, width)
    at_least = np.cumsum(histogram[::-1])[::-1]  # at_least[h]: violated by >= h * width
    level = int(MIN_VIOLATION / width)
    while level < bins - 1 and at_least[level] > count:
        level += 1
    rows, violations = _violated(primal, max(level * width, MIN_VIOLATION) - 1e-15, count)
    return rows[np.lexsort((np.arange(violations.size), -violations))]


@njit
def _subtract_triangles(matrix: np.ndarray, rows: np.ndarray, multipliers: np.ndarray) -> None:
    """``matrix -= sum_t z_t T_t`` in place."""
    for t in range(rows.shape[0]):
        i, j, k, sign = rows[t, 0], rows[t, 1], rows[t, 2], rows[t, 3]
        half = 0.5 * multipliers[t]
        a, b, c = half * SIGNS[sign, 0], half * SIGNS[sign, 1], half * SIGNS[sign, 2]
        matrix[i, j] -= a
        matrix[j, i] -= a
        matrix[j, k] -= b
        matrix[k, j] -= b
        matrix[i, k] -= c
        matrix[k, i] -= c


@njit
def _triangle_gradient(factor: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """``out[t] = -1 - <T_t, U U^T>`` for the primal factor U: the dual's derivative in z_t."""
    rank = factor.shape[1]
    for t in range(rows.shape[0]):
        i, j, k, sign = rows[t, 0], rows[t, 1], rows[t, 2], rows[t, 3]
        ij = jk = ik = 0.0
        for q in range(rank):
            ij += factor[i, q] * factor[j, q]
            jk += factor[j, q] * factor[k, q]
            ik += factor[i, q] * factor[k, q]
        out[t] = -1.0 - (SIGNS[sign, 0] * ij + SIGNS[sign, 1] * jk + SIGNS[sign, 2] * ik)


class DualProblem:
    """The dual's data: C = L/4 (padded to an even size), the reflector onto the vectors
    orthogonal to all-ones, and the working set of triangle inequalities."""

    def __init__(self, weights: np.ndarray) -> None:
        size = weights.shape[0] + weights.shape[0] % 2
        padded = np.zeros((size, size))
        padded[: weights.shape[0], : weights.shape[0]] = weights
        self.n = size
        self.cost = (np.diag(padded.sum(axis=1)) - padded) / 4.0
        self.reflector = np.ones(size)
        self.reflector[0] += math.sqrt(size)
        self.reflector_norm = float(self.reflector @ self.reflector)
        self.triangles = np.zeros((0, 4), np.int64)
        self.rank_hint = 8
        """How many of the least eigenpairs the last smoothed evaluation needed."""

    def matrix(self, diagonal: np.ndarray, multipliers: np.ndarray) -> np.ndarray:
        """``M = C - Diag(y) - sum_t z_t T_t``."""
        matrix = self.cost.copy()
        matrix[np.diag_indices(self.n)] -= diagonal
        if multipliers.size:
            _subtract_triangles(matrix, self.triangles, np.ascontiguousarray(multipliers))
        return matrix

    def restrict(self, matrix: np.ndarray) -> np.ndarray:
        """``M`` on the vectors orthogonal to all-ones: ``(H M H)[1:, 1:]`` with H the
        Householder reflector that sends all-ones to a multiple of e_1 (O(n^2))."""
        v, norm = self.reflector, self.reflector_norm
        product = matrix @ v
        curvature = float(v @ product)
        a = product * (2.0 / norm) - v * (2.0 * curvature / norm**2)
        return (matrix - np.outer(a, v) - np.outer(v, a))[1:, 1:]

    def lift(self, vectors: np.ndarray) -> np.ndarray:
        """Columns of the restricted space as vectors of R^n orthogonal to all-ones."""
        full = np.vstack([np.zeros((1, vectors.shape[1])), vectors])
        v = self.reflector
        return full - np.outer(v, (v[1:] @ vectors) * (2.0 / self.reflector_norm))

    def smoothed(self, point: np.ndarray, width: float) -> tuple[float, np.ndarray, np.ndarray]:
        """The smoothed dual at ``point = (y, z)``, its gradient and the primal factor U
        (``X = U U^T``)."""
        n = self.n
        diagonal, multipliers = point[:n], point[n:]
        restricted = self.restrict(self.matrix(diagonal, multipliers))
        size = restricted.shape[0]
        rank = min(size, max(self.rank_hint, 4))
        while True:
            if 6 * rank >= size:  # a sixth of the spectrum on: divide and conquer is cheaper
                rank = size
                values, vectors = scipy.linalg.eigh(restricted, check_finite=False, driver="evd")
            else:
                values, vectors = scipy.linalg.eigh(
                    restricted, check_finite=False, driver="evr", subset_by_index=[0, rank - 1]
                )
            if rank >= size or (values[-1] - values[0]) / width > SOFTMIN_CUTOFF:
                break
            rank = min(size, 2 * rank)
        exponents = -(values - values[0]) / width
        kept = exponents > -SOFTMIN_CUTOFF
        self.rank_hint = int(kept.sum()) + max(4, int(kept.sum()) // 4)
        shares = np.exp(exponents[kept])
        total = float(shares.sum())
        softmin = float(values[0]) - width * math.log(total)
        factor = np.ascontiguousarray(self.lift(vectors[:, kept]) * np.sqrt(n * shares / total))
        gradient = np.empty_like(point)
        gradient[:n] = 1.0 - np.einsum("ij,ij->i", factor, factor)
        if multipliers.size:
            _triangle_gradient(factor, self.triangles, gradient[n:])
        value = float(diagonal.sum()) - float(multipliers.sum()) + n * softmin
        return value, gradient, factor


def certified_value(problem: DualProblem, diagonal: np.ndarray, multipliers: np.ndarray) -> float:
    """``sum(y) - sum(z) + n lambda_min`` at ``(y, z)`` (z >= 0), lowered by a margin for every
    floating-point error: a lower bound on every bisection's cut."""
    n = problem.n
    matrix = problem.matrix(diagonal, multipliers)
    least = scipy.linalg.eigh(
        problem.restrict(matrix), eigvals_only=True, check_finite=False, subset_by_index=[0, 0]
    )[0]
    epsilon = float(np.finfo(float).eps)
    norm = float(np.linalg.norm(matrix))
    eigenvalue_error = 64.0 * n * epsilon * norm + 1e-12 * norm
    sum_error = 4.0 * epsilon * (float(np.abs(diagonal).sum() + np.abs(multipliers).sum()) + n)
    value = float(diagonal.sum()) - float(multipliers.sum()) + n * float(least)
    return value - (n * eigenvalue_error + sum_error + 1e-9 * max(1.0, abs(value)))


def _integer_bound(value: float, divisor: int) -> int:
    """The least multiple of ``divisor`` (which divides every cut) that is >= ``value``."""
    if not math.isfinite(value) or value <= 0:
        return 0
    return divisor * math.ceil(value / divisor - 1e-12)


def triangle_bound(
    weights: np.ndarray, work: int, target: int | None = None, log: list[Any] | None = None
) -> int:
    """A certified lower bound on the minimum bisection of ``weights`` (symmetric, integer).

    ``work`` counts eigendecompositions (the only budget). ``target`` (the best cut known) ends
    the ascent once a round's certified bound reaches it: the cut is then proven optimal.
    ``log``, when given, receives one ``(round, width, smoothed value, certified value,
    triangles)`` row per round.
    """
    weights = np.asarray(weights, dtype=np.int64)
    if weights.shape[0] < 2:
        return 0
    with threadpool_limits(limits=1, user_api="blas"):
        return _ascend(weights, work, target, log)


def _ascend(weights: np.ndarray, work: int, target: int | None, log: list[Any] | None) -> int:
    """:func:`triangle_bound`'s rounds, BLAS limited to one thread by the caller."""
    divisor = int(np.gcd.reduce(weights[np.triu_indices(weights.shape[0], 1)]))
    if divisor == 0:
        return 0
    problem = DualProblem(weights)
    n = problem.n
    scale = max(1.0, float(np.abs(problem.cost).max()))
    left = int(work)
    diagonal = np.diag(problem.cost).copy()
    multipliers = np.zeros(0)
    width, last_width = SMOOTHING_START * scale, SMOOTHING_END * scale
    best = -math.inf
    while left > 0:
        count = multipliers.size
        evaluated = scipy.optimize.minimize(
            lambda point, width=width: _negated(problem.smoothed(point, width)),
            np.concatenate([diagonal, multipliers]),
            jac=True,
            method="L-BFGS-B",
            bounds=scipy.optimize.Bounds(  # arrays: a list of pairs costs a conversion a call
                np.concatenate([np.full(n, -np.inf), np.zeros(count)]), np.inf
            ),
            options={
                "maxiter": STEPS_PER_ROUND,
                "maxfun": max(1, min(left, STEPS_PER_ROUND + 10)),
                "maxcor": 20,
                "ftol": 0,
                "gtol": 0,
            },
        )
        left -= int(evaluated.nfev)
        diagonal, multipliers = evaluated.x[:n].copy(), np.maximum(evaluated.x[n:], 0.0)
        best = max(best, certified_value(problem, diagonal, multipliers))
        if log is not None:
            log.append((len(log) + 1, width, -float(evaluated.fun), best, count))
        if left <= 1 or (target is not None and _integer_bound(best, divisor) >= target):
            break
        _, _, factor = problem.smoothed(np.concatenate([diagonal, multipliers]), width)
        left -= 1
        active = multipliers > 0.0
        kept, multipliers = problem.triangles[active], multipliers[active]
        found = most_violated(factor @ factor.T, int(TRIANGLES_PER_VERTEX * n))
        new = found[~np.isin(_row_keys(found, n), _row_keys(kept, n))]
        problem.triangles = np.vstack([kept, new])
        multipliers = np.concatenate([multipliers, np.zeros(len(new))])
        width = max(width * DECAY, last_width)
    return _integer_bound(best, divisor)


def _row_keys(rows: np.ndarray, n: int) -> np.ndarray:
    """One integer per triangle row ``(i, j, k, sign)`` of an ``n``-vertex problem."""
    return ((rows[:, 0] * n + rows[:, 1]) * n + rows[:, 2]) * len(SIGNS) + rows[:, 3]


def _negated(evaluated: tuple[float, np.ndarray, np.ndarray]) -> tuple[float, np.ndarray]:
    """The smoothed dual as L-BFGS-B minimises it: value and gradient negated."""
    value, gradient, _ = evaluated
    return -value, -gradient
