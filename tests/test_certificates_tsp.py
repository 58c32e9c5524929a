"""TSP certificates: every proven reference carries subtour-LP duals (and a branching tree where
the root LP falls short) that the independent checker accepts, and no mutated, forged or
hostile certificate proves a false bound."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import certificates
from npgym.certificates import CertificateError
from npgym.certificates import tsp as checker
from npgym.heuristics import tsp as solvers
from npgym.heuristics.result import SolverResult
from npgym.results import UncertifiedReferenceWarning
from tests.certify import check_reference as check_reference_of


def check_reference(instance: Any, exact: bool = True) -> certificates.Checked:
    """The reference of ``instance``, its claims checked against its certificate."""
    return check_reference_of("TSP", instance, exact)


TASK = npgym.get_task("TSP")


def uniform_matrix(seed: int, n: int, low: int = 1, high: int = 30) -> np.ndarray:
    """A symmetric matrix of uniform integer distances, zero diagonal."""
    upper = np.triu(np.random.default_rng(seed).integers(low, high + 1, size=(n, n)), 1)
    return (upper + upper.T).astype(np.int64)


def euclidean_matrix(seed: int, n: int, grid: int = 40) -> np.ndarray:
    """Rounded Euclidean distances of random points (subtour-LP gaps are common there)."""
    points = np.random.default_rng(seed).integers(0, grid + 1, size=(n, 2))
    return np.rint(np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))).astype(
        np.int64
    )


def as_instance(matrix: np.ndarray) -> dict[str, Any]:
    return {"task": "TSP", "distances": matrix.tolist()}


def closed(tour: np.ndarray) -> list[int]:
    return [*map(int, tour), int(tour[0])]


@pytest.mark.parametrize(
    ("tier", "difficulty", "seeds"),
    [
        ("easy", None, 4),
        ("medium", None, 3),
        ("hard", None, 3),
        ("benchmark", None, 2),
        (None, 0.0, 3),
        (None, 0.5, 2),
        (None, 1.0, 1),
    ],
)
def test_references_are_proven_with_a_certificate(
    tier: str | None, difficulty: float | None, seeds: int
) -> None:
    for seed in range(seeds):
        checked = check_reference(TASK.generate(seed, tier, difficulty))
        assert checked.proven


@pytest.mark.slow
@pytest.mark.parametrize("difficulty", [1.2, 1.5])
def test_larger_references_carry_a_checked_certificate(difficulty: float) -> None:
    """Above the published sizes the certificate checks whether or not it proves optimality
    (2.0: tests/test_tsp_certified.py, five seeds)."""
    for seed in range(2):
        check_reference(TASK.generate(seed, difficulty=difficulty))


def certified(matrix: np.ndarray) -> tuple[list[int], int, dict[str, Any]]:
    """The Held-Karp optimum of a small matrix as a closed tour, its length, and the
    certificate npgym's certified search gives it."""
    tour, optimum = solvers.held_karp(matrix)
    bound, certificate = solvers.certify_tour(matrix, tour, effort=5.0)
    assert certificate is not None and bound == optimum
    return closed(tour), optimum, certificate


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 9), metric=st.sampled_from(["u", "e"]))
def test_certified_search_agrees_with_brute_force(seed: int, n: int, metric: str) -> None:
    matrix = uniform_matrix(seed, n) if metric == "u" else euclidean_matrix(seed, n)
    tour, optimum, certificate = certified(matrix)
    checked = certificates.check("TSP", as_instance(matrix), tour, certificate)
    assert checked.objective == checked.bound == optimum


def with_split(certificate: dict[str, Any], u: int, v: int) -> dict[str, Any]:
    """The certificate with its root split on edge {u, v}, each side keeping the root's duals
    (fixing an edge never lowers a leaf's bound), so that mutations reach the tree too."""
    forked = copy.deepcopy(certificate)
    leaf = forked["tree"][0]
    forked["tree"] = [["split", u, v], leaf, copy.deepcopy(leaf)]
    return forked


def numbers(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths to every integer inside a JSON value."""
    if type(value) is int:
        return [path]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in numbers(item, (*path, i))]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in numbers(item, (*path, key))]
    return []


MATRICES = [uniform_matrix(seed, 6 + seed % 3) for seed in range(4)] + [
    euclidean_matrix(seed, 7 + seed % 2) for seed in range(4)
]
CERTIFIED = [certified(matrix) for matrix in MATRICES]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), which=st.integers(0, len(MATRICES) - 1), split=st.booleans())
def test_a_mutated_certificate_never_proves_a_false_bound(
    data: st.DataObject, which: int, split: bool
) -> None:
    """Change one number of a valid certificate: it is refused or still bounds the optimum."""
    matrix = MATRICES[which]
    tour, optimum, certificate = CERTIFIED[which]
    if split:
        certificate = with_split(certificate, 0, 1 + which % (matrix.shape[0] - 1))
    paths = numbers(certificate)
    path = data.draw(st.sampled_from(paths))
    delta = data.draw(st.sampled_from([-(10**30), -1000, -7, -1, 1, 2, 5, 64, 10**6, 10**30]))
    mutated = copy.deepcopy(certificate)
    holder = mutated
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] += delta
    try:
        checked = certificates.check("TSP", as_instance(matrix), tour, mutated)
    except CertificateError:
        return
    assert checked.bound is not None and checked.bound <= optimum


def test_a_tree_with_infeasible_leaves_checks() -> None:
    """Infeasible leaves the checker must see for itself: city 0 left with one edge not fixed
    out, or given three edges fixed in; a feasible leaf called infeasible is refused."""
    matrix = uniform_matrix(3, 5)
    tour, optimum, certificate = certified(matrix)
    leaf = certificate["tree"][0]
    certificate["tree"] = [
        ["split", 0, 1],  # 0-1 out:
        ["split", 0, 2],  #   0-2 out:
        ["split", 0, 3],  #     0-3 out: only 0-4 left at city 0
        ["infeasible"],
        leaf,  #                0-3 in
        ["split", 0, 3],  #   0-2 in:
        leaf,  #                0-3 out
        ["infeasible"],  #      0-3 in: 0-2 and 0-3 in, 0-1 out is feasible
        leaf,  # 0-1 in
    ]
    with pytest.raises(CertificateError):
        certificates.check("TSP", as_instance(matrix), tour, certificate)
    certificate["tree"][7] = leaf
    assert certificates.check("TSP", as_instance(matrix), tour, certificate).bound == optimum
    certificate["tree"] = [["split", 0, 1], leaf, ["split", 0, 2], leaf, ["split", 0, 3], leaf]
    certificate["tree"].append(["infeasible"])  # 0-1, 0-2, 0-3 all in: degree 3
    assert certificates.check("TSP", as_instance(matrix), tour, certificate).bound == optimum


def test_a_short_cycle_of_fixed_edges_is_infeasible() -> None:
    matrix = uniform_matrix(4, 6)
    tour, optimum, certificate = certified(matrix)
    leaf = certificate["tree"][0]
    tree: list[Any] = []
    for u, v in ((0, 1), (1, 2)):
        tree += [["split", u, v], leaf]
    tree += [["split", 0, 2], leaf, ["infeasible"]]  # 0-1-2 closed: a triangle of 6 cities
    certificate["tree"] = tree
    assert certificates.check("TSP", as_instance(matrix), tour, certificate).bound == optimum


@pytest.mark.parametrize(
    "change",
    [
        {"kind": "other"},
        {"scale": 0},
        {"scale": 1.5},
        {"scale": True},
        {"cuts": [[0, 0]]},
        {"cuts": [[]]},
        {"cuts": [[-1]]},
        {"cuts": [list(range(6))]},
        {"cuts": "no"},
        {"tree": []},
        {"tree": [["split", 0, 1]]},
        {"tree": [["split", 0, 0], ["infeasible"], ["infeasible"]]},
        {"tree": [["infeasible"]]},
        {"tree": [["dual", [0] * 5, []]]},
        {"tree": [["dual", [0] * 6, [[0, -1]]]]},
        {"tree": [["dual", [0] * 6, [[99, 1]]]]},
        {"tree": [["dual", [0] * 6, [[0]]]]},
        {"tree": [["dual", [0.5] * 6, []]]},
        {"tree": [["dual", [0] * 6, []], ["dual", [0] * 6, []]]},
        {"tree": [["leaf"]]},
        {"tree": [[[[[[[[[0]]]]]]]]]},
        {"tree": [{"dual": 1}]},
        {"tree": [["dual", [0] * 6, [7]]]},
        {"tree": [["dual", [0] * 6, [[0, 1, 2]]]]},
    ],
)
def test_hostile_certificates_are_refused(change: dict[str, Any]) -> None:
    matrix = uniform_matrix(5, 6)
    tour, _, certificate = certified(matrix)
    certificate = {**certificate, "cuts": [[0, 1]], **change}
    with pytest.raises(CertificateError):
        certificates.check("TSP", as_instance(matrix), tour, certificate)


@pytest.mark.parametrize(
    ("instance", "solution"),
    [
        ({"distances": [[0, 1], [1, 0]]}, [0, 1, 0]),
        ({"distances": [[0, 1, 2], [1, 0, 3], [2, 4, 0]]}, [0, 1, 2, 0]),
        ({"distances": [[1, 1, 2], [1, 0, 3], [2, 3, 0]]}, [0, 1, 2, 0]),
        ({"distances": [[0, 1, 2], [1, 0, 3], [2, 3, 0.0]]}, [0, 1, 2, 0]),
        ({"distances": [[0, 1, 2], [1, 0, 3], [2, 3, 0]]}, [0, 1, 1, 0]),
        ({"distances": [[0, 1, 2], [1, 0, 3], [2, 3, 0]]}, [0, 1, 2]),
        ({"distances": [[0, 1, 2], [1, 0, 3], [2, 3, 0]]}, [0, 1, 2, 1]),
        ({"distances": "x"}, [0, 1, 2, 0]),
        ({"cities": 3}, [0, 1, 2, 0]),
    ],
)
def test_bad_instances_and_tours_are_refused(instance: dict[str, Any], solution: Any) -> None:
    with pytest.raises(CertificateError):
        checker.objective(instance, solution)


@pytest.mark.parametrize("field", ["scale", "cuts", "tree"])
def test_a_missing_field_is_named(field: str) -> None:
    matrix = uniform_matrix(5, 6)
    _, _, certificate = certified(matrix)
    del certificate[field]
    with pytest.raises(CertificateError, match=f"lacks \\['{field}'\\]"):
        checker.bound(as_instance(matrix), certificate)


def test_huge_duals_are_summed_exactly() -> None:
    """Duals past int64 switch the checker to exact integers: a huge potential pair that
    cancels proves the same bound, never a wrapped one."""
    matrix = uniform_matrix(6, 6)
    tour, optimum, certificate = certified(matrix)
    pi = certificate["tree"][0][1]
    pi[0] += 2**80
    pi[1] -= 2**80
    checked = certificates.check("TSP", as_instance(matrix), tour, certificate)
    assert checked.bound is not None and checked.bound <= optimum


def test_a_forged_certificate_is_downgraded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver that inflates its potentials claims a proof the gate refuses."""
    honest = solvers.tree_certificate

    def forged(cuts: list[np.ndarray], tree: list[Any]) -> dict[str, Any]:
        certificate = honest(cuts, tree)
        for node in certificate["tree"]:
            if node[0] == "dual":
                node[1] = [value + certificate["scale"] for value in node[1]]
        return certificate

    monkeypatch.setattr(solvers, "tree_certificate", forged)
    instance = TASK.generate(0, tier="easy")
    with pytest.warns(UncertifiedReferenceWarning):
        reference = TASK.reference(instance)
    assert not reference.proven_optimal


def test_a_false_optimality_claim_is_not_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong hint (a worse tour) that the outside solver then claims optimal: the certified
    search bounds the optimum below it, so the reference is not proven (the gate agrees,
    without a warning)."""
    instance = TASK.generate(1, tier="easy")
    optimum = check_reference(instance).objective
    worse = np.arange(instance.n, dtype=np.int64)
    length = int(solvers.tour_length(instance.matrix, worse))
    assert optimum is not None and length > optimum

    def lying(dist: np.ndarray, *args: Any, **kwargs: Any) -> SolverResult[np.ndarray]:
        return SolverResult(worse, length, length, 0, "", solvers.BRANCH_AND_CUT_SOLVER)

    monkeypatch.setattr(solvers, "heuristic_tour", lambda *args, **kwargs: (worse, length))
    monkeypatch.setattr(solvers, "highs_branch_and_cut", lying)
    fresh = TASK.generate(1, tier="easy")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedReferenceWarning)
        reference = TASK.reference(fresh)
    assert not reference.proven_optimal and reference.objective == length
    assert reference.bound is not None and reference.bound <= optimum


def tree_work(certificate: dict[str, Any], n: int) -> int:
    """What the checker counts for a certificate (module docstring), int64 sums assumed."""
    work = 0
    for node in certificate["tree"]:
        if node[0] == "dual":
            cuts = {k for k, _ in node[2]}
            work += n * n + sum(len(certificate["cuts"][k]) ** 2 + checker.CUT_COST for k in cuts)
        elif node[0] == "infeasible":
            work += checker.INFEASIBLE_COST * n * n
    return work


def test_work_limit_at_and_past(monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = euclidean_matrix(120, 9)  # a tree of dual leaves with cuts
    tour, optimum, certificate = certified(matrix)
    work = tree_work(certificate, 9)
    monkeypatch.setattr(checker, "MAX_WORK", work)
    assert certificates.check("TSP", as_instance(matrix), tour, certificate).bound == optimum
    monkeypatch.setattr(checker, "MAX_WORK", work - 1)
    with pytest.raises(CertificateError, match="costs over"):
        certificates.check("TSP", as_instance(matrix), tour, certificate)


@pytest.mark.parametrize("field", ["scale", "pi", "mu"])
def test_magnitude_limit_at_and_past(field: str) -> None:
    """Numbers up to 2**128 - 1 are read (exactly, past int64), 2**128 is refused."""
    matrix = uniform_matrix(7, 6)
    tour, optimum, certificate = certified(matrix)
    for value, refused in ((checker.MAX_MAGNITUDE - 1, False), (checker.MAX_MAGNITUDE, True)):
        changed = copy.deepcopy(certificate)
        if field == "scale":
            changed["scale"] = value
        elif field == "pi":
            changed["tree"][0][1][0] = value
        else:
            changed["cuts"].append([0])
            changed["tree"][0][2].append([len(changed["cuts"]) - 1, value])
        if refused:
            with pytest.raises(CertificateError, match="2\\*\\*128"):
                certificates.check("TSP", as_instance(matrix), tour, changed)
        else:
            bound = certificates.check("TSP", as_instance(matrix), tour, changed).bound
            assert bound is not None and bound <= optimum


def test_city_limits_at_and_past() -> None:
    assert checker.objective({"distances": [[0, 1, 1], [1, 0, 1], [1, 1, 0]]}, [0, 1, 2, 0]) == 3
    with pytest.raises(CertificateError, match="3 to 2000"):
        checker.objective({"distances": [[0, 1], [1, 0]]}, [0, 1, 0])
    row = [0] * (checker.MAX_CITIES + 1)
    with pytest.raises(CertificateError, match="3 to 2000"):
        checker.objective({"distances": [row] * (checker.MAX_CITIES + 1)}, [0, 0])
