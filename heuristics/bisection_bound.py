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

The proof (:func:`certified_value`): every (y, z) the optimiser evaluates is certified from the
least eigenvalue that LAPACK computed for its smoothed value (free of charge), the whole value
lowered by an explicit margin for floating-point error (a backward-stable eigensolver's error
bound with generous constants, the rounding of the reflector and of the sums). The early rounds
of small graphs solve in float32, whose margin is far larger: a point there that may reach the
goal gets its least eigenvalue again in float64 (:data:`SINGLE_PRECISION_WIDTH`). The optimiser's
own estimate is never used. Every cut is a multiple of the weights' gcd g, so the best certified
value r becomes the least multiple of g that is >= r; the first point whose r reaches the goal
ends the ascent mid-round. An ascent without branching whose budget ends within
:data:`EXTENSION_GAP` of its goal gets :data:`EXTENSION_SHARE` more work, once.

The certificate (:func:`triangle_certificate`, checked by :mod:`npgym.certificates.min_bisection`,
whose docstring is the format): the best point is scaled by a power of two ``D``, rounded to
integers, and the matrix on the vectors orthogonal to all-ones, shifted below its least
eigenvalue, gets a rounded integer Cholesky factor; the checker pays for the factor's residual
exactly, so the bound is exact, never the float estimate. Where the root's bound falls short of
a target, a branch and bound on vertex pairs (``x_i x_j = +1`` or ``-1``, each a Lagrangian
multiplier in its subtree's dual) certifies the cut leaf by leaf.

Work is counted in eigendecompositions (``work``), never in time, so the bound does not depend
on the machine's load; BLAS runs on one thread (``threadpoolctl``), which makes the arithmetic
the same from run to run and spends no CPU on threads that the small dense problems cannot use.
(Its last unit may still differ between BLAS builds: each machine certifies its own.)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
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
LARGE_GRAPH_VERTICES = 256
"""From this many vertices on (difficulty 2.0 has 480-520), a round separates
:data:`TRIANGLES_PER_VERTEX_LARGE` per vertex instead."""
TRIANGLES_PER_VERTEX_LARGE = 12.0
"""New triangle inequalities per vertex a round on large graphs: at difficulty 2.0, seed 4, six
left the bound 0.06 below the cut at the end of its budget, twelve proved it with 20% fewer
eigendecompositions. At difficulty 1.5 (about 190 vertices) twelve took fewer
eigendecompositions too, but 48% more CPU (median of 5 seeds): the larger working set slows
L-BFGS-B more than the eigensolver saves."""
STEPS_PER_ROUND = 40
"""L-BFGS-B iterations between two separation rounds."""
LINE_SEARCH_STEPS = 5
"""Most evaluations of one L-BFGS-B line search (scipy's default is 20). A line search that
needs more has met the float32 noise or a kink of the least eigenvalue: L-BFGS-B resets its
memory, fails again and ends the round, so the long searches only cost evaluations (at
difficulty 1.5, seeds 0, 3, 4: 875, 684, 829 evaluations to the proof with 20; 793, 659, 786
with 5; seeds 1, 2 alike)."""
STALL_STEPS = 20
"""A round may end once it has made this many L-BFGS-B iterations and its smoothed value has
stalled (:data:`STALL_WINDOW`, :data:`STALL_SHARE`): the early rounds, whose width is large,
converge in about 20 iterations and then only spend evaluations. At difficulty 1.5, seeds 0,
3, 4, 1 needed 696, 578, 679, 1034 evaluations to the proof instead of 793, 659, 786, 1129;
seed 2, which proves only after a long ascent at the width floor, 1939 instead of 1763. Rounds
of fewer steps throughout (25 or 30), or before the floor only, or while the goal is far, saved
more on seeds 0, 3, 4 but cost seed 2 2100-3100; 15 iterations or a share of 0.02 left seed 2
at 2447, a window of 10 iterations cost seed 0 8% more. At difficulty 2.0 (float64), this and
:data:`LINE_SEARCH_STEPS` proved seeds 0 and 4 after 976 and 1283 evaluations instead of
1041 and 1384."""
STALL_WINDOW = 5
"""The stall test's window in L-BFGS-B iterations."""
STALL_SHARE = 0.01
"""A round has stalled when its last :data:`STALL_WINDOW` iterations raised the smoothed value
by at most this share of what the whole round raised it."""
SOFTMIN_CUTOFF = 30.0
"""Eigenvalues more than this many widths above the least carry weight below exp(-30): dropped."""
SINGLE_PRECISION_WIDTH = 1e-3
"""Above this smoothing width (same unit), on graphs below :data:`LARGE_GRAPH_VERTICES`, the
ascent's eigendecompositions run in float32 (1.8 ms against 2.6 ms at 190 vertices): there a
step gains far more than float32's error. Such a point certifies little (float32's margin in
:func:`certified_value`), so one whose value may prove the goal or earn the extension is
confirmed in float64 (:attr:`DualProblem.confirm`). At difficulty 1.5 (seeds 0-9) the same seeds
proved after about as many evaluations; at 2.0 (seed 0, 499 vertices) float32 left the bound
0.7 lower after 22 rounds (7449.6 against 7450.3), which lost the proof."""
CONFIRM_SLACK = 16.0
"""How far a float32 least eigenvalue may be off, in units of float32's roundoff times the norm
of ``M``, when deciding whether a point is worth a float64 eigenvalue (:attr:`DualProblem.confirm`):
a miss only delays a proof to the next point."""
MIN_VIOLATION = 1e-3
"""A triangle inequality violated by less is not separated."""
_SYEVD = {
    dtype.char: scipy.linalg.get_lapack_funcs("syevd", dtype=dtype)
    for dtype in (np.dtype(np.float32), np.dtype(np.float64))
}
"""LAPACK's divide-and-conquer eigensolver by dtype character, called directly
(:attr:`DualProblem.workspace`)."""
_SYRK = scipy.linalg.get_blas_funcs("syrk", dtype=np.float64)
"""BLAS's ``U U^T``, half of it: the triangles' gradient reads X only above its diagonal."""


@njit
def _separation_level(primal: np.ndarray, count: int, start: int, bins: int, width: float) -> int:
    """The least level ``h >= start >= 1`` (below ``bins``) such that at most ``count`` triangle
    inequalities of ``primal`` lie in bins ``>= h``, where a violation's bin is
    ``min(int(violation / width), bins - 1)``; ``bins - 1`` where there is no such level.

    At difficulty 1.5 millions of the 5 million inequalities are violated, and binning them all
    cost 11 ms a round, three times a pass that only compares. So only the bins from a floor
    up are counted, the floor rising while more than ``count`` lie above it: every violation
    in a bin at or above the final floor was counted (the floor only rises), and each level
    below it holds more than ``count``, so the answer is the same (4 ms a round)."""
    n = primal.shape[0]
    histogram = np.zeros(bins, np.int64)
    floor, above = start, 0  # above: how many counted lie in bins >= floor
    cut = (floor - 0.5) * width  # below it a violation's bin is below the floor
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
                    if violation > cut:
                        level = min(int(violation / width), bins - 1)
                        if level >= floor:
                            histogram[level] += 1
                            above += 1
                            while floor < bins - 1 and above - histogram[floor] > count:
                                above -= histogram[floor]
                                floor += 1
                            cut = (floor - 0.5) * width
    level = floor  # above: how many lie in bins >= level, exactly
    while level < bins - 1 and above > count:
        above -= histogram[level]
        level += 1
    return level


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
    level = _separation_level(primal, count, int(MIN_VIOLATION / width), bins, width)
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
def _triangle_gradient(primal: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """``out[t] = -1 - <T_t, X>`` for the primal matrix X: the dual's derivative in z_t."""
    for t in range(rows.shape[0]):
        i, j, k, sign = rows[t, 0], rows[t, 1], rows[t, 2], rows[t, 3]
        out[t] = -1.0 - (
            SIGNS[sign, 0] * primal[i, j]
            + SIGNS[sign, 1] * primal[j, k]
            + SIGNS[sign, 2] * primal[i, k]
        )


@njit
def _restricted(
    cost: np.ndarray,
    free: np.ndarray,
    pairs: np.ndarray,
    triangles: np.ndarray,
    multipliers: np.ndarray,
    reflector: np.ndarray,
    reflector_norm: float,
) -> tuple[np.ndarray, float]:
    """:meth:`DualProblem.restrict` of ``M = C - Diag(y) - sum_p u_p P_p - sum_t z_t T_t``
    (``P_p``: 1/2 at the pair; ``free`` holds y then u) and the Frobenius norm of ``M`` (for
    :func:`certified_value`), in one pass: the ascent's matrix work per evaluation without
    numpy's temporaries. The restriction comes in Fortran order, which LAPACK works on in
    place where a C-ordered matrix costs a transposed copy."""
    n = cost.shape[0]
    matrix = cost.copy()
    for i in range(n):
        matrix[i, i] -= free[i]
    for p in range(pairs.shape[0]):
        i, j = pairs[p, 0], pairs[p, 1]
        matrix[i, j] -= 0.5 * free[n + p]
        matrix[j, i] -= 0.5 * free[n + p]
    _subtract_triangles(matrix, triangles, multipliers)
    square = 0.0
    product = np.zeros(n)
    for i in range(n):
        for j in range(n):
            square += matrix[i, j] * matrix[i, j]
            product[i] += matrix[i, j] * reflector[j]
    curvature = 0.0
    for i in range(n):
        curvature += reflector[i] * product[i]
    a = product * (2.0 / reflector_norm) - reflector * (2.0 * curvature / reflector_norm**2)
    transposed = np.empty((n - 1, n - 1))  # column j of the restriction is row j here
    for j in range(1, n):  # matrix is exactly symmetric: its row j is its column j
        for i in range(1, n):
            transposed[j - 1, i - 1] = matrix[j, i] - a[i] * reflector[j] - reflector[i] * a[j]
    return transposed.T, math.sqrt(square)


class DualProblem:
    """The dual's data: C = L/4 (padded to an even size), the reflector onto the vectors
    orthogonal to all-ones, and the working set of triangle inequalities."""

    def __init__(self, weights: np.ndarray) -> None:
        size = weights.shape[0] + weights.shape[0] % 2
        padded = np.zeros((size, size))
        padded[: weights.shape[0], : weights.shape[0]] = weights
        self.n = size
        self.cost = (np.diag(padded.sum(axis=1)) - padded) / 4.0
        large = size >= LARGE_GRAPH_VERTICES
        self.single_width = (
            math.inf if large else SINGLE_PRECISION_WIDTH * max(1.0, float(np.abs(self.cost).max()))
        )
        """Above this smoothing width the ascent's eigendecompositions run in float32."""
        self.reflector = np.ones(size)
        self.reflector[0] += math.sqrt(size)
        self.reflector_norm = float(self.reflector @ self.reflector)
        self.triangles = np.zeros((0, 4), np.int64)
        self.pairs = np.zeros((0, 2), np.int64)
        """Vertex pairs ``(i, j)``, ``i < j``, fixed to ``x_i x_j = relation`` (a branch)."""
        self.relations = np.zeros(0)
        self.rank_hint = 8
        """How many of the least eigenpairs the last smoothed evaluation needed."""
        restricted = size - 1
        self.workspace = (1 + 6 * restricted + 2 * restricted**2, 3 + 5 * restricted)
        """``?syevd``'s workspace sizes for all eigenvectors (LAPACK's documented minimum,
        which is also what its workspace query answers): sized once, where
        ``scipy.linalg.eigh`` checks its arguments and queries LAPACK on every call."""
        self.confirm = math.inf
        """A float32 evaluation (:data:`SINGLE_PRECISION_WIDTH`) whose value may reach this gets
        its least eigenvalue again in float64, so that it can certify it (set by the search:
        the least value that proves its goal or earns the extension, :data:`EXTENSION_GAP`)."""

    @property
    def free(self) -> int:
        """How many multipliers have no sign: one per vertex (y) and per fixed pair (u)."""
        return self.n + len(self.pairs)

    def branch(self, pair: tuple[int, int], relation: int) -> DualProblem:
        """A copy with ``x_i x_j = relation`` added (the working set of triangles kept)."""
        child = copy.copy(self)
        child.pairs = np.vstack([self.pairs, np.array([pair], np.int64)])
        child.relations = np.append(self.relations, float(relation))
        return child

    def offset(self, free: np.ndarray) -> float:
        """The free multipliers' share of the dual value: ``sum(y) + sum_p u_p s_p``."""
        return float(free[: self.n].sum()) + float(free[self.n :] @ self.relations)

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
        v = self.reflector
        coefficients = (v[1:] @ vectors) * (2.0 / self.reflector_norm)
        full = np.empty((self.n, vectors.shape[1]))
        np.subtract(0.0, v[0] * coefficients, out=full[0])
        np.multiply.outer(v[1:], coefficients, out=full[1:])
        np.subtract(vectors, full[1:], out=full[1:])
        return full

    def smoothed(
        self, point: np.ndarray, width: float
    ) -> tuple[float, np.ndarray, np.ndarray, float]:
        """The smoothed dual at ``point = (y, z)``, its gradient, the primal factor U
        (``X = U U^T``) and, free of charge since the least eigenvalue is at hand, the point's
        :func:`certified_value` (``-inf`` where some ``z`` is negative)."""
        n = self.n
        free, multipliers = point[: self.free], point[self.free :]
        restricted, norm = _restricted(
            self.cost,
            free,
            self.pairs,
            self.triangles,
            multipliers,
            self.reflector,
            self.reflector_norm,
        )
        single = width > self.single_width
        solved = restricted.astype(np.float32) if single else restricted
        size = restricted.shape[0]
        rank = min(size, max(self.rank_hint, 4))
        while True:
            if 6 * rank >= size:  # a sixth of the spectrum on: divide and conquer is cheaper
                rank = size
                lwork, liwork = self.workspace
                values, vectors, info = _SYEVD[solved.dtype.char](
                    solved, compute_v=1, lower=1, lwork=lwork, liwork=liwork, overwrite_a=1
                )  # in place: where solved is restricted (float64), restricted is not read again
                if info:
                    raise np.linalg.LinAlgError(f"?syevd failed (info {info})")
            else:
                values, vectors = scipy.linalg.eigh(
                    solved, check_finite=False, driver="evr", subset_by_index=[0, rank - 1]
                )
            if rank >= size or (values[-1] - values[0]) / width > SOFTMIN_CUTOFF:
                break
            rank = min(size, 2 * rank)
        values = values.astype(np.float64)
        exponents = -(values - values[0]) / width
        kept = int(np.count_nonzero(exponents > -SOFTMIN_CUTOFF))  # a prefix: values ascend
        self.rank_hint = kept + max(4, kept // 4)
        shares = np.exp(exponents[:kept])
        total = float(shares.sum())
        softmin = float(values[0]) - width * math.log(total)
        factor = self.lift(vectors[:, :kept].astype(np.float64, copy=False))  # Fortran order
        factor *= np.sqrt(n * shares / total)
        gradient = np.empty_like(point)
        gradient[:n] = 1.0 - np.einsum("ij,ij->i", factor, factor)
        if len(self.pairs):
            i, j = self.pairs.T
            gradient[n : self.free] = self.relations - np.einsum("ij,ij->i", factor[i], factor[j])
        if multipliers.size:  # X = U U^T once (BLAS) beats three rank-long dots per triangle
            lower = _SYRK(1.0, factor.T, trans=1, lower=1)  # X's lower half, in Fortran order
            _triangle_gradient(lower.T, self.triangles, gradient[self.free :])  # reads i < j
        value = self.offset(free) - float(multipliers.sum()) + n * softmin
        certified = -math.inf
        if not multipliers.size or multipliers.min() >= 0.0:
            least, precision = float(values[0]), float(np.finfo(solved.dtype).eps)
            estimate = value + n * (least - softmin)  # the dual value itself, uncertified
            if single and estimate + n * CONFIRM_SLACK * precision * norm >= self.confirm:
                least = float(
                    scipy.linalg.eigh(
                        restricted, eigvals_only=True, check_finite=False, subset_by_index=[0, 0]
                    )[0]
                )
                precision = float(np.finfo(np.float64).eps)
            certified = certified_value(self, norm, free, multipliers, least, precision)
        return value, gradient, factor, certified


def certified_value(
    problem: DualProblem,
    norm: float,
    free: np.ndarray,
    multipliers: np.ndarray,
    least: float,
    precision: float = float(np.finfo(np.float64).eps),
) -> float:
    """``sum(y) + sum_p u_p s_p - sum(z) + n lambda_min`` at ``(y, u, z)`` (z >= 0), lowered by
    a margin for every floating-point error: a lower bound on every bisection's cut that meets
    the problem's fixed pairs. ``norm`` is the Frobenius norm of ``M`` at the point and ``least``
    its restriction's least eigenvalue as a backward-stable LAPACK eigensolver computed it in
    the arithmetic of unit roundoff ``precision`` (float64's or, for a restriction rounded to
    float32 first, float32's: the rounding moves each eigenvalue by less than ``precision``
    times the norm)."""
    n = problem.n
    epsilon = float(np.finfo(np.float64).eps)
    eigenvalue_error = 64.0 * n * precision * norm + 1e-12 * norm
    sum_error = 4.0 * epsilon * (float(np.abs(free).sum() + np.abs(multipliers).sum()) + n)
    value = problem.offset(free) - float(multipliers.sum()) + n * float(least)
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
    triangles)`` row per round of the root. The bound is the one of
    :func:`triangle_certificate`.
    """
    return triangle_certificate(weights, work, target, log)[0]


def triangle_certificate(
    weights: np.ndarray,
    work: int,
    target: int | None = None,
    log: list[Any] | None = None,
    branch: bool = True,
) -> tuple[int, dict[str, Any] | None]:
    """:func:`triangle_bound` and its certificate (``npgym.certificates.min_bisection``'s
    ``"sdp"`` kind; ``None`` for a graph of fewer than 2 vertices): the bound is what the
    certificate proves, computed in exact integer arithmetic.

    With ``branch`` and a ``target``, the root's ascent gets :data:`ROOT_SHARE` of ``work``
    (else all of it, and :data:`EXTENSION_SHARE` more where it ends within
    :data:`EXTENSION_GAP` of the target). Where it falls short of the target, a depth-first
    branch and bound splits on vertex pairs (the vertex of largest weighted degree against the
    one whose relation to it the primal matrix leaves most open, weighted by its degree): both
    subtrees warm-start from their parent's multipliers, each ascent with :data:`NODE_SHARE` of
    ``work``, and a subtree whose bound reaches the target is a leaf. When the budget ends, an
    unexplored subtree is closed by its parent's certificate, which holds there too.
    """
    weights = np.asarray(weights, dtype=np.int64)
    if weights.shape[0] < 2:
        return 0, None
    divisor = int(np.gcd.reduce(weights[np.triu_indices(weights.shape[0], 1)]))
    problem = DualProblem(weights)
    scale = certificate_scale(problem)
    if divisor == 0:
        return 0, zero_certificate(weights.shape[0])
    with threadpool_limits(limits=1, user_api="blas"):
        search = _Search(problem, divisor, scale, int(work), target if branch else None, log)
        search.goal = target
        tree = search.run()
    bound = min(search.leaves)
    return bound, {"kind": "sdp", "scale": scale, "tree": tree}


ROOT_SHARE = 0.5
"""Share of the work that the root's ascent may spend when a target is given."""
NODE_SHARE = 0.05
"""Share of the work that each branch-and-bound node's ascent may spend."""
EXTENSION_SHARE = 0.5
"""Share of the work that an ascent without branching may add when its budget ends within
:data:`EXTENSION_GAP` of the goal (at difficulty 2.0 the bound is still rising by about half a
unit a round there, where a branch and bound would cost far more)."""
EXTENSION_GAP = 2.0
"""Largest distance from the certified value to the goal, in units of the weights' common
divisor, at which the ascent's budget is extended."""
LOSS_SAFETY = 1.25
"""Factor on the rounding cost an exact leaf showed, before the next one is tried."""
MAX_DEPTH = 24
"""Deepest branching (the certificate grows by a dense factor per leaf)."""
PAIR_CAP = 64.0
"""Largest multiplier of a fixed pair, in units of C's largest entry: where a branch's fixings
leave no bisection the dual is unbounded, and the cap keeps its certificate's numbers small
(:data:`MAX_LEAF_MAGNITUDE`) while still proving far above any cut."""
MAX_LEAF_MAGNITUDE = 1 << 57
"""Largest sum of a leaf's scaled multipliers (the checker refuses past 2**58)."""


def zero_certificate(n: int) -> dict[str, Any]:
    """A certificate of the bound 0 (every cut is >= 0) on an ``n``-vertex graph: all duals 0."""
    size = n + n % 2
    return {"kind": "sdp", "scale": 1, "tree": [_zero_leaf(size)]}


def _zero_leaf(size: int) -> list[Any]:
    """A dual leaf with every number 0: it proves the bound 0."""
    return ["dual", [0] * size, [], [], 0, [0] * (size * (size - 1) // 2)]


def certificate_scale(problem: DualProblem) -> int:
    """The certificate's denominator ``D``: a power of two that keeps ``D`` times the
    Laplacian's entries below ``2**57 / N``, so the shifted matrix's entries stay below about
    ``2**60 / N``, the factor's squares too, and the checker's product in int64. The rounding
    costs about ``0.1 N^2 sqrt(L_max / D)`` before the norm bound's gain (0.01 units at
    n = 52)."""
    largest = max(int(np.rint(4.0 * np.abs(problem.cost).max())), 1)
    return 1 << max(0, 57 - problem.n.bit_length() - largest.bit_length())


def _norm_bound(residual: np.ndarray) -> int:
    """The checker's ``rho`` (:mod:`npgym.certificates.min_bisection`), computed alike: the
    least of the largest row sum of ``|R|`` and the root of the largest row sum of ``|R R|``."""
    largest = int(np.abs(residual).max())
    size = residual.shape[0]
    if size * largest * largest >= 1 << 62:
        return int(np.abs(residual).astype(object).sum(axis=1).max())
    rows = int(np.abs(residual).sum(axis=1).max())
    square = int(np.abs(residual @ residual).sum(axis=1, dtype=object).max())
    return min(rows, math.isqrt(square - 1) + 1 if square else 0)


class _Search:
    """:func:`triangle_certificate`'s ascents and branch and bound, one work budget."""

    def __init__(
        self,
        problem: DualProblem,
        divisor: int,
        scale: int,
        work: int,
        target: int | None,
        log: list[Any] | None,
    ) -> None:
        self.root, self.divisor, self.scale = problem, divisor, scale
        self.work, self.left, self.target, self.log = work, work, target, log
        self.extension = int(EXTENSION_SHARE * work) if target is None else 0
        """Work that an ascent ending near the goal may add (:data:`EXTENSION_GAP`), once; none
        where a branch and bound shares the budget."""
        self.goal = target
        """The bound that ends an ascent (the target, also where nothing branches)."""
        self.loss = 0.0
        """How far below its certified value an exact leaf may land (learnt from the leaves
        that fell short of the goal)."""
        self.leaves: list[int] = []
        self.degrees = problem.cost.diagonal()

    def run(self) -> list[Any]:
        """The certificate's tree, flattened in pre-order."""
        problem, n = self.root, self.root.n
        point = np.diag(problem.cost).copy()  # y = diag(C), no triangles yet
        scale = max(1.0, float(np.abs(problem.cost).max()))
        budget = self.left if self.target is None else max(1, int(ROOT_SHARE * self.work))
        width = SMOOTHING_START * scale
        bound, leaf, point, width = self.ascend(problem, point, width, budget, self.log)
        tree: list[Any] = []
        self.expand(problem, point, width, bound, leaf or _zero_leaf(n), 0, tree)
        return tree

    def expand(
        self,
        problem: DualProblem,
        point: np.ndarray,
        width: float,
        bound: int,
        leaf: list[Any],
        depth: int,
        tree: list[Any],
    ) -> None:
        """Append the subtree of a node whose ascent ended at ``point`` proving ``bound``."""
        target = self.target
        if target is None or bound >= target or depth >= MAX_DEPTH or self.left <= 1:
            tree.append(leaf)
            self.leaves.append(bound)
            return
        pair = self.pick(problem, point, width)
        if pair is None:
            tree.append(leaf)
            self.leaves.append(bound)
            return
        tree.append(["split", *pair])
        budget = max(1, int(NODE_SHARE * self.work))
        for relation in (1, -1):
            child = problem.branch(pair, relation)
            free = problem.free
            start = np.concatenate([point[:free], [0.0], point[free:]])
            if self.left <= 1:
                tree.append(leaf)
                self.leaves.append(bound)
                continue
            found, found_leaf, end, end_width = self.ascend(child, start, width, budget, None)
            if found_leaf is None or found < bound:
                found, found_leaf = bound, leaf  # the parent's certificate holds here too
            self.expand(child, end, end_width, found, found_leaf, depth + 1, tree)

    def pick(self, problem: DualProblem, point: np.ndarray, width: float) -> tuple[int, int] | None:
        """The pair to split: the vertex of largest weighted degree against the one whose
        relation to it is most open (``|X_rv|`` small), weighted by degree; ``None`` when every
        pair with it is fixed."""
        _, _, factor, _ = problem.smoothed(point, width)
        self.left -= 1
        root = int(np.argmax(self.degrees))
        openness = (1.0 - np.minimum(np.abs(factor @ factor[root]), 1.0)) * (self.degrees + 1.0)
        openness[root] = -1.0
        for i, j in problem.pairs.tolist():
            if root in (i, j):
                openness[i + j - root] = -1.0
        vertex = int(np.argmax(openness))
        if openness[vertex] < 0:
            return None
        return (min(root, vertex), max(root, vertex))

    def ascend(
        self,
        problem: DualProblem,
        point: np.ndarray,
        width: float,
        budget: int,
        log: list[Any] | None,
    ) -> tuple[int, list[Any] | None, np.ndarray, float]:
        """Rounds of smoothed ascent (each :data:`STEPS_PER_ROUND` iterations, or fewer once it
        stalls: :data:`STALL_STEPS`) and triangle separation from ``point`` within ``budget``
        eigendecompositions (plus :attr:`extension` once, where the budget ends within
        :data:`EXTENSION_GAP` of the goal; ending at the goal): the best certified bound, its
        leaf (``None`` when no bound above 0), the last point and smoothing width."""
        n, free, divisor = problem.n, problem.free, self.divisor
        last_width = SMOOTHING_END * max(1.0, float(np.abs(problem.cost).max()))
        left = min(budget, self.left)
        spent = left
        cap = np.full(free - n, PAIR_CAP * max(1.0, float(np.abs(problem.cost).max())))
        best, proven, leaf = -math.inf, 0, None
        best_at: tuple[np.ndarray, np.ndarray, np.ndarray, float] | None = None
        while left > 0:
            count = point.size - free
            if self.goal is not None:  # where it may prove, or earn the extension
                problem.confirm = self.goal - divisor * max(
                    1.0 - self.loss / divisor, EXTENSION_GAP
                )
            seen = _Seen(problem, best, self.reaches)
            try:
                end = scipy.optimize.minimize(
                    seen,
                    point,
                    args=(width,),
                    jac=True,
                    method="L-BFGS-B",
                    callback=seen.iterated,
                    bounds=scipy.optimize.Bounds(  # arrays: a list of pairs costs a conversion
                        np.concatenate([np.full(n, -np.inf), -cap, np.zeros(count)]),
                        np.concatenate([np.full(n, np.inf), cap, np.full(count, np.inf)]),
                    ),
                    options={
                        "maxiter": STEPS_PER_ROUND,
                        "maxfun": max(1, min(left, STEPS_PER_ROUND + 10)),
                        "maxcor": 20,
                        "maxls": LINE_SEARCH_STEPS,
                        "ftol": 0,
                        "gtol": 0,
                    },
                ).x
            except _GoalReachedError:
                assert seen.point is not None  # kept right before the raise
                end = np.concatenate(seen.point)  # certified, so its z are >= 0 already
            except _RoundStalledError:
                assert seen.iterate is not None  # kept right before the raise
                end = seen.iterate
            point = np.concatenate([end[:free], np.maximum(end[free:], 0.0)])
            left -= seen.calls
            if seen.point is not None and seen.best > best:
                best, best_at = seen.best, (problem.triangles, *seen.point, seen.best)
                if self.reaches(best):
                    proven, leaf = self.exact(problem, best_at, proven, leaf)  # confirms it
                    best_at = None
            if log is not None:
                log.append((len(log) + 1, width, seen.smoothed, best, count))
            if self.goal is not None and proven >= self.goal:
                break
            if left <= 1 and self.goal is not None and self.goal - best <= EXTENSION_GAP * divisor:
                left, spent = left + self.extension, spent + self.extension
                self.extension = 0
            if left <= 1:
                break
            values, multipliers = point[:free], point[free:]
            factor = seen.factor_at(point)
            if factor is None:  # the round's end point is not its last evaluation
                _, _, factor, _ = problem.smoothed(point, width)
                left -= 1
            active = multipliers > 0.0
            kept, multipliers = problem.triangles[active], multipliers[active]
            per_vertex = (
                TRIANGLES_PER_VERTEX_LARGE if n >= LARGE_GRAPH_VERTICES else TRIANGLES_PER_VERTEX
            )
            found_rows = most_violated(factor @ factor.T, int(per_vertex * n))
            new = found_rows[~np.isin(_row_keys(found_rows, n), _row_keys(kept, n))]
            problem.triangles = np.vstack([kept, new])
            point = np.concatenate([values, multipliers, np.zeros(len(new))])
            width = max(width * DECAY, last_width)
        self.left = max(0, self.left - (spent - left))
        if best_at is not None:
            proven, leaf = self.exact(problem, best_at, proven, leaf)
        return proven, leaf, point, width

    def exact(
        self,
        problem: DualProblem,
        at: tuple[np.ndarray, np.ndarray, np.ndarray, float],
        proven: int,
        leaf: list[Any] | None,
    ) -> tuple[int, list[Any] | None]:
        """The better of ``(proven, leaf)`` and the exact leaf of the point ``at``
        (triangles, free multipliers, triangle multipliers, certified value): an exact leaf
        costs an eigendecomposition and a Cholesky factor, so only a point that may prove more
        gets one. Where it falls short of the goal, its rounding's cost (the certified value
        less the leaf's) raises :attr:`loss`, so the next try waits for a point that clears it."""
        triangles, values, multipliers, certified = at
        current = problem.triangles
        problem.triangles = triangles
        found, found_leaf, exact = integer_leaf(
            problem, values, multipliers, self.divisor, self.scale
        )
        problem.triangles = current
        if self.goal is not None and found < self.goal:  # the float value promised more
            self.loss = max(self.loss, LOSS_SAFETY * (certified - exact))
        return (found, found_leaf) if found > proven else (proven, leaf)

    def reaches(self, certified: float) -> bool:
        """Whether the certified value ``certified``, less the exact leaf's :attr:`loss`, proves
        the goal: only then is an exact leaf worth its cost before the ascent ends."""
        goal = self.goal
        return goal is not None and _integer_bound(certified - self.loss, self.divisor) >= goal


def integer_leaf(
    problem: DualProblem,
    free: np.ndarray,
    multipliers: np.ndarray,
    divisor: int,
    scale: int,
) -> tuple[int, list[Any] | None, float]:
    """The dual point ``(y, u, z)`` as an exact certificate leaf (``["dual", ...]``, denominator
    ``scale``), the bound it proves (a multiple of ``divisor``, >= 0; ``None`` and 0 when the
    shifted matrix has no Cholesky factor) and that bound before rounding (``-inf`` for none).

    ``y``, ``u`` and ``z`` are scaled and rounded, the least eigenvalue on the vectors
    orthogonal to all-ones lowered by a margin for the factor's rounding, and the rounded
    Cholesky factor of the shifted matrix leaves a residual whose row sums the bound pays for.
    """
    n = problem.n
    largest = 4.0 * scale * max(float(np.abs(free).max()), float(multipliers.sum()))
    if not largest < MAX_LEAF_MAGNITUDE:  # also NaN
        return 0, None, -math.inf
    laplacian = np.rint(4.0 * problem.cost).astype(np.int64)
    y = np.rint(4.0 * scale * free[:n]).astype(np.int64)
    u = np.rint(2.0 * scale * free[n:]).astype(np.int64)
    z = np.rint(2.0 * scale * multipliers).astype(np.int64)
    used = z > 0
    rows, z = problem.triangles[used], z[used]
    magnitude = scale * int(laplacian.max()) + int(np.abs(y).max()) + int(np.abs(u).sum())
    if magnitude + int(z.sum()) > MAX_LEAF_MAGNITUDE:
        return 0, None, -math.inf
    matrix = scale * laplacian - np.diag(y)
    for (i, j, k, sign), weight in zip(rows.tolist(), z.tolist(), strict=True):
        for (a, b), s in zip(((i, j), (j, k), (i, k)), SIGNS[sign], strict=True):
            matrix[a, b] -= int(s) * weight
            matrix[b, a] -= int(s) * weight
    for (i, j), weight in zip(problem.pairs.tolist(), u.tolist(), strict=True):
        matrix[i, j] -= weight
        matrix[j, i] -= weight
    restricted = problem.restrict(matrix.astype(np.float64))
    least = float(scipy.linalg.eigh(restricted, eigvals_only=True, subset_by_index=[0, 0])[0])
    last = n - 1
    margin = max(1.0, last * last * float(np.abs(matrix).max()) * 2.0**-48)
    offset = int(y.sum()) - 2 * int(z.sum()) + 2 * int(u @ problem.relations.astype(np.int64))
    for _ in range(8):
        shift = math.floor(least - margin)
        shifted = matrix - shift * np.eye(n, dtype=np.int64)
        q = (
            shifted[:last, :last]
            - shifted[:last, last:]
            - shifted[last, :last]
            + shifted[last, last]
        )
        try:
            factor = np.rint(np.linalg.cholesky(q.astype(np.float64))).astype(np.int64)
        except np.linalg.LinAlgError:
            margin *= 16.0
            continue
        rho = _norm_bound(q - factor @ factor.T)
        total = offset + shift * n - rho * last
        leaf = -(-total // (4 * scale))
        triangles = np.column_stack([rows, z]).ravel().tolist() if z.size else []
        pairs = np.column_stack([problem.pairs, u]).ravel().tolist() if u.size else []
        node = ["dual", y.tolist(), triangles, pairs, shift, factor[np.tril_indices(last)].tolist()]
        return max(0, -(-leaf // divisor) * divisor), node, total / (4 * scale)
    return 0, None, -math.inf


def _row_keys(rows: np.ndarray, n: int) -> np.ndarray:
    """One integer per triangle row ``(i, j, k, sign)`` of an ``n``-vertex problem."""
    return ((rows[:, 0] * n + rows[:, 1]) * n + rows[:, 2]) * len(SIGNS) + rows[:, 3]


class _RoundStalledError(Exception):
    """Raised by :meth:`_Seen.iterated` to end an ascent round whose smoothed value has
    stalled (:data:`STALL_STEPS`)."""


class _GoalReachedError(Exception):
    """Raised by :class:`_Seen` to end an ascent round at a point that certifies the goal."""


class _Seen:
    """The objective of one round of L-BFGS-B (the smoothed dual, negated). It also keeps the
    best certified point among every point it evaluates, and ends the round
    (:class:`_GoalReachedError`) as soon as one ``reaches`` the goal."""

    def __init__(self, problem: DualProblem, best: float, reaches: Callable[[float], bool]) -> None:
        self.problem, self.best, self.reaches = problem, best, reaches
        self.point: tuple[np.ndarray, np.ndarray] | None = None
        """The best certified point seen: free and triangle multipliers (``None``: none above
        ``best``)."""
        self.calls = 0
        self.smoothed = -math.inf
        """The last smoothed value (for the log)."""
        self.values: list[float] = []
        """The smoothed value at each L-BFGS-B iterate of the round (the stall test)."""
        self.iterate: np.ndarray | None = None
        """The last L-BFGS-B iterate (where a stalled round ends)."""
        self.last: tuple[np.ndarray, np.ndarray] | None = None
        """The last evaluated point and its primal factor: L-BFGS-B's final iterate is its
        last evaluation, so the separation that follows the round needs no eigendecomposition
        of its own (one per round, 2% of the evaluations at difficulty 1.5)."""

    def iterated(self, intermediate_result: scipy.optimize.OptimizeResult) -> None:
        """L-BFGS-B's callback after each iteration: ends the round (:class:`_RoundStalledError`)
        once it has stalled (:data:`STALL_STEPS`). scipy passes the iterate as
        ``intermediate_result`` (the parameter's name selects that form)."""
        values = self.values
        values.append(-float(intermediate_result.fun))
        self.iterate = intermediate_result.x
        if len(values) >= STALL_STEPS and values[-1] - values[-1 - STALL_WINDOW] <= (
            STALL_SHARE * (values[-1] - values[0])
        ):
            raise _RoundStalledError

    def factor_at(self, point: np.ndarray) -> np.ndarray | None:
        """The primal factor of ``point`` at this round's width if it was the last point
        evaluated (the same values, so the same matrix: the reuse is exact), else ``None``."""
        if self.last is None or not np.array_equal(self.last[0], point):
            return None
        return self.last[1]

    def __call__(self, point: np.ndarray, width: float) -> tuple[float, np.ndarray]:
        value, gradient, factor, certified = self.problem.smoothed(point, width)
        self.calls += 1
        self.smoothed = value
        self.last = (point.copy(), factor)
        if certified > self.best:
            free = self.problem.free
            self.best, self.point = certified, (point[:free].copy(), point[free:].copy())
            if self.reaches(certified):
                raise _GoalReachedError
        return -value, -gradient
