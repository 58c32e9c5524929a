"""TSP above the published sizes: iterated local search, the persistent subtour LP and npgym's own
dual bound, against brute force (Held-Karp), with wrong hints given on purpose."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import certificates
from npgym.heuristics import tsp as solvers
from npgym.heuristics.budget import Deadline

TASK = npgym.get_task("TSP")


def euclidean_matrix(seed: int, n: int, grid: int = 40) -> np.ndarray:
    """Rounded Euclidean distances of random points in ``[0, grid]^2``."""
    points = np.random.default_rng(seed).integers(0, grid + 1, size=(n, 2)).astype(np.float64)
    gaps = points[:, None, :] - points[None, :, :]
    return np.rint(np.hypot(gaps[..., 0], gaps[..., 1])).astype(np.int64)


GAPPED = [(120, 8), (120, 9), (16, 12)]
"""Euclidean (seed, n) whose subtour LP bound falls one unit short of the optimum."""


def checked(matrix: np.ndarray, tour: np.ndarray, certificate: object) -> certificates.Checked:
    """What the independent checker makes of a tour and its certificate."""
    closed = [*map(int, tour), int(tour[0])]
    return certificates.check("TSP", {"distances": matrix.tolist()}, closed, certificate)


def uniform_matrix(seed: int, n: int, low: int = 10, high: int = 100) -> np.ndarray:
    """A symmetric matrix of uniform integer distances (no geometry), zero diagonal."""
    draws = np.random.default_rng(seed).integers(low, high + 1, size=(n, n))
    upper = np.triu(draws, 1)
    return (upper + upper.T).astype(np.int64)


@pytest.mark.slow
@settings(max_examples=40)
@given(seed=st.integers(0, 10**6), n=st.integers(4, 11))
def test_certified_branch_and_cut_matches_held_karp(seed: int, n: int) -> None:
    matrix = uniform_matrix(seed, n)
    _, optimum = solvers.held_karp(matrix)
    result = solvers.certified_branch_and_cut(matrix, effort=5.0)
    assert result.bound is not None and result.bound <= optimum <= result.objective
    assert solvers.tour_length(matrix, result.witness) == result.objective
    assert sorted(result.witness.tolist()) == list(range(n))


@pytest.mark.slow
@settings(max_examples=40)
@given(seed=st.integers(0, 10**6), n=st.integers(5, 11))
def test_a_bad_hint_is_never_proven_wrongly(seed: int, n: int) -> None:
    """Started from a random tour, the search still ends at or above the optimum and proves
    only the optimum."""
    matrix = uniform_matrix(seed, n)
    _, optimum = solvers.held_karp(matrix)
    hint = np.random.default_rng(seed + 1).permutation(n)
    result = solvers.certified_branch_and_cut(matrix, effort=5.0, incumbent=hint)
    assert result.bound is not None and result.bound <= optimum <= result.objective
    if result.proven_optimal:
        assert result.objective == optimum


@settings(max_examples=60)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(4, 9),
    duals=st.lists(st.floats(-300, 300), min_size=9, max_size=9),
    cut_duals=st.lists(st.floats(-300, 300), min_size=3, max_size=3),
)
def test_dual_bound_holds_for_any_duals(
    seed: int, n: int, duals: list[float], cut_duals: list[float]
) -> None:
    """The certificate is a lower bound whatever the LP solver says its duals are."""
    matrix = uniform_matrix(seed, n)
    _, optimum = solvers.held_karp(matrix)
    rng = np.random.default_rng(seed)
    lp = solvers._CuttingPlaneLP(matrix, np.arange(n))
    for _ in cut_duals:
        lp.add_cut(rng.random(n) < 0.5)
    lp.solve()
    wrong = np.array(duals[:n] + cut_duals[: len(lp.cuts)])
    lp.highs.getSolution = lambda: type("Wrong", (), {"row_dual": wrong})()  # type: ignore[method-assign]
    bound = lp.certificate()[0]
    assert bound <= optimum


@pytest.mark.slow
def test_lp_bound_proves_lkh_optimum_at_difficulty_2() -> None:
    """A published-figure check: the certified bound of a 499-city instance at difficulty 2.0
    equals the tour LKH-3 finds (5005), and npgym's reference reaches it."""
    instance = TASK.generate(0, difficulty=2.0)
    reference = TASK.solve(instance, exact=True, time_limit=60.0)
    assert reference.proven_optimal and reference.objective == 5005


def test_a_lying_tour_solver_does_not_set_the_objective(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tour solver that under-reports its length: the reference recomputes it from the tour."""
    instance = TASK.generate(3, difficulty=1.0)
    honest = solvers.improved_tour

    def lying(*args: object, **kwargs: object) -> tuple[np.ndarray, int]:
        tour, _ = honest(*args, **kwargs)  # type: ignore[arg-type]
        return tour, 1

    monkeypatch.setattr(solvers, "improved_tour", lying)
    for exact in (False, True):
        reference = TASK.solve(instance, exact=exact, time_limit=60.0)
        tour = np.array(reference.solution[:-1])
        assert solvers.tour_length(instance.matrix, tour) == reference.objective
        assert reference.objective == 852 or not reference.proven_optimal


@pytest.mark.parametrize(
    ("n", "solver"),
    [
        pytest.param(
            solvers.PUBLISHED_MAX_CITIES, solvers.BRANCH_AND_CUT_SOLVER, marks=pytest.mark.slow
        ),
        (solvers.PUBLISHED_MAX_CITIES + 1, solvers.CERTIFIED_SOLVER),
    ],
)
def test_published_sizes_keep_their_solver(n: int, solver: str) -> None:
    """At the largest published size the NP-Bench path runs; one city more, the certified one."""
    result = solvers.branch_and_cut(uniform_matrix(n, n), effort=10.0)
    assert result.solver.startswith(solver)
    assert result.proven_optimal


def test_improved_tour_is_deterministic_and_never_worse() -> None:
    matrix = uniform_matrix(7, 120)
    start = solvers.nearest_neighbour(matrix, 0)
    first = solvers.improved_tour(matrix, start, effort=1.0)
    again = solvers.improved_tour(matrix, start, effort=1.0)
    assert first[1] == again[1] and np.array_equal(first[0], again[0])
    assert first[1] <= solvers.tour_length(matrix, start)
    assert first[1] == solvers.tour_length(matrix, first[0])


@pytest.mark.parametrize(("seed", "n"), GAPPED)
def test_branching_on_the_certified_lp_closes_an_integrality_gap(seed: int, n: int) -> None:
    """Where the root LP falls short, the certified tree proves the optimum, and the checker
    agrees from the certificate alone."""
    matrix = euclidean_matrix(seed, n)
    _, optimum = solvers.held_karp(matrix)
    start = np.arange(n)
    assert solvers._root_cutting_planes(matrix, start, 10**9, Deadline(60.0))[0] < optimum
    result = solvers.certified_branch_and_cut(matrix, effort=5.0, incumbent=start)
    assert result.proven_optimal and result.objective == optimum
    assert result.certificate is not None and len(result.certificate["tree"]) > 1
    assert checked(matrix, result.witness, result.certificate).proven


def test_a_tree_cut_short_still_certifies_its_bound() -> None:
    """Out of budget after one node, the open nodes keep their parents' duals: the tree's bound
    is smaller than the optimum but checks, and is at least the root's."""
    matrix = euclidean_matrix(*GAPPED[2])
    _, optimum = solvers.held_karp(matrix)
    start = np.arange(matrix.shape[0])
    root, lp, node, work, _ = solvers._root_cutting_planes(matrix, start, 10**9, Deadline(60.0))
    _, _, tree, _ = solvers._certified_tree(lp, node, start, work + 1, Deadline(60.0), work)
    assert any(step[0] == "split" for step in tree)
    certificate = solvers.tree_certificate(lp.cuts, tree)
    bound = checked(matrix, start, certificate).bound
    assert bound is not None and root <= bound == solvers._tree_bound(tree) <= optimum


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 9))
def test_large_distances_are_certified_exactly(seed: int, n: int) -> None:
    """Distances near the instance limit (10^9): the scaled duals still prove the optimum."""
    matrix = uniform_matrix(seed, n, 10**8, 10**9)
    tour, optimum = solvers.held_karp(matrix)
    bound, certificate = solvers.certify_tour(matrix, tour, effort=5.0)
    assert bound == optimum
    assert checked(matrix, tour, certificate).proven


@pytest.mark.slow
def test_difficulty_2_is_proven_by_branching() -> None:
    """Issue 36's frontier target: at least 4 of 5 seeds at difficulty 2.0 proven, each
    certificate checked (measured: all 5, 2.5 to 4 CPU-s each)."""
    proven = 0
    for seed in range(5):
        instance = TASK.generate(seed, difficulty=2.0)
        reference = TASK.reference(instance)
        assert reference.certificate is not None
        tour = np.array(reference.solution[:-1])
        proven += checked(instance.matrix, tour, reference.certificate).proven
    assert proven >= 4
