"""MinBisection: hand-checked instances, kernel vs. pure twin, solvers vs. brute force."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym.answer import AnswerFormatError
from npgym.heuristics import bisection_bound
from npgym.heuristics import min_bisection as solvers
from npgym.heuristics.bisection_bound import (
    SIGNS,
    STALL_STEPS,
    STALL_WINDOW,
    DualProblem,
    _restricted,
    _RoundStalledError,
    _Seen,
    _separation_level,
    _triangle_gradient,
    triangle_bound,
)
from npgym.tasks.min_bisection import MinBisectionConfig, MinBisectionInstance
from npgym.tasks.min_bisection.generator import NOISE
from npgym.tasks.min_bisection.verifier import check_bisection, check_bisection_python
from tests import helpers

TASK = npgym.get_task("MinBisection")

# A 4-cycle 0-1-2-3 with heavy edges 0-1 and 2-3 and a diagonal 0-2 (hand-checked): the split
# {0, 1} | {2, 3} cuts 1-2, 3-0 and 0-2 (1 + 1 + 2 = 4); the other two splits cut 12.
SQUARE = MinBisectionInstance(n=4, edges=[[0, 1, 5], [1, 2, 1], [2, 3, 5], [0, 3, 1], [0, 2, 2]])
# A path 0-1-2-3-4 whose light middle edge 1-2 is the best cut; the parts have 2 and 3 vertices.
PATH = MinBisectionInstance(n=5, edges=[[0, 1, 3], [1, 2, 1], [2, 3, 3], [3, 4, 3]])


def brute_force(weights: np.ndarray) -> int:
    """Least cut over all bisections, vertex 0 fixed to the first part."""
    n = weights.shape[0]
    best = None
    for size in {n // 2, (n + 1) // 2}:
        for rest in itertools.combinations(range(1, n), size - 1):
            side = np.ones(n, dtype=np.int64)
            side[[0, *rest]] = 0
            cut = int(weights[side == 0][:, side == 1].sum())
            best = cut if best is None else min(best, cut)
    return best


def naive_side(n: int) -> np.ndarray:
    """The first half of the vertices against the rest: a poor incumbent to start from."""
    return (np.arange(n) >= n // 2).astype(np.int64)


def random_weights(rng: np.random.Generator, n: int) -> np.ndarray:
    density = rng.random()
    upper = np.triu(rng.integers(1, 11, size=(n, n)) * (rng.random((n, n)) < density), 1)
    return upper + upper.T


@pytest.mark.parametrize(
    ("answer", "feasible", "objective", "reason"),
    [
        ([[0, 1], [2, 3]], True, 4, ""),
        ([[3, 2], [1, 0]], True, 4, ""),
        ([[0, 2], [1, 3]], True, 12, ""),
        ([[0, 3], [2, 1]], True, 12, ""),
        ([[0, 1], [2, 3, 3]], False, None, "vertex 3 listed twice in part B"),
        ([[0, 0], [2, 3]], False, None, "vertex 0 listed twice in part A"),
        ([[0, 1, 2], [2, 3]], False, None, "vertex 2 is in both parts"),
        ([[0, 1], [2]], False, None, "vertex 3 is in neither part"),
        ([[], []], False, None, "vertex 0 is in neither part"),
        (
            [[0, 1, 2, 3], []],
            False,
            None,
            "the parts have 4 and 0 vertices; their sizes must differ by at most one",
        ),
        (
            [[0], [1, 2, 3]],
            False,
            None,
            "the parts have 1 and 3 vertices; their sizes must differ by at most one",
        ),
        ([[0, 1], [2, 7]], False, None, "vertex 7 does not exist (vertices are 0 to 3)"),
        ([[0, -1], [2, 3]], False, None, "vertex -1 does not exist (vertices are 0 to 3)"),
        (
            [[0, 1], [2, 3], []],
            False,
            None,
            "expected two parts [[part A], [part B]], got a list of 3 items",
        ),
        (
            [0, 1, 2, 3],
            False,
            None,
            "expected two parts [[part A], [part B]], got a list of 4 items",
        ),
        ([0, 1], False, None, "expected a list for the part A, got an integer"),
        (
            [[0, 1.5], [2, 3]],
            False,
            None,
            "expected integers in the part A, got a number with a fraction",
        ),
        ([[0, 1], [2, 10**30]], False, None, "integer out of range in the part B"),
        ([[0, 1] * 500, [2, 3]], False, None, "vertex 0 listed twice in part A"),
    ],
)
def test_square_verdicts(answer: list, feasible: bool, objective: int, reason: str) -> None:
    helpers.assert_verdict(TASK, SQUARE, answer, (feasible, objective, reason))


def test_odd_graphs_split_into_parts_differing_by_one() -> None:
    assert TASK.verify(PATH, [[0, 1], [2, 3, 4]]).objective == 1
    assert TASK.verify(PATH, [[2, 3, 4], [1, 0]]).objective == 1
    assert TASK.verify(PATH, [[0, 1, 2], [3, 4]]).objective == 3
    assert TASK.verify(PATH, [[0, 1, 2, 3], [4]]).reason == (
        "the parts have 4 and 1 vertices; their sizes must differ by at most one"
    )
    reference = TASK.reference(PATH)
    assert (reference.objective, reference.solution) == (1, [[0, 1], [2, 3, 4]])
    assert "one part must have 2 vertices and the other 3" in TASK.prompt(PATH)


def test_square_reference_and_rewards() -> None:
    helpers.assert_exact_reference(TASK, SQUARE, 4, [[[0, 1], [2, 3]]])
    helpers.assert_rewards(
        TASK,
        SQUARE,
        {
            "So: **Answer:** [[2, 3], [0, 1]].": 2.0,
            "Answer: [[0, 2], [1, 3]]": pytest.approx(1 + 4 / 12),
            "Answer: [0, 1, 2, 3]": -2.5,
            "Answer: [[0, 1], [1, 3]]": -0.5,
        },
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "expected a list"),
        ([[0, 1]], "got a list of 1 items"),
        ([[0, 1], "x"], "part B"),
        ([[0, [1]], [2, 3]], "part A"),
        ([[True], [0]], "part A"),
    ],
)
def test_malformed_answers_are_format_errors(value: object, message: str) -> None:
    with pytest.raises(AnswerFormatError, match=message):
        TASK.to_solution(value)


@st.composite
def graphs_and_answers(draw: st.DrawFn) -> tuple[int, list[list[int]], list[int], list[int]]:
    n = draw(st.integers(2, 8))
    pairs = draw(st.lists(st.sampled_from(list(itertools.combinations(range(n), 2))), unique=True))
    edges = [[u, v, draw(st.integers(1, 10))] for u, v in pairs]
    sizes = st.sampled_from([n // 2, (n + 1) // 2]) | st.integers(0, n)
    split = st.permutations(range(n)).flatmap(
        lambda order: sizes.map(lambda k: (list(order[:k]), list(order[k:])))
    )
    loose = st.tuples(
        st.lists(st.integers(-2, n + 1), max_size=n + 2),
        st.lists(st.integers(-2, n + 1), max_size=n + 2),
    )
    part_a, part_b = draw(split | loose)
    return n, edges, part_a, part_b


@given(case=graphs_and_answers())
def test_kernel_agrees_with_python_twin(case: tuple[int, list, list[int], list[int]]) -> None:
    n, edges, part_a, part_b = case
    kernel = check_bisection(
        n,
        helpers.int64s(edges).reshape(-1, 3),
        helpers.int64s(part_a),
        helpers.int64s(part_b),
    )
    assert helpers.ints(kernel) == check_bisection_python(n, edges, part_a, part_b)


def test_solvers_agree_with_brute_force_on_small_instances() -> None:
    rng = np.random.default_rng(1)
    for n in range(2, 13):
        for _ in range(6):
            weights = random_weights(rng, n)
            optimum = brute_force(weights)
            for incumbent in (None, naive_side(n)):  # the heuristic's start, or a poor one
                exact = solvers.branch_and_bound(weights, incumbent)
                assert exact.proven_optimal and exact.objective == optimum == exact.bound
                assert solvers.cut_weight(weights, exact.witness) == optimum
                assert abs(2 * int(exact.witness.sum()) - n) <= 1 and exact.witness[0] == 0
            side, cut = solvers.heuristic_bisection(weights)
            assert cut >= optimum and solvers.cut_weight(weights, side) == cut
            assert abs(2 * int(side.sum()) - n) <= 1


def test_reference_agrees_with_brute_force_on_generated_instances() -> None:
    for seed in range(12):
        n = 6 + seed
        config = {"n_min": n, "n_max": n, "traitors": seed % 3, "double_agents": seed % 2}
        instance = TASK.generate(seed, tier="benchmark", overrides=config)
        reference = TASK.reference(instance)
        assert reference.proven_optimal
        assert reference.objective == brute_force(instance.weights)
        assert TASK.verify(instance, reference.solution).objective == reference.objective


def vectorised_brute_force(weights: np.ndarray) -> int:
    """:func:`brute_force` for graphs up to about 22 vertices: all splits at once in numpy."""
    n = weights.shape[0]
    best = None
    for size in {n // 2, (n + 1) // 2}:
        rest = np.array(list(itertools.combinations(range(1, n), size - 1)), dtype=np.int64)
        first = np.zeros((len(rest), n), dtype=np.int64)
        first[:, 0] = 1
        np.put_along_axis(first, rest.reshape(len(rest), -1), 1, axis=1)
        cuts = ((first @ weights) * (1 - first)).sum(axis=1)
        best = int(cuts.min()) if best is None else min(best, int(cuts.min()))
    return best


@pytest.mark.parametrize("tier", ["hard", "benchmark"])
def test_reference_agrees_with_brute_force_on_larger_instances(tier: str) -> None:
    for n in (18, 21, 22):
        instance = TASK.generate(n, tier=tier, overrides={"n_min": n, "n_max": n})
        assert vectorised_brute_force(instance.weights) == TASK.reference(instance).objective


@pytest.mark.parametrize("node_limit", [1, 5, 50, 500])
def test_node_limit_returns_a_valid_bound(node_limit: int) -> None:
    rng = np.random.default_rng(4)
    for _ in range(3):
        weights = random_weights(rng, 14)
        optimum = brute_force(weights)
        # A one-second triangle bound: the same bounds here as the default 60 s, 70 times cheaper.
        result = solvers.branch_and_bound(weights, naive_side(14), node_limit, bound_effort=1.0)
        assert result.bound <= optimum <= result.objective
        assert result.work <= node_limit
        assert result.proven_optimal == (result.bound == result.objective)


def test_unproven_reference_reports_heuristic_bound_and_gap() -> None:
    config = {"n_min": 60, "n_max": 60, "intra_density": 0.5, "inter_density": 0.5}
    instance = TASK.generate(0, tier="medium", overrides=config)
    reference = TASK.reference(instance, time_limit=1e-6)
    helpers.assert_unproven_reference(TASK, instance, reference)
    assert 0 <= reference.bound < reference.objective


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30))
def test_kernighan_lin_keeps_the_balance_and_never_worsens(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    weights = random_weights(rng, n)
    side = np.zeros(n, dtype=np.int64)
    side[rng.permutation(n)[: n // 2]] = 1
    before = solvers.cut_weight(weights, side)
    gain = solvers.kernighan_lin_pass(weights, side)
    assert int(side.sum()) == n // 2
    assert solvers.cut_weight(weights, side) == before - gain <= before


def test_references_are_deterministic() -> None:
    for tier in npgym.TIERS:
        instance = TASK.generate(7, tier=tier)
        assert helpers.solved_twice(TASK, instance).proven_optimal
        helpers.solved_twice(TASK, instance, exact=False)


@pytest.mark.parametrize("tier", npgym.TIERS)
def test_generator_respects_the_tier(tier: str) -> None:
    for config, instance in helpers.tier_instances(TASK, tier, seeds=5):
        edges = instance.edge_array
        assert edges[:, 2].min() >= 1 and edges[:, 2].max() <= NOISE[1]
        pairs = instance.n * (instance.n - 1) // 2
        # Two communities at intra_density hold about half the pairs' worth of that density.
        assert 0.25 * config.intra_density < len(instance.edges) / pairs < 0.75


def test_separated_communities_without_noise_have_a_zero_cut() -> None:
    config = {"n_min": 20, "n_max": 20, "intra_density": 1.0, "inter_density": 0.0, "noise": 0.0}
    instance = TASK.generate(3, tier="easy", overrides=config)
    assert len(instance.edges) == 2 * 45
    reference = TASK.reference(instance)
    assert reference.objective == 0 and reference.proven_optimal


def test_traitors_pull_the_optimum_away_from_the_communities() -> None:
    base = {"n_min": 30, "n_max": 30, "noise": 0.0, "inter_density": 0.0}
    clean = TASK.generate(5, tier="hard", overrides={**base, "traitors": 0})
    rigged = TASK.generate(5, tier="hard", overrides={**base, "traitors": 3})
    assert TASK.reference(clean).objective == 0
    assert TASK.reference(rigged).objective > 0


def test_prompt_lists_every_edge_under_both_ends() -> None:
    instance = TASK.generate(4, tier="benchmark")
    prompt = TASK.prompt(instance)
    lines = dict(line.split(": ", 1) for line in prompt.splitlines() if line[:1].isdigit())
    assert len(lines) == instance.n
    for u, v, w in instance.edges:
        assert f"{v}:{w}" in lines[str(u)].split() and f"{u}:{w}" in lines[str(v)].split()
    assert f"{len(instance.edges)} edges" in prompt
    isolated = MinBisectionInstance(n=3, edges=[[0, 1, 2]])
    assert "\n2: none\n" in TASK.prompt(isolated)


@pytest.mark.parametrize(
    ("n", "edges", "message"),
    [
        (1, [], "greater than or equal to 2"),
        (3, [[0, 0, 1]], "self-loop"),
        (3, [[0, 1, 1], [1, 0, 2]], "twice"),
        (3, [[0, 5, 1]], "outside"),
        (3, [[-1, 2, 1]], "outside"),
        (3, [[0, 1, 0]], "weight 0"),
        (3, [[0, 1, -3]], "weight -3"),
        (3, [[0, 1, 10**7]], "weights must lie in"),
        (3, [[0, 1, 1.5]], "integer"),
        (3, [[0, 1]], "Field required"),
    ],
)
def test_bad_instances_are_rejected(n: int, edges: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MinBisectionInstance(n=n, edges=edges)


def test_config_override_and_capped_deception() -> None:
    instance = TASK.generate(
        0, tier="benchmark", overrides={"n_min": 6, "n_max": 6, "traitors": 50}
    )
    assert instance.n == 6 and TASK.reference(instance).proven_optimal
    with pytest.raises(ValueError, match="n_min"):
        TASK.config("easy", overrides={"n_min": 40, "n_max": 30})
    assert isinstance(TASK.config("benchmark"), MinBisectionConfig)


@pytest.mark.slow
@given(seed=st.integers(0, 2**32), n=st.integers(2, 11), work=st.sampled_from([5, 50, 400]))
@settings(max_examples=60)
def test_triangle_bound_never_exceeds_the_optimum(seed: int, n: int, work: int) -> None:
    """Brute force on small graphs, odd ones included; given the optimum as its target, the
    bound may reach it but never pass it."""
    weights = random_weights(np.random.default_rng(seed), n)
    optimum = brute_force(weights)
    assert 0 <= triangle_bound(weights, work) <= optimum
    assert triangle_bound(weights, work, target=optimum) <= optimum


@given(seed=st.integers(0, 2**32), n=st.integers(4, 10), scale=st.integers(2, 7))
@settings(max_examples=20)
def test_triangle_bound_rounds_to_the_weights_common_divisor(seed: int, n: int, scale: int) -> None:
    """Every cut is a multiple of the weights' gcd, so the bound is one too, and scaling the
    weights scales a bound that proves the optimum."""
    weights = random_weights(np.random.default_rng(seed), n) * scale
    bound = triangle_bound(weights, 400)
    assert bound % scale == 0
    assert bound <= brute_force(weights)


def test_a_wrong_target_proves_nothing() -> None:
    """A target below the optimum (a wrong hint) does not lift the bound past the optimum."""
    rng = np.random.default_rng(5)
    for n in range(4, 11):
        weights = random_weights(rng, n)
        optimum = brute_force(weights)
        assert triangle_bound(weights, 400, target=max(optimum - 3, 0)) <= optimum


def test_past_the_published_sizes_the_triangle_bound_proves_the_cut() -> None:
    """Difficulty 1.2 (about 105 vertices): the branch and bound's bound could not prove these
    cuts; the triangle bound proves the METIS and Kernighan-Lin cut, and says so."""
    instance = TASK.generate(1, difficulty=1.2)
    assert instance.n >= solvers.BOUND_FIRST_VERTICES
    reference = TASK.reference(instance)
    assert reference.proven_optimal and reference.bound == reference.objective
    assert "triangle inequalities" in reference.solver
    score = TASK.score(instance, TASK.format_answer(reference.solution), reference)
    assert score.feasible and score.objective == reference.objective


def test_the_triangle_bound_is_close_on_planted_communities_on_a_short_budget() -> None:
    instance = TASK.generate(0, tier="benchmark", overrides={"n_min": 200, "n_max": 200})
    exact = TASK.reference(instance, time_limit=1.0)
    assert exact.bound >= 0.9 * exact.objective


def _random_dual(seed: int, n: int) -> tuple[DualProblem, np.ndarray]:
    """A dual problem on random integer weights with two fixed pairs, a few triangles and a
    random point ``(y, u, z)`` (z >= 0)."""
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.integers(0, 6, (n, n)), 1)
    problem = DualProblem(upper + upper.T)
    size = problem.n
    problem = problem.branch((0, 1), 1).branch((1, size - 1), -1)
    triples = np.sort(rng.choice(size, (6, 3), replace=True), axis=1)
    triples = triples[(triples[:, 0] < triples[:, 1]) & (triples[:, 1] < triples[:, 2])]
    problem.triangles = np.column_stack([triples, rng.integers(0, 4, len(triples))])
    point = rng.normal(size=problem.free + len(problem.triangles))
    point[problem.free :] = np.abs(point[problem.free :])
    return problem, point


def _dense_restriction(problem: DualProblem, point: np.ndarray) -> tuple[np.ndarray, float]:
    """``(H M H)[1:, 1:]`` and ``|M|_F``, built densely the slow way."""
    n, free = problem.n, problem.free
    matrix = problem.cost - np.diag(point[:n])
    for (i, j), u in zip(problem.pairs.tolist(), point[n:free], strict=True):
        matrix[i, j] -= u / 2
        matrix[j, i] -= u / 2
    for (i, j, k, sign), z in zip(problem.triangles.tolist(), point[free:], strict=True):
        for (a, b), s in zip(((i, j), (j, k), (i, k)), SIGNS[sign], strict=True):
            matrix[a, b] -= s * z / 2
            matrix[b, a] -= s * z / 2
    v = problem.reflector
    householder = np.eye(n) - 2.0 * np.outer(v, v) / (v @ v)
    return (householder @ matrix @ householder)[1:, 1:], float(np.linalg.norm(matrix))


@given(seed=st.integers(0, 2**32), n=st.integers(3, 12))
@settings(max_examples=30)
def test_the_restriction_kernel_matches_the_dense_construction(seed: int, n: int) -> None:
    """The one-pass kernel builds M (y, fixed pairs, triangles) and its restriction to the
    vectors orthogonal to all-ones exactly as the dense Householder product does."""
    problem, point = _random_dual(seed, n)
    restricted, norm = _restricted(
        problem.cost,
        point[: problem.free],
        problem.pairs,
        problem.triangles,
        point[problem.free :],
        problem.reflector,
        problem.reflector_norm,
    )
    expected, expected_norm = _dense_restriction(problem, point)
    np.testing.assert_allclose(restricted, expected, atol=1e-12)
    assert norm == pytest.approx(expected_norm, rel=1e-12)


@given(seed=st.integers(0, 2**32), n=st.integers(3, 12))
@settings(max_examples=30)
def test_the_triangle_gradient_is_minus_one_less_each_triangles_share_of_x(
    seed: int, n: int
) -> None:
    problem, _ = _random_dual(seed, n)
    factor = np.random.default_rng(seed).normal(size=(problem.n, 3))
    primal = factor @ factor.T
    out = np.empty(len(problem.triangles))
    _triangle_gradient(primal, problem.triangles, out)
    for t, (i, j, k, sign) in enumerate(problem.triangles.tolist()):
        share = SIGNS[sign] @ [primal[i, j], primal[j, k], primal[i, k]]
        assert out[t] == pytest.approx(-1.0 - share)


def test_float32_runs_above_the_width_limit_and_confirms_a_promising_point() -> None:
    """At the limit (width = ``single_width``) an evaluation is float64; just past it float32,
    whose certified value carries float32's far larger margin, unless its value may reach
    ``confirm``: then the least eigenvalue is recomputed in float64 and the value matches."""
    problem, point = _random_dual(7, 40)
    point[problem.free :] = 0.0  # a point whose value is near its certified value
    limit = problem.single_width
    assert 0 < limit < math.inf
    at_limit = problem.smoothed(point, limit)[3]
    past = problem.smoothed(point, math.nextafter(limit, math.inf))[3]
    gap = 64.0 * problem.n**2 * float(np.finfo(np.float32).eps)  # float32's margin, per |M|
    assert past < at_limit - gap
    problem.confirm = -math.inf
    confirmed = problem.smoothed(point, math.nextafter(limit, math.inf))[3]
    assert confirmed == pytest.approx(at_limit, abs=1e-9 * abs(at_limit))


@pytest.mark.parametrize(("vertices", "single"), [(254, True), (255, False)])
def test_large_graphs_never_use_float32(vertices: int, single: bool) -> None:
    """From ``LARGE_GRAPH_VERTICES`` on (255 vertices pad to 256) float32 is off: there it left
    the bound short of the proof at difficulty 2.0."""
    assert bisection_bound.LARGE_GRAPH_VERTICES == 256
    problem = DualProblem(
        np.ones((vertices, vertices), np.int64) - np.eye(vertices, dtype=np.int64)
    )
    assert math.isfinite(problem.single_width) == single


def _histogram_level(primal: np.ndarray, count: int, start: int, bins: int, width: float) -> int:
    """The separation level as a full histogram of every violation finds it (the plain way)."""
    n = primal.shape[0]
    i, j, k = np.array(list(itertools.combinations(range(n), 3))).T
    a, b, c = primal[i, j], primal[j, k], primal[i, k]
    violations = np.concatenate(
        [-1.0 - (a + b + c), -1.0 - (a - b - c), -1.0 - (-a + b - c), -1.0 - (-a - b + c)]
    )
    positive = violations[violations > 0.0]
    binned = np.minimum((positive / width).astype(np.int64), bins - 1)
    at_least = np.cumsum(np.bincount(binned, minlength=bins)[::-1])[::-1]
    level = start
    while level < bins - 1 and at_least[level] > count:
        level += 1
    return level


@given(
    seed=st.integers(0, 2**32),
    n=st.integers(3, 14),
    count=st.integers(0, 60),
    grid=st.sampled_from([0, 2, 3]),
    bins=st.sampled_from([5, 2000]),
)
@settings(max_examples=200)
def test_the_separation_level_is_the_full_histograms(
    seed: int, n: int, count: int, grid: int, bins: int
) -> None:
    """The one pass that counts only the bins above a rising floor finds the level a full
    histogram finds: on random primal matrices, on matrices whose violations fall on the bins'
    edges (entries on a grid of the bin width) and where the last, open bin holds the answer."""
    rng = np.random.default_rng(seed)
    factor = rng.normal(size=(n, int(rng.integers(1, 5)))) * rng.uniform(0.1, 1.5)
    primal = factor @ factor.T
    if grid:
        primal = np.round(primal, grid)
    expected = _histogram_level(primal, count, 1, bins, 1e-3)
    assert _separation_level(primal, count, 1, bins, 1e-3) == expected


def _iterate(value: float) -> scipy.optimize.OptimizeResult:
    """What L-BFGS-B hands its callback after an iteration: the iterate and its (negated)
    objective."""
    return scipy.optimize.OptimizeResult(x=np.array([value]), fun=-value)


def test_a_round_ends_once_it_stalls_and_not_before_its_least_steps() -> None:
    """A round whose smoothed value rose by 100 and then stood still ends at its
    ``STALL_STEPS``-th iteration, not one before; one still rising by more than 1% of its
    rise over the window never ends early."""
    seen = _Seen(DualProblem(np.zeros((4, 4), np.int64)), -math.inf, lambda _: False)
    for step in range(1, STALL_STEPS):
        seen.iterated(_iterate(min(100.0, 10.0 * step)))  # stalled from step 10 on
    with pytest.raises(_RoundStalledError):
        seen.iterated(_iterate(100.0))
    assert seen.iterate is not None and seen.iterate[0] == 100.0  # where the round resumes
    rising = _Seen(DualProblem(np.zeros((4, 4), np.int64)), -math.inf, lambda _: False)
    for step in range(1, 5 * STALL_STEPS):
        rising.iterated(_iterate(100.0 + 0.011 * 100.0 / STALL_WINDOW * step))


def test_no_evaluation_repeats_the_one_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The separation after a round reads the primal factor of the round's last evaluation,
    which is its end point, instead of evaluating that point again."""
    calls: list[tuple[bytes, float]] = []
    smoothed = DualProblem.smoothed

    def spy(problem: DualProblem, point: np.ndarray, width: float) -> Any:
        calls.append((point.tobytes(), width))
        return smoothed(problem, point, width)

    monkeypatch.setattr(DualProblem, "smoothed", spy)
    weights = TASK.generate(0, difficulty=0.9).weights
    bisection_bound.triangle_certificate(weights, 200, 10**6, branch=False)  # never proves
    assert len(calls) >= 150
    assert all(before != after for before, after in itertools.pairwise(calls))
