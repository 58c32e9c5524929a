"""MaxClique and MaxIndependentSet certificates: every reference carries one the independent
checker accepts, and no mutated, forged or hostile certificate proves a false bound."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import certificates
from npgym.certificates import CertificateError, _cliques
from npgym.certificates import max_clique as clique_checker
from npgym.heuristics import cliques as solvers
from npgym.heuristics.result import SolverResult
from npgym.results import UncertifiedReferenceWarning
from npgym.tasks.max_clique import MaxCliqueInstance
from npgym.tasks.max_independent_set import MaxIndependentSetInstance
from npgym.tasks.max_independent_set import task as mis_task
from tests.certify import JSON_VALUES, TIERS_AND_DIFFICULTIES, check_reference, integral

TASKS = ("MaxClique", "MaxIndependentSet")
PARTITION = {"MaxClique": ("coloring", "classes"), "MaxIndependentSet": ("clique_cover", "cliques")}
"""Each task's partition certificate: its kind and the field of its groups."""
C5 = {"n": 5, "edges": [[0, 1], [1, 2], [2, 3], [3, 4], [0, 4]]}
"""The 5-cycle: clique and independence number 2, but no 2-colouring (nor cover by 2 cliques)."""
C5_TREE = {"kind": "search", "bound": 2, "order": [0, 1, 2, 3, 4], "tree": [4, -1, -1]}
"""First-fit colours the order 1, 2, 1, 2, 3: three colours. Branch on 4: taking it leaves its
neighbours 0 and 3, one colour (1 + 1 <= 2); leaving it out, 0..3 keep two colours (0 + 2)."""
C5_STEPS = 22
"""The checker's steps for :data:`C5_TREE`: 9 to colour the order (1+2+1+2+3), then per entry
the candidates there (5, 2, 4) and 2 to colour the two candidates of 4."""


def adjacency_of(instance: dict[str, Any]) -> np.ndarray:
    """The instance's boolean adjacency matrix."""
    matrix = np.zeros((instance["n"], instance["n"]), np.bool_)
    for u, v in instance["edges"]:
        matrix[u, v] = matrix[v, u] = True
    return matrix


def instance_of(adjacency: np.ndarray) -> dict[str, Any]:
    """The JSON object of the graph ``adjacency``."""
    edges = np.argwhere(np.triu(adjacency, 1)).tolist()
    return {"n": int(adjacency.shape[0]), "edges": edges}


def target(task: str, adjacency: np.ndarray) -> np.ndarray:
    """The graph whose cliques the task asks for: the graph, or its complement."""
    return adjacency if task == "MaxClique" else solvers.complement(adjacency)


def brute_force(adjacency: np.ndarray) -> int:
    """The clique number, over every vertex subset."""
    n = adjacency.shape[0]
    rows = [int(sum(1 << u for u in np.flatnonzero(adjacency[v]))) for v in range(n)]
    best = 0
    for mask in range(1, 1 << n):
        members = [v for v in range(n) if mask >> v & 1]
        if len(members) > best and all(mask & ~rows[v] == 1 << v for v in members):
            best = len(members)
    return best


def partition(task: str, classes: list[list[int]]) -> dict[str, Any]:
    kind, field = PARTITION[task]
    return {"kind": kind, field: classes}


def search_proof(task: str, adjacency: np.ndarray, **options: Any) -> SolverResult[np.ndarray]:
    """The exact search's result on the task's graph, from no incumbent (so it branches)."""
    result = solvers.exact_clique(
        target(task, adjacency), incumbent=np.empty(0, np.int64), **options
    )
    certificate = result.certificate
    assert certificate is not None
    if certificate["kind"] == "coloring":  # an edgeless graph: the colouring meets 0
        certificate = partition(task, certificate["classes"])
    return SolverResult(result.witness, result.objective, result.bound, certificate=certificate)


@st.composite
def graphs(draw: st.DrawFn, most: int = 9) -> np.ndarray:
    """A graph of 1 to ``most`` vertices, of a drawn density."""
    n = draw(st.integers(1, most))
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    upper = np.triu(np.random.default_rng(seed).random((n, n)) < density, 1)
    return upper | upper.T


# --- every reference carries a certificate that checks --------------------------------------------


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("tier", "difficulty"), TIERS_AND_DIFFICULTIES)
def test_every_tier_and_difficulty_is_proven_with_a_certificate(
    task: str, tier: str | None, difficulty: float | None
) -> None:
    for seed in range(3 if difficulty is None or difficulty < 2 else 1):
        instance = npgym.get_task(task).generate(seed, tier, difficulty)
        checked = check_reference(task, instance)
        assert checked.proven
        bounded = check_reference(task, instance, exact=False)  # the colour bound, checked too
        assert checked.objective is not None and bounded.bound is not None
        assert bounded.bound >= checked.objective


def test_planted_covers_are_clique_cover_certificates() -> None:
    instance = npgym.get_task("MaxIndependentSet").generate(0, difficulty=1.5)
    assert instance.planted_cover is not None
    reference = npgym.get_task("MaxIndependentSet").reference(instance)
    assert reference.method == "planted" and reference.certificate is not None
    assert reference.certificate == {
        "kind": "clique_cover",
        "cliques": [list(group) for group in instance.planted_cover],
    }
    assert check_reference("MaxIndependentSet", instance).proven


# --- by hand and against brute force ----------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_the_five_cycle_by_hand(task: str) -> None:
    # C5 is its own complement (0-2-4-1-3-0), so both tasks see the same proof shape.
    assert certificates.check(task, C5, [0, 1] if task == "MaxClique" else [0, 2], C5_TREE).proven
    colouring = [[0, 2], [1, 3], [4]] if task == "MaxClique" else [[0, 1], [2, 3], [4]]
    assert certificates.checker(task).bound(C5, partition(task, colouring)) == 3
    with pytest.raises(CertificateError, match="does not close"):
        certificates.checker(task).bound(C5, {**C5_TREE, "tree": [-1]})  # three colours
    with pytest.raises(CertificateError, match="does not close"):
        certificates.checker(task).bound(C5, {**C5_TREE, "bound": 1})
    proof = search_proof(task, adjacency_of(C5))
    assert certificates.checker(task).bound(C5, proof.certificate) == 2


def test_the_independent_set_search_runs_on_the_complement() -> None:
    # A triangle and a lone vertex: clique number 3, independence number 2.
    instance = {"n": 4, "edges": [[0, 1], [0, 2], [1, 2]]}
    mis = certificates.checker("MaxIndependentSet")
    assert mis.objective(instance, [0, 3]) == 2
    with pytest.raises(CertificateError, match="not an independent set"):
        mis.objective(instance, [0, 1])
    proof = {"kind": "search", "bound": 2, "order": [3, 0, 1, 2], "tree": [-1]}
    assert mis.bound(instance, proof) == 2  # in the complement: 3 | 0, 1, 2 (a star)
    with pytest.raises(CertificateError, match="does not close"):
        clique_checker.bound(instance, proof)  # the triangle needs three colours
    cover = {"kind": "clique_cover", "cliques": [[0, 1, 2], [3]]}
    assert mis.bound(instance, cover) == 2
    with pytest.raises(CertificateError, match="adjacent"):
        clique_checker.bound(instance, {"kind": "coloring", "classes": [[0, 1, 2], [3]]})


@settings(max_examples=150, deadline=None)
@given(adjacency=graphs(), task=st.sampled_from(TASKS))
def test_certified_bounds_agree_with_brute_force(adjacency: np.ndarray, task: str) -> None:
    instance, graph = instance_of(adjacency), target(task, adjacency)
    optimum = brute_force(graph)
    checker = certificates.checker(task)
    proof = search_proof(task, adjacency)
    assert proof.objective == proof.bound == optimum
    checked = certificates.check(task, instance, proof.witness.tolist(), proof.certificate)
    assert checked.objective == checked.bound == optimum
    classes = solvers.coloring_classes(graph)
    assert checker.bound(instance, partition(task, classes)) == len(classes) >= optimum
    assert len(classes) == solvers.color_bound(graph)


@settings(max_examples=150, deadline=None)
@given(
    adjacency=graphs(12),
    task=st.sampled_from(TASKS),
    effort=st.sampled_from([0.0, 1e-7, 1e-6, 3e-6, 1e-5]),
)
def test_a_search_cut_short_certifies_its_bound(
    adjacency: np.ndarray, task: str, effort: float
) -> None:
    optimum = brute_force(target(task, adjacency))
    proof = search_proof(task, adjacency, effort=effort)
    bound = certificates.checker(task).bound(instance_of(adjacency), proof.certificate)
    assert bound == proof.bound >= optimum >= proof.objective


@settings(max_examples=100, deadline=None)
@given(adjacency=graphs(14), task=st.sampled_from(TASKS), extra=st.integers(0, 3000))
def test_a_search_keeps_its_tree_within_the_checkers_step_limit(
    adjacency: np.ndarray, task: str, extra: int
) -> None:
    """With the producer's and the checker's limits set alike, the cut tree always checks: the
    producer's estimate of the checker's cost (2 work + n k + n steps) is an upper bound. The
    limit is at least n (n + 1), the most a single leaf (the colouring of the order) costs."""
    optimum = brute_force(target(task, adjacency))
    n = adjacency.shape[0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solvers, "CHECK_MAX_STEPS", n * (n + 1) + extra)
        patch.setattr(_cliques, "MAX_STEPS", n * (n + 1) + extra)
        proof = search_proof(task, adjacency)
        bound = certificates.checker(task).bound(instance_of(adjacency), proof.certificate)
    assert bound == proof.bound >= optimum == proof.objective


def test_a_search_past_its_tree_entries_keeps_a_cut_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    adjacency = np.triu(np.random.default_rng(5).random((40, 40)) < 0.6, 1)
    adjacency = adjacency | adjacency.T
    whole_search = search_proof("MaxClique", adjacency)
    assert whole_search.certificate is not None and len(whole_search.certificate["tree"]) > 20
    monkeypatch.setattr(solvers, "MAX_TREE_ENTRIES", 20)
    cut = search_proof("MaxClique", adjacency)
    assert cut.objective == whole_search.objective  # the witness does not change
    assert cut.certificate is not None and len(cut.certificate["tree"]) <= 20
    bound = clique_checker.bound(instance_of(adjacency), cut.certificate)
    assert bound == cut.bound > cut.objective


def test_producer_limit_is_the_checkers() -> None:
    assert solvers.CHECK_MAX_STEPS == _cliques.MAX_STEPS
    # a tree of one leaf, the colouring of the order, always checks within the limit
    assert _cliques.MAX_STEPS >= _cliques.MAX_VERTICES * (_cliques.MAX_VERTICES + 1)
    assert solvers.LEAF == _cliques.LEAF


# --- mutations and hostile input ----------------------------------------------------------------


def numbers_of(certificate: dict[str, Any]) -> list[tuple[str, int | None, int | None]]:
    """(field, index, inner index) of every number in a certificate."""
    places: list[tuple[str, int | None, int | None]] = []
    for field, value in certificate.items():
        if isinstance(value, int):
            places.append((field, None, None))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, list):
                    places.extend((field, index, inner) for inner in range(len(item)))
                else:
                    places.append((field, index, None))
    return places


@st.composite
def proofs(draw: st.DrawFn) -> tuple[str, np.ndarray, dict[str, Any]]:
    """A task, a small graph and a valid certificate: the search's tree or the colouring."""
    task, adjacency = draw(st.sampled_from(TASKS)), draw(graphs())
    if draw(st.booleans()):
        certificate = search_proof(task, adjacency).certificate
        assert certificate is not None
        return task, adjacency, certificate
    return task, adjacency, partition(task, solvers.coloring_classes(target(task, adjacency)))


@settings(max_examples=400, deadline=None)
@given(proof=proofs(), data=st.data())
def test_a_mutated_number_is_refused_or_still_a_valid_bound(
    proof: tuple[str, np.ndarray, dict[str, Any]], data: st.DataObject
) -> None:
    task, adjacency, certificate = proof
    places = numbers_of(certificate)
    if not places:
        return
    field, index, inner = data.draw(st.sampled_from(places), label="place")
    holder: Any = certificate if index is None else certificate[field]
    key: Any = field if index is None else index
    if inner is not None:
        holder, key = holder[key], inner
    old = holder[key]
    holder[key] = data.draw(
        st.integers(-3, adjacency.shape[0] + 2)
        | st.sampled_from([old + 1, old - 1, 0, 10**30, -(10**30)]),
        label="new",
    )
    try:
        mutated = certificates.checker(task).bound(instance_of(adjacency), certificate)
    except CertificateError:
        return
    assert mutated >= brute_force(target(task, adjacency))


@settings(max_examples=300, deadline=None)
@given(proof=proofs(), data=st.data())
def test_a_mutated_shape_is_refused_or_still_a_valid_bound(
    proof: tuple[str, np.ndarray, dict[str, Any]], data: st.DataObject
) -> None:
    task, adjacency, certificate = proof
    field: str = next(name for name in ("tree", "classes", "cliques") if name in certificate)
    if field == "tree" and data.draw(st.booleans()):
        field = "order"
    items = certificate[field]
    at = data.draw(st.integers(0, len(items)), label="at")
    mutation = data.draw(st.sampled_from(["delete", "insert", "swap", "split", "merge"]))
    if mutation == "delete" and at < len(items):
        del items[at]
    elif mutation == "insert":
        vertex = data.draw(st.integers(-1, adjacency.shape[0]), label="vertex")
        items.insert(at, [vertex] if isinstance(items[0], list) else vertex)
    elif mutation == "swap" and at + 1 < len(items):
        items[at], items[at + 1] = items[at + 1], items[at]
    elif mutation == "split" and at < len(items) and isinstance(items[at], list):
        items[at : at + 1] = [items[at][:1], items[at][1:]]
    elif mutation == "merge" and at + 1 < len(items) and isinstance(items[at], list):
        items[at : at + 2] = [items[at] + items[at + 1]]
    try:
        mutated = certificates.checker(task).bound(instance_of(adjacency), certificate)
    except CertificateError:
        return
    assert mutated >= brute_force(target(task, adjacency))


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, field=st.sampled_from(["bound", "order", "tree", "classes", "cliques"]))
def test_hostile_json_is_refused_or_a_valid_bound(value: Any, field: str) -> None:
    for task in TASKS:
        certificate = (
            {**C5_TREE, field: value}
            if field in C5_TREE
            else {"kind": PARTITION[task][0], PARTITION[task][1]: value}
        )
        try:
            checked = certificates.check(
                task, C5, [0, 1] if task == "MaxClique" else [0, 2], certificate
            )
        except CertificateError:
            continue
        assert checked.bound is not None and checked.bound >= 2


@pytest.mark.parametrize(
    "certificate",
    [
        {},
        {"kind": "coloring"},
        {"kind": "clique_cover", "cliques": [[0], [1], [2], [3], [4]]},  # the other task's
        {"kind": "coloring", "classes": [[0, 2], [1, 3], [4]], "extra": 1},
        {"kind": "coloring", "classes": "0 2"},
        {"kind": "coloring", "classes": []},
        {"kind": "coloring", "classes": [[0, 2], [1, 3]]},  # 4 missing
        {"kind": "coloring", "classes": [[0, 2], [1, 3], [4], []]},  # an empty class
        {"kind": "coloring", "classes": [[0, 2], [1, 3], [4, 2]]},  # 2 twice
        {"kind": "coloring", "classes": [[0, 2], [1, 3], [4, 4]]},
        {"kind": "coloring", "classes": [[0, 1], [2, 3], [4]]},  # 0-1 an edge
        {"kind": "coloring", "classes": [[0, 2], [1, 3], [5]]},
        {"kind": "coloring", "classes": [[0, 2], [1, 3], [-1], [4]]},
        {"kind": "coloring", "classes": [[0, 2], [1, 3], [True], [4]]},
        {"kind": "coloring", "classes": [[0, 2], [1, 3], [4.0]]},
        {"kind": "coloring", "classes": [[0, 2], [1, 3], [[[[[[[[4]]]]]]]]]},
        {"kind": "search"},
        {**C5_TREE, "extra": 1},
        {**C5_TREE, "bound": True},
        {**C5_TREE, "bound": 2.0},
        {**C5_TREE, "bound": -1},
        {**C5_TREE, "bound": 6},
        {**C5_TREE, "bound": 10**30},
        {**C5_TREE, "order": [0, 1, 2, 3]},
        {**C5_TREE, "order": [0, 1, 2, 3, 3]},
        {**C5_TREE, "order": [0, 1, 2, 3, 5]},
        {**C5_TREE, "order": [0, 1, 2, 3, 4, 5]},
        {**C5_TREE, "order": None},
        {**C5_TREE, "tree": []},
        {**C5_TREE, "tree": [4, -1]},  # incomplete
        {**C5_TREE, "tree": [4, -1, -1, -1]},  # after the end
        {**C5_TREE, "tree": [4, 4, -1, -1, -1]},  # 4 is no candidate of its own
        {**C5_TREE, "tree": [5, -1, -1]},
        {**C5_TREE, "tree": [4, -2, -1]},
        {**C5_TREE, "tree": [True, -1, -1]},
        {**C5_TREE, "tree": [[4], [-1], [-1]]},
        {**C5_TREE, "tree": [4, -1, -1.0]},
        {**C5_TREE, "tree": [10**30, -1, -1]},
        {**C5_TREE, "bound": 1, "tree": [4, 0, -1, -1, -1, -1]},  # 4 and 0: not below 1
        {**C5_TREE, "tree": "4 -1 -1"},
    ],
)
def test_hostile_certificates_are_refused(certificate: dict[str, Any]) -> None:
    with pytest.raises(CertificateError):
        certificates.check("MaxClique", C5, [0, 1], certificate)


@pytest.mark.parametrize(
    ("instance", "solution"),
    [
        (C5, [0, 0]),
        (C5, [5]),
        (C5, [-1]),
        (C5, [True]),
        (C5, [0.0]),
        (C5, "0 1"),
        (C5, None),
        ({**C5, "n": 0}, []),
        ({**C5, "n": True}, []),
        ({**C5, "n": 5.0}, []),
        ({**C5, "n": _cliques.MAX_VERTICES + 1}, []),
        ({**C5, "edges": [[0, 0]]}, []),
        ({**C5, "edges": [[0, 5]]}, []),
        ({**C5, "edges": [[-1, 2]]}, []),
        ({**C5, "edges": [[0, 1, 2]]}, []),
        ({**C5, "edges": [[0, True]]}, []),
        ({**C5, "edges": [[0, 1.0]]}, []),
        ({**C5, "edges": [(0, 1)]}, []),
        ({**C5, "edges": "0 1"}, []),
        ({"n": 5}, []),
    ],
)
def test_bad_solutions_and_instances_are_refused(instance: dict[str, Any], solution: Any) -> None:
    for task in TASKS:
        with pytest.raises(CertificateError):
            certificates.check(task, instance, solution, C5_TREE)


def test_a_non_clique_and_a_non_independent_set_are_refused() -> None:
    with pytest.raises(CertificateError, match="not a clique"):
        certificates.check("MaxClique", C5, [0, 2], C5_TREE)
    with pytest.raises(CertificateError, match="not an independent set"):
        certificates.check("MaxIndependentSet", C5, [0, 1], C5_TREE)


def test_branching_at_the_bound_is_refused_at_once() -> None:
    """Each branching adds a vertex to the clique, so the walk's stack never holds more than
    ``bound`` candidate lists: a branching with ``bound`` vertices chosen is refused there."""
    with pytest.raises(CertificateError, match="entry 1 "):
        clique_checker.bound(C5, {**C5_TREE, "bound": 1, "tree": [4, 0, -1, -1, -1, -1]})


def test_vertex_limit() -> None:
    at = {"n": _cliques.MAX_VERTICES, "edges": []}
    assert clique_checker.objective(at, [_cliques.MAX_VERTICES - 1]) == 1
    with pytest.raises(CertificateError, match="n must be"):
        clique_checker.objective({**at, "n": _cliques.MAX_VERTICES + 1}, [0])


def test_step_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cliques, "MAX_STEPS", C5_STEPS)
    assert clique_checker.bound(C5, C5_TREE) == 2
    monkeypatch.setattr(_cliques, "MAX_STEPS", C5_STEPS - 1)
    with pytest.raises(CertificateError, match="steps"):
        clique_checker.bound(C5, C5_TREE)


# --- adversarial solvers ------------------------------------------------------------------------


def fresh(task: str) -> Any:
    """A benchmark instance (a new object each call, so no reference is memoised)."""
    return npgym.get_task(task).generate(4, "benchmark")


@pytest.mark.parametrize("task", TASKS)
def test_a_wrong_hint_never_reaches_proven(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The heuristic hands the search a "clique" of every vertex: the search has nothing to
    beat and claims it, but the checker refuses the witness."""
    monkeypatch.setattr(
        solvers, "heuristic_clique", lambda adjacency, **_: np.arange(len(adjacency))
    )
    with pytest.warns(UncertifiedReferenceWarning, match="not a clique|not an independent set"):
        reference = npgym.get_task(task).reference(fresh(task))
    assert not reference.proven_optimal and reference.method == "heuristic"


@pytest.mark.parametrize("task", TASKS)
def test_a_search_claiming_to_finish_early_never_reaches_proven(
    task: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The branch and bound claims exhaustion at once, after a one-vertex incumbent: its
    (empty) tree proves nothing."""
    optimum = integral(npgym.get_task(task).reference(fresh(task)).objective)
    monkeypatch.setattr(solvers, "heuristic_clique", lambda adjacency, **_: np.array([0]))
    monkeypatch.setattr(solvers, "_branch", lambda *args: True)
    with pytest.warns(UncertifiedReferenceWarning, match="incomplete"):
        reference = npgym.get_task(task).reference(fresh(task))
    assert not reference.proven_optimal and reference.objective == 1 < optimum
    assert reference.bound is None


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("forgery", ["leaf", "colouring"])
def test_a_forged_certificate_never_reaches_proven(
    task: str, forgery: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = fresh(task)
    optimum = integral(npgym.get_task(task).reference(instance).objective)
    n = instance.n
    certificate = (
        {"kind": "search", "bound": 1, "order": list(range(n)), "tree": [-1]}
        if forgery == "leaf"
        else {"kind": "coloring", "classes": [list(range(n))]}
    )

    def lying(*args: Any, **kwargs: Any) -> SolverResult[np.ndarray]:
        return SolverResult(np.array([0]), 1, 1, certificate=certificate)

    monkeypatch.setattr(solvers, "exact_clique", lying)
    with pytest.warns(UncertifiedReferenceWarning):
        reference = npgym.get_task(task).reference(fresh(task))
    assert not reference.proven_optimal and reference.objective == 1 < optimum


def test_a_trusted_bogus_planted_cover_never_reaches_proven(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cover check patched to trust any cover: groups that are not cliques are refused."""
    instance = MaxIndependentSetInstance(n=4, edges=[[0, 1]], planted_cover=[[0, 2], [1, 3]])

    def trusting(checked: MaxIndependentSetInstance) -> mis_task.CoverCertificate:
        return mis_task.CoverCertificate(2, [0, 1])  # adjacent, and alpha is 3

    monkeypatch.setattr(mis_task, "cover_certificate", trusting)
    with pytest.warns(UncertifiedReferenceWarning):
        reference = npgym.get_task("MaxIndependentSet").reference(instance)
    assert not reference.proven_optimal


def test_the_unproven_path_carries_its_colouring() -> None:
    adjacency = np.triu(np.random.default_rng(3).random((60, 60)) < 0.5, 1)
    instance = MaxCliqueInstance(n=60, edges=np.argwhere(adjacency).tolist())
    reference = npgym.get_task("MaxClique").reference(instance, time_limit=0.0)
    assert not reference.proven_optimal and reference.certificate is not None
    checked = check_reference("MaxClique", instance, exact=False)
    assert checked.bound == solvers.color_bound(instance.adjacency) > integral(checked.objective)
