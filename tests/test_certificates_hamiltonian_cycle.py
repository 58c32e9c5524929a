"""HamiltonianCycle certificates: every reference carries one the independent checker accepts,
and no mutated, forged or hostile certificate proves a false bound."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import certificates
from npgym.certificates import CertificateError
from npgym.certificates import hamiltonian_cycle as checker
from npgym.heuristics import hamiltonian_cycle as solvers
from npgym.heuristics.result import SolverResult
from npgym.results import UncertifiedReferenceWarning
from npgym.tasks.hamiltonian_cycle import HamiltonianCycleInstance
from tests.certify import JSON_VALUES, TIERS_AND_DIFFICULTIES, integral
from tests.certify import check_reference as check_reference_of


def check_reference(instance: Any, exact: bool = True) -> certificates.Checked:
    """The reference of ``instance``, its claims checked against its certificate."""
    return check_reference_of("HamiltonianCycle", instance, exact)


TASK = npgym.get_task("HamiltonianCycle")
BOWTIE = {"n": 5, "edges": [[0, 1], [0, 2], [1, 2], [0, 3], [0, 4], [3, 4]]}
"""Two triangles sharing vertex 0: the longest cycle has 3 vertices; the cut at 0 proves it."""
K23 = {"n": 5, "edges": [[0, 2], [0, 3], [0, 4], [1, 2], [1, 3], [1, 4]]}
"""K(2,3): hubs 0 and 1, three single vertices; the longest cycle has 4 (2 hubs + 2)."""


def adjacency_of(instance: dict[str, Any]) -> np.ndarray:
    matrix = np.zeros((instance["n"], instance["n"]), np.bool_)
    for u, v in instance["edges"]:
        matrix[u, v] = matrix[v, u] = True
    return matrix


def longest(instance: dict[str, Any]) -> int:
    """The longest cycle's vertex count (0 for a forest), by the bitmask programme."""
    return int(solvers.longest_cycle_dp(adjacency_of(instance)).size)


@pytest.mark.parametrize(("tier", "difficulty"), TIERS_AND_DIFFICULTIES)
def test_every_tier_and_difficulty_is_proven_with_a_certificate(
    tier: str | None, difficulty: float | None
) -> None:
    for seed in range(4):
        instance = TASK.generate(seed, tier, difficulty)
        checked = check_reference(instance)
        assert checked.proven
        assert check_reference(instance, exact=False).proven  # the planted proofs come first


@pytest.mark.parametrize("tier", ["hard", "benchmark"])
def test_revision_1_and_bare_instances_are_proven_without_cp_sat_s_word(tier: str) -> None:
    """Revision 1's cut-vertex and independent-set graphs (blocks; a separator from a large
    independent set) and the separator construction with its record stripped (a searched
    separator) are proven by certificates; exact=False states the block bound, certified."""
    proven = 0
    for seed in range(3):
        for overrides in ({"revision": 1, "hamiltonian_share": 0.0}, {"hamiltonian_share": 0.0}):
            generated = TASK.generate(seed, tier, overrides=overrides)
            instance = HamiltonianCycleInstance(n=generated.n, edges=generated.edges)
            checked = check_reference(instance)
            assert checked.objective == len(generated.planted_cycle or ()) - 1
            proven += checked.proven
            quick = check_reference(instance, exact=False)
            assert quick.bound == solvers.cycle_bound(instance.adjacency)
    assert proven == 6  # measured: and 90% of medium's CP-SAT cases, 100% of the others


def test_small_graphs_by_hand() -> None:
    assert checker.objective(BOWTIE, [0, 1, 2, 0]) == 3
    assert checker.bound(BOWTIE, {"kind": "trivial"}) == 5
    blocks = [["cut", 0], ["separator", []], ["separator", []]]
    assert checker.bound(BOWTIE, {"kind": "tree", "tree": blocks}) == 3
    assert solvers.certify_cycle(adjacency_of(BOWTIE), 3) == (3, {"kind": "tree", "tree": blocks})
    # Cut at 1: {0, 2, 3, 4} + 1 is still the whole graph less nothing but 1's own edges.
    at_one = [["cut", 1], ["cut", 0], ["separator", []], ["separator", []]]
    assert checker.bound(BOWTIE, {"kind": "tree", "tree": at_one}) == 3
    assert checker.bound(BOWTIE, {"kind": "separator", "separator": [0]}) == 3  # 1 + 2
    assert checker.objective(K23, [0, 2, 1, 3, 0]) == 4
    assert checker.bound(K23, {"kind": "separator", "separator": [0, 1]}) == 4  # 2 + 1 + 1
    assert checker.bound(K23, {"kind": "separator", "separator": []}) == 5
    assert checker.bound(K23, {"kind": "separator", "separator": [0, 1, 2, 3, 4]}) == 5
    assert solvers.certify_cycle(adjacency_of(K23), 4)[0] == 4


@st.composite
def small_graphs(draw: st.DrawFn) -> dict[str, Any]:
    """Graphs of up to 9 vertices, often with cut vertices (two random graphs glued at one)."""
    n = draw(st.integers(3, 9))
    pairs = [[u, v] for u in range(n) for v in range(u + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), unique_by=tuple, max_size=len(pairs)))
    if draw(st.booleans()):  # glue: no edge between the halves but through vertex n // 2
        half = n // 2
        edges = [[u, v] for u, v in edges if u >= half or v <= half]
    return {"n": n, "edges": sorted(edges)}


def random_tree(instance: dict[str, Any], data: st.DataObject) -> list[list[Any]]:
    """A well-formed decomposition tree of random cuts and separators (the checker's walk,
    reimplemented with networkx)."""
    graph = nx.Graph()
    graph.add_nodes_from(range(instance["n"]))
    graph.add_edges_from(map(tuple, instance["edges"]))
    pending = [list(range(instance["n"]))]
    tree: list[list[Any]] = []
    while pending:
        within = pending.pop()
        if len(tree) < 6 and data.draw(st.booleans(), label="cut"):
            cut = data.draw(st.sampled_from(within), label="vertex")
            rest = graph.subgraph(set(within) - {cut})
            parts = sorted((sorted(part) for part in nx.connected_components(rest)), key=min)
            tree.append(["cut", cut])
            pending += reversed([[*part, cut] for part in parts if len(part) >= 2])
        else:
            separator = data.draw(st.lists(st.sampled_from(within), unique=True), label="S")
            tree.append(["separator", separator])
    return tree


@settings(max_examples=300, deadline=None)
@given(instance=small_graphs(), data=st.data())
def test_every_well_formed_tree_bounds_the_longest_cycle(
    instance: dict[str, Any], data: st.DataObject
) -> None:
    optimum = longest(instance)
    tree = random_tree(instance, data)
    assert checker.bound(instance, {"kind": "tree", "tree": tree}) >= optimum


@settings(max_examples=100, deadline=None)
@given(instance=small_graphs())
def test_the_producers_certificates_agree_with_brute_force(instance: dict[str, Any]) -> None:
    optimum = longest(instance)
    bound, certificate = solvers.certify_cycle(adjacency_of(instance), optimum)
    assert checker.bound(instance, certificate) == bound >= optimum
    quick, blocks = solvers.certify_cycle(adjacency_of(instance), optimum, search=False)
    assert checker.bound(instance, blocks) == quick
    block_bound = solvers.cycle_bound(adjacency_of(instance))  # 0 when there is no cycle
    assert quick == block_bound or (block_bound == optimum == 0 and quick < 3)


def numbers_of(tree: list[list[Any]]) -> list[tuple[int, int | None]]:
    """(node, separator index) of every number in a tree (None: a cut's vertex)."""
    found: list[tuple[int, int | None]] = []
    for n, node in enumerate(tree):
        if node[0] == "cut":
            found.append((n, None))
        else:
            found += [(n, i) for i in range(len(node[1]))]
    return found


@settings(max_examples=400, deadline=None)
@given(instance=small_graphs(), data=st.data())
def test_a_mutated_tree_is_refused_or_still_a_valid_bound(
    instance: dict[str, Any], data: st.DataObject
) -> None:
    optimum = longest(instance)
    tree = random_tree(instance, data)
    numbers = numbers_of(tree)
    if not numbers:
        return
    node, index = data.draw(st.sampled_from(numbers), label="number")
    old = tree[node][1] if index is None else tree[node][1][index]
    new = data.draw(
        st.integers(-2, 10) | st.sampled_from([old + 1, old - 1, 10**30, -(10**30)]),
        label="new",
    )
    if index is None:
        tree[node][1] = new
    else:
        tree[node][1][index] = new
    try:
        mutated = checker.bound(instance, {"kind": "tree", "tree": tree})
    except CertificateError:
        return
    assert mutated >= optimum


@settings(max_examples=200, deadline=None)
@given(instance=small_graphs(), data=st.data())
def test_a_mutated_tree_shape_is_refused_or_still_a_valid_bound(
    instance: dict[str, Any], data: st.DataObject
) -> None:
    optimum = longest(instance)
    tree = random_tree(instance, data)
    at = data.draw(st.integers(0, len(tree)), label="at")
    mutation = data.draw(st.sampled_from(["delete", "insert cut", "insert leaf", "swap"]))
    if mutation == "delete" and at < len(tree):
        del tree[at]
    elif mutation == "insert cut":
        tree.insert(at, ["cut", data.draw(st.integers(0, instance["n"] - 1))])
    elif mutation == "insert leaf":
        tree.insert(at, ["separator", []])
    elif at + 1 < len(tree):
        tree[at], tree[at + 1] = tree[at + 1], tree[at]
    try:
        mutated = checker.bound(instance, {"kind": "tree", "tree": tree})
    except CertificateError:
        return
    assert mutated >= optimum


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, kind=st.sampled_from(["tree", "separator", "trivial", "other"]))
def test_hostile_json_is_refused_or_a_valid_bound(value: Any, kind: str) -> None:
    for field in ("tree", "separator"):
        try:
            checked = certificates.check(
                "HamiltonianCycle", BOWTIE, [0, 1, 2, 0], {"kind": kind, field: value}
            )
        except CertificateError:
            continue
        assert checked.bound is not None and checked.bound >= 3


@pytest.mark.parametrize(
    "certificate",
    [
        {},
        {"kind": "trivial", "extra": 1},
        {"kind": "TRIVIAL"},
        {"kind": "separator"},
        {"kind": "separator", "separator": [0, 0]},
        {"kind": "separator", "separator": [5]},
        {"kind": "separator", "separator": [-1]},
        {"kind": "separator", "separator": [True]},
        {"kind": "separator", "separator": [0.0]},
        {"kind": "separator", "separator": "0"},
        {"kind": "separator", "separator": [10**30]},
        {"kind": "tree"},
        {"kind": "tree", "tree": []},
        {"kind": "tree", "tree": "cut"},
        {"kind": "tree", "tree": [[]]},
        {"kind": "tree", "tree": [["cut"]]},
        {"kind": "tree", "tree": [["cut", 0]]},  # incomplete: two children missing
        {"kind": "tree", "tree": [["cut", 0], ["separator", []]]},
        {"kind": "tree", "tree": [["cut", 0], ["separator", []], ["separator", []], ["cut", 0]]},
        {"kind": "tree", "tree": [["cut", 0], ["cut", 0], ["separator", []]]},  # 0 is cut away
        {"kind": "tree", "tree": [["cut", 0], ["separator", [3]], ["separator", []]]},  # not in W
        {"kind": "tree", "tree": [["cut", 5]]},
        {"kind": "tree", "tree": [["cut", True], ["separator", []], ["separator", []]]},
        {"kind": "tree", "tree": [["separator", [], 1]]},
        {"kind": "tree", "tree": [["leaf", []]]},
        {"kind": "tree", "tree": [[[[[[[[["separator", []]]]]]]]]]},
        {"kind": "tree", "tree": [["separator", []]], "separator": []},
    ],
)
def test_hostile_certificates_are_refused(certificate: dict[str, Any]) -> None:
    with pytest.raises(CertificateError):
        certificates.check("HamiltonianCycle", BOWTIE, [0, 1, 2, 0], certificate)


@pytest.mark.parametrize(
    ("instance", "solution"),
    [
        (BOWTIE, [0, 1, 2]),  # not closed
        (BOWTIE, [0, 1, 0]),
        (BOWTIE, [0, 1, 2, 1, 0]),
        (BOWTIE, [1, 2, 3, 1]),  # (2, 3) is not an edge
        (BOWTIE, [0, 1, 5, 0]),
        (BOWTIE, [-1, 1, 2, -1]),
        (BOWTIE, [True, 1, 2, True]),
        (BOWTIE, "0 1 2 0"),
        (BOWTIE, None),
        ({**BOWTIE, "n": 0}, [0, 1, 2, 0]),
        ({**BOWTIE, "n": 5.0}, [0, 1, 2, 0]),
        ({**BOWTIE, "edges": [[0, 0]]}, [0, 1, 2, 0]),
        ({**BOWTIE, "edges": [[0, 5]]}, [0, 1, 2, 0]),
        ({**BOWTIE, "edges": [[0, 1, 2]]}, [0, 1, 2, 0]),
        ({**BOWTIE, "edges": [[0, "1"]]}, [0, 1, 2, 0]),
        ({**BOWTIE, "edges": {"0": 1}}, [0, 1, 2, 0]),
        ({"edges": BOWTIE["edges"]}, [0, 1, 2, 0]),
    ],
)
def test_bad_solutions_and_instances_are_refused(instance: dict[str, Any], solution: Any) -> None:
    with pytest.raises(CertificateError):
        checker.objective(instance, solution)


def test_tree_work_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = {"kind": "tree", "tree": [["cut", 0], ["separator", []], ["separator", []]]}
    monkeypatch.setattr(checker, "TREE_MAX_WORK", 3 * (5 + 12))  # 3 nodes, n + 2 * edges
    assert checker.bound(BOWTIE, blocks) == 3
    monkeypatch.setattr(checker, "TREE_MAX_WORK", 3 * (5 + 12) - 1)
    with pytest.raises(CertificateError, match="nodes"):
        checker.bound(BOWTIE, blocks)


def test_producer_limits_are_the_checkers() -> None:
    assert solvers.CERTIFIED_TREE_MAX_WORK == checker.TREE_MAX_WORK


def test_past_the_tree_limit_the_certificate_is_trivial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solvers, "CERTIFIED_TREE_MAX_WORK", 3 * (5 + 12) - 1)
    assert solvers.certify_cycle(adjacency_of(BOWTIE), 3) == (5, {"kind": "trivial"})


def bare_hamiltonian() -> HamiltonianCycleInstance:
    """A Hamiltonian graph without its planted record: only a search proves its cycle."""
    generated = TASK.generate(0, "hard", overrides={"separator_share": 0.0, "hamiltonian_share": 1})
    return HamiltonianCycleInstance(n=generated.n, edges=generated.edges)


def short_cycle(instance: HamiltonianCycleInstance) -> np.ndarray:
    """A cycle of the graph far shorter than its Hamiltonian one."""
    graph = nx.from_numpy_array(instance.adjacency.astype(np.int8))
    return np.array(min(nx.cycle_basis(graph), key=len), np.int64)


def test_a_cp_sat_claiming_optimality_falsely_never_reaches_proven(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    instance = bare_hamiltonian()
    short = short_cycle(instance)
    monkeypatch.setattr(solvers, "heuristic_cycle", lambda adjacency, **kwargs: short)
    monkeypatch.setattr(
        solvers,
        "exact_cycle",
        lambda *args, **kwargs: SolverResult(short, int(short.size), int(short.size)),
    )
    reference = TASK.reference(instance)
    assert reference.objective == short.size < instance.n
    assert not reference.proven_optimal and reference.method == "heuristic"
    assert integral(reference.bound) >= instance.n  # the certified bound: no lie gets through
    check_reference(instance)


def test_a_forged_certificate_is_caught_by_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    instance = bare_hamiltonian()
    short = short_cycle(instance)
    monkeypatch.setattr(solvers, "heuristic_cycle", lambda adjacency, **kwargs: short)
    monkeypatch.setattr(
        solvers,
        "exact_cycle",
        lambda *args, **kwargs: SolverResult(short, int(short.size), int(short.size)),
    )
    forged = {"kind": "separator", "separator": []}  # proves the largest component, n
    monkeypatch.setattr(solvers, "certify_cycle", lambda *args, **kwargs: (short.size, forged))
    with pytest.warns(UncertifiedReferenceWarning, match="bounds the optimum by"):
        reference = TASK.reference(instance)
    assert not reference.proven_optimal and reference.bound == instance.n


def test_a_wrong_recorded_separator_is_not_taken_on_trust() -> None:
    instance = TASK.generate(3, tier="medium", overrides={"hamiltonian_share": 0.0})
    assert instance.separator is not None
    wrong = instance.model_copy(update={"separator": (instance.separator[0],)})
    checked = check_reference(wrong)
    assert checked.proven and checked.objective == len(instance.planted_cycle or ()) - 1
    reference = TASK.reference(wrong)
    assert reference.certificate is not None and reference.certificate["kind"] == "tree"


def test_vertex_limit() -> None:
    at = {"n": checker.MAX_VERTICES, "edges": BOWTIE["edges"]}
    assert checker.objective(at, [0, 1, 2, 0]) == 3
    assert checker.bound(at, {"kind": "trivial"}) == checker.MAX_VERTICES
    with pytest.raises(CertificateError, match="n must be"):
        checker.objective({**at, "n": checker.MAX_VERTICES + 1}, [0, 1, 2, 0])
    with pytest.raises(CertificateError, match="n must be"):
        checker.objective({**at, "n": 10**12}, [0, 1, 2, 0])
