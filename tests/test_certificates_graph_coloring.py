"""GraphColoring certificates: every reference carries one the independent checker accepts, and no
mutated, forged or hostile certificate proves a false lower bound on the chromatic number."""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import certificates
from npgym.certificates import CertificateError
from npgym.certificates import graph_coloring as checker
from npgym.heuristics import graph_coloring as solvers
from npgym.heuristics.result import SolverResult
from npgym.results import UncertifiedReferenceWarning
from tests.certify import TIERS_AND_DIFFICULTIES
from tests.certify import check_reference as check_reference_of

TASK = npgym.get_task("GraphColoring")
C5 = {"n": 5, "edges": [[0, 1], [1, 2], [2, 3], [3, 4], [0, 4]]}
"""The 5-cycle: clique number 2, chromatic number 3."""
C5_TREE = {"kind": "search", "bound": 3, "clique": [0, 1], "tree": [2, 3, 4]}
"""With 0 and 1 coloured 0 and 1, two colours force 2 -> 0, then 3 -> 1, and 4 sees both."""
C5_STEPS = 6
"""The checker's steps for :data:`C5_TREE`: each of its three nodes may try two colours."""


def adjacency_of(instance: dict[str, Any]) -> np.ndarray:
    """The instance's boolean adjacency matrix."""
    matrix = np.zeros((instance["n"], instance["n"]), np.bool_)
    for u, v in instance["edges"]:
        matrix[u, v] = matrix[v, u] = True
    return matrix


def instance_of(adjacency: np.ndarray) -> dict[str, Any]:
    """The JSON object of the graph ``adjacency``."""
    return {"n": int(adjacency.shape[0]), "edges": np.argwhere(np.triu(adjacency, 1)).tolist()}


def chromatic_number(adjacency: np.ndarray) -> int:
    """The chromatic number by exhaustive search: the least k with a proper k-colouring, trying
    every colour for each vertex in turn (a new colour only as the next one)."""
    n = adjacency.shape[0]
    for k in range(1, n + 1):
        colours = [-1] * n
        stack = [(0, 0)]  # (vertex, next colour to try)
        while stack:
            vertex, colour = stack.pop()
            if vertex == n:
                return k
            colours[vertex] = -1
            limit = min(k, max(colours[:vertex], default=-1) + 2)
            while colour < limit and any(
                adjacency[vertex, u] and colours[u] == colour for u in range(vertex)
            ):
                colour += 1
            if colour < limit:
                colours[vertex] = colour
                stack += [(vertex, colour + 1), (vertex + 1, 0)]
    return 0


@st.composite
def graphs(draw: st.DrawFn, max_n: int = 8) -> np.ndarray:
    """A random graph on 1..max_n vertices."""
    n = draw(st.integers(1, max_n))
    bits = draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    upper = np.triu(np.array(bits, np.bool_).reshape(n, n), 1)
    return upper | upper.T


def search_proof(adjacency: np.ndarray, bare: bool) -> SolverResult[np.ndarray]:
    """The exact search's result; ``bare``: without clique or Tabucol, so the tree does it all."""
    limits = {"tabucol_iterations": 0, "clique_node_limit": 0} if bare else {}
    return solvers.exact_coloring(adjacency, **limits)


def check_reference(instance: Any, exact: bool = True) -> certificates.Checked:
    """The reference of ``instance``, checked against its certificate without warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedReferenceWarning)
        return check_reference_of("GraphColoring", instance, exact)


# --- every reference carries a certificate that checks --------------------------------------------


@pytest.mark.parametrize(("tier", "difficulty"), TIERS_AND_DIFFICULTIES)
def test_every_tier_and_difficulty_is_proven_with_a_certificate(
    tier: str | None, difficulty: float | None
) -> None:
    for seed in range(3 if difficulty is None or difficulty < 2 else 1):
        instance = TASK.generate(seed, tier, difficulty)
        checked = check_reference(instance)
        assert checked.proven
        quick = check_reference(instance, exact=False)  # the clique bound, checked too
        assert checked.objective is not None and quick.objective is not None
        assert quick.bound is not None and quick.bound <= checked.objective <= quick.objective


def test_planted_cliques_are_clique_certificates() -> None:
    instance = TASK.generate(0, difficulty=1.5)
    assert instance.planted_clique is not None
    reference = TASK.reference(instance)
    assert reference.solver == solvers.CERTIFIED_SOLVER
    assert reference.certificate == {"kind": "clique", "clique": sorted(instance.planted_clique)}


def test_a_gap_closed_by_search_is_a_search_certificate() -> None:
    instance = TASK.generate(4, "benchmark")  # clique number 5, chromatic number 7
    reference = TASK.reference(instance)
    assert reference.proven_optimal and reference.objective == 7
    assert reference.certificate is not None and reference.certificate["kind"] == "search"
    assert len(reference.certificate["clique"]) == 5 and reference.certificate["bound"] == 7


# --- by hand and against brute force ----------------------------------------------------------


def test_the_five_cycle_by_hand() -> None:
    assert certificates.check("GraphColoring", C5, [0, 1, 0, 1, 2], C5_TREE).proven
    assert checker.bound(C5, {"kind": "clique", "clique": [3, 4]}) == 2
    assert checker.bound(C5, {**C5_TREE, "clique": [], "tree": [0, 1, 2, 3, 4]}) == 3
    assert checker.bound(C5, {"kind": "search", "bound": 1, "clique": [], "tree": [4]}) == 1
    with pytest.raises(CertificateError, match="incomplete"):
        checker.bound(C5, {**C5_TREE, "tree": [2, 3]})  # 4 is left to branch on
    with pytest.raises(CertificateError, match="before the list"):
        checker.bound(C5, {**C5_TREE, "tree": [2, 3, 4, 4]})
    with pytest.raises(CertificateError, match="not an uncoloured vertex"):
        checker.bound(C5, {**C5_TREE, "tree": [2, 2, 4]})
    with pytest.raises(CertificateError, match="not an uncoloured vertex"):
        checker.bound(C5, {**C5_TREE, "bound": 4, "tree": [2, 3, 4, 4]})  # three colours suffice
    proof = search_proof(adjacency_of(C5), bare=True)
    assert proof.certificate is not None and checker.bound(C5, proof.certificate) == 3


def test_the_witness_is_checked_from_scratch() -> None:
    assert checker.objective(C5, [7, -3, 7, 10**30, -3]) == 3  # any integer labels
    for bad in (
        [0, 1, 0, 1, 0],
        [0, 1, 0, 1],
        [0, 1, 0, 1, True],
        [0, 1, 0, 1, 2.0],
        "01012",
        None,
    ):
        with pytest.raises(CertificateError):
            certificates.check("GraphColoring", C5, bad, C5_TREE)


@settings(max_examples=150, deadline=None)
@given(adjacency=graphs(), bare=st.booleans())
def test_certified_bounds_agree_with_brute_force(adjacency: np.ndarray, bare: bool) -> None:
    optimum = chromatic_number(adjacency)
    proof = search_proof(adjacency, bare)
    assert proof.objective == proof.bound == optimum
    checked = certificates.check(
        "GraphColoring", instance_of(adjacency), proof.witness.tolist(), proof.certificate
    )
    assert checked.objective == checked.bound == optimum
    quick = solvers.quick_coloring(adjacency, clique_node_limit=0 if bare else 1_000_000)
    assert checker.bound(instance_of(adjacency), quick.certificate or {}) == quick.bound <= optimum


@settings(max_examples=60, deadline=None)
@given(adjacency=graphs(10), effort=st.sampled_from([0.0, 1e-8, 1e-7, 1e-6]))
def test_a_search_cut_short_certifies_its_clique_bound(
    adjacency: np.ndarray, effort: float
) -> None:
    optimum = chromatic_number(adjacency)
    proof = solvers.exact_coloring(adjacency, effort, tabucol_iterations=0)
    assert proof.certificate is not None
    assert checker.bound(instance_of(adjacency), proof.certificate) == proof.bound <= optimum


# --- mutations: refused, or still a valid bound -------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    adjacency=graphs(),
    bare=st.booleans(),
    data=st.data(),
)
def test_a_mutated_number_is_refused_or_still_a_valid_bound(
    adjacency: np.ndarray, bare: bool, data: st.DataObject
) -> None:
    n = adjacency.shape[0]
    certificate = search_proof(adjacency, bare).certificate
    assert certificate is not None
    places = [
        (field, index)
        for field in ("clique", "tree")
        for index in range(len(certificate.get(field, [])))
    ]
    if "bound" in certificate:
        places.append(("bound", -1))
    if not places:
        return
    field, index = data.draw(st.sampled_from(places))
    value = data.draw(st.integers(-2, n + 2))
    mutated = json.loads(json.dumps(certificate))
    if index < 0:
        mutated[field] = value
    else:
        mutated[field][index] = value
    try:
        bound = checker.bound(instance_of(adjacency), mutated)
    except CertificateError:
        return
    assert bound <= chromatic_number(adjacency)


@settings(max_examples=200, deadline=None)
@given(adjacency=graphs(), bare=st.booleans(), data=st.data())
def test_a_mutated_shape_is_refused_or_still_a_valid_bound(
    adjacency: np.ndarray, bare: bool, data: st.DataObject
) -> None:
    """Entries dropped from or added to the clique or the tree."""
    n = adjacency.shape[0]
    certificate = search_proof(adjacency, bare).certificate
    assert certificate is not None
    field = data.draw(st.sampled_from([key for key in ("clique", "tree") if key in certificate]))
    entries = list(certificate[field])
    position, drop = data.draw(st.integers(0, len(entries))), data.draw(st.booleans())
    if entries and drop:
        del entries[min(position, len(entries) - 1)]
    else:
        entries.insert(position, data.draw(st.integers(-1, n)))
    try:
        bound = checker.bound(instance_of(adjacency), {**certificate, field: entries})
    except CertificateError:
        return
    assert bound <= chromatic_number(adjacency)


@settings(max_examples=400, deadline=None)
@given(adjacency=graphs(6), data=st.data())
def test_an_arbitrary_search_certificate_never_proves_a_false_bound(
    adjacency: np.ndarray, data: st.DataObject
) -> None:
    """Random trees, not the solver's: a checker that forgot a branch (say the new colour)
    closes some of them too early, and this finds it."""
    n = adjacency.shape[0]
    vertices = st.integers(0, n - 1)
    certificate = {
        "kind": "search",
        "bound": data.draw(st.integers(1, n)),
        "clique": data.draw(st.lists(vertices, max_size=2, unique=True)),
        "tree": data.draw(st.lists(vertices, min_size=1, max_size=10)),
    }
    try:
        bound = checker.bound(instance_of(adjacency), certificate)
    except CertificateError:
        return
    assert bound <= chromatic_number(adjacency)


# --- hostile input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "certificate",
    [
        {},
        {"kind": "clique"},
        {"kind": "clique", "clique": [0, 1], "bound": 2},
        {"kind": "clique", "clique": [0, 2]},
        {"kind": "clique", "clique": [0, 0]},
        {"kind": "clique", "clique": [0, -1]},
        {"kind": "clique", "clique": [0, 5]},
        {"kind": "clique", "clique": [0, 10**100]},
        {"kind": "clique", "clique": [0, True]},
        {"kind": "clique", "clique": [0, 1.0]},
        {"kind": "clique", "clique": "01"},
        {"kind": "clique", "clique": [[[[[[[[[[0]]]]]]]]]]},
        {"kind": ["clique"], "clique": [0, 1]},
        {"kind": "coloring", "clique": [0, 1]},
        {**C5_TREE, "bound": 0},
        {**C5_TREE, "bound": 2},
        {**C5_TREE, "bound": 6},
        {**C5_TREE, "bound": 10**100},
        {**C5_TREE, "bound": "3"},
        {**C5_TREE, "bound": 3.0},
        {**C5_TREE, "bound": None},
        {**C5_TREE, "clique": [0, 1, 2]},
        {**C5_TREE, "clique": [0, 2]},
        {**C5_TREE, "tree": []},
        {**C5_TREE, "tree": None},
        {**C5_TREE, "tree": [2, 3, -1]},
        {**C5_TREE, "tree": [2, 3, 5]},
        {**C5_TREE, "tree": [2, 3, 10**100]},
        {**C5_TREE, "tree": [2, 3, [4]]},
        {**C5_TREE, "tree": [2, 3, 4, 0]},
        {**C5_TREE, "tree": [2, 3, 1]},
        {**C5_TREE, "tree": {"0": 2}},
        {**C5_TREE, "extra": 1},
        {key: value for key, value in C5_TREE.items() if key != "clique"},
    ],
)
def test_hostile_certificates_are_refused(certificate: dict[str, Any]) -> None:
    with pytest.raises(CertificateError):
        certificates.check("GraphColoring", C5, [0, 1, 0, 1, 2], certificate)


@pytest.mark.parametrize(
    "instance",
    [
        {"n": 0, "edges": []},
        {"n": 5001, "edges": []},
        {"n": True, "edges": []},
        {"n": 3, "edges": [[0, 3]]},
        {"n": 3, "edges": [[1, 1]]},
        {"n": 3, "edges": [[0, -1]]},
        {"n": 3, "edges": [[0, 1, 2]]},
        {"n": 3, "edges": "[[0, 1]]"},
        {"n": 3},
    ],
)
def test_bad_instances_are_refused(instance: dict[str, Any]) -> None:
    with pytest.raises(CertificateError):
        certificates.check("GraphColoring", instance, [0, 1, 2], {"kind": "clique", "clique": [0]})


def test_step_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checker, "MAX_STEPS", C5_STEPS)
    assert checker.bound(C5, C5_TREE) == 3
    monkeypatch.setattr(checker, "MAX_STEPS", C5_STEPS - 1)
    with pytest.raises(CertificateError, match="steps"):
        checker.bound(C5, C5_TREE)


def test_the_producers_step_limit_is_the_checkers() -> None:
    assert solvers.TREE_STEP_LIMIT == checker.MAX_STEPS
    indptr, indices = solvers.neighbour_lists(adjacency_of(C5))
    clique = np.array([0, 1], np.int64)
    tree, complete = solvers._refutation(indptr, indices, clique, 2, C5_STEPS)
    assert complete and tree.tolist() == C5_TREE["tree"]
    tree, complete = solvers._refutation(indptr, indices, clique, 2, C5_STEPS - 1)
    assert not complete and tree.size == 0


def test_the_producers_byte_limit_is_the_checkers() -> None:
    assert solvers.TREE_BYTE_LIMIT == certificates.MAX_CERTIFICATE_BYTES
    size = len(json.dumps(C5_TREE, separators=(",", ":")))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solvers, "TREE_BYTE_LIMIT", size)
        assert solvers.search_certificate(adjacency_of(C5), [0, 1], 3) == C5_TREE
        patch.setattr(solvers, "TREE_BYTE_LIMIT", size - 1)
        assert solvers.search_certificate(adjacency_of(C5), [0, 1], 3) is None


@pytest.mark.parametrize(("limit", "value"), [("TREE_STEP_LIMIT", 10), ("TREE_BYTE_LIMIT", 100)])
def test_a_tree_past_a_limit_leaves_the_clique_bound(
    limit: str, value: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = TASK.generate(4, "benchmark")  # clique number 5, chromatic number 7
    monkeypatch.setattr(solvers, limit, value)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedReferenceWarning)
        reference = TASK.reference(instance)
    assert reference.objective == 7 and not reference.proven_optimal  # the witness is the same
    assert reference.bound == 5 and reference.certificate is not None
    assert reference.certificate["kind"] == "clique"


# --- adversarial solvers: a false proof never reaches proven_optimal -----------------------------


def gated(instance: Any) -> Any:
    """The reference of ``instance``, which must warn :class:`UncertifiedReferenceWarning`."""
    with pytest.warns(UncertifiedReferenceWarning):
        return TASK.reference(instance)


def test_a_worse_colouring_claimed_optimal_never_reaches_proven(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    instance = TASK.generate(4, "benchmark")
    genuine = solvers.exact_coloring

    def worse(adjacency: np.ndarray, *args: Any, **kwargs: Any) -> SolverResult[np.ndarray]:
        result = genuine(adjacency, *args, **kwargs)
        n = adjacency.shape[0]
        return SolverResult(np.arange(n), n, n, certificate=result.certificate)

    monkeypatch.setattr(solvers, "exact_coloring", worse)
    reference = gated(instance)
    assert not reference.proven_optimal and reference.method == "heuristic"
    assert reference.objective == instance.n and reference.bound == 7  # what the tree proves


@pytest.mark.parametrize("cut", [1, 2])
def test_a_search_cut_short_but_claiming_a_proof_never_reaches_proven(
    cut: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = TASK.generate(4, "benchmark")
    genuine = solvers._refutation

    def truncated(*args: Any) -> tuple[np.ndarray, bool]:
        tree, complete = genuine(*args)
        return tree[:-cut], complete

    monkeypatch.setattr(solvers, "_refutation", truncated)
    reference = gated(instance)
    assert not reference.proven_optimal and reference.bound is None


def test_a_forged_clique_never_reaches_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    instance = TASK.generate(4, "benchmark")
    forged = {"kind": "clique", "clique": list(range(7))}

    def forging(adjacency: np.ndarray, *args: Any, **kwargs: Any) -> SolverResult[np.ndarray]:
        colours = solvers.dsatur(*solvers.neighbour_lists(adjacency))
        count = int(solvers.color_count(colours))
        return SolverResult(colours, count, count, certificate=forged)

    monkeypatch.setattr(solvers, "exact_coloring", forging)
    reference = gated(instance)
    assert not reference.proven_optimal and reference.bound is None


def test_a_wrong_hint_never_reaches_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    """A forged planted clique, trusted by a solver whose check is patched away, gives a
    certificate the checker refuses."""
    instance = TASK.generate(0, difficulty=1.5)
    fake = instance.model_copy(update={"planted_clique": tuple(range(instance.n))})
    monkeypatch.setattr(solvers, "is_clique", lambda adjacency, vertices: True)
    reference = gated(fake)
    assert not reference.proven_optimal and reference.bound is None
