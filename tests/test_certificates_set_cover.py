"""SetCover certificates: every reference carries one the independent checker accepts, and
no mutated, forged or hostile certificate proves a false bound."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import certificates
from npgym.certificates import CertificateError
from npgym.certificates import set_cover as checker
from npgym.heuristics import set_cover as solvers
from npgym.results import UncertifiedReferenceWarning
from npgym.tasks.set_cover import SetCoverInstance
from tests.certify import JSON_VALUES, TIERS_AND_DIFFICULTIES, integral
from tests.certify import check_reference as check_reference_of


def check_reference(instance: Any, exact: bool = True) -> certificates.Checked:
    """The reference of ``instance``, its claims checked against its certificate."""
    return check_reference_of("SetCover", instance, exact)


TASK = npgym.get_task("SetCover")
SMALL = {"universe_size": 3, "subsets": [[0, 1], [1, 2], [0, 2]]}
"""A triangle: each subset misses one element, so two are needed; the LP takes each half, 3/2,
and its dual prices each element 1/2: the root bound is ceil(3/2) = 2."""
ODD = {"universe_size": 5, "subsets": [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]]}
"""A 5-cycle: 3 subsets needed, the LP gives 5/2 (ceil 3): the root dual proves it too."""


def brute_force(universe: int, subsets: list[list[int]]) -> int | None:
    """The fewest subsets covering ``0..universe-1``, or None."""
    for size in range(len(subsets) + 1):
        for chosen in itertools.combinations(subsets, size):
            if len({e for subset in chosen for e in subset}) == universe:
                return size
    return None


@pytest.mark.parametrize(("tier", "difficulty"), TIERS_AND_DIFFICULTIES)
def test_every_tier_and_difficulty_is_proven_with_a_certificate(
    tier: str | None, difficulty: float | None
) -> None:
    for seed in range(4 if difficulty is None or difficulty < 2 else 1):
        instance = TASK.generate(seed, tier, difficulty)
        checked = check_reference(instance)
        assert checked.proven
        bounded = check_reference(instance, exact=False)  # the size bound, checked too
        if checked.objective is None:
            assert bounded.objective is None and bounded.proven
        else:
            assert bounded.bound is not None and bounded.bound <= checked.objective
            assert bounded.bound == TASK.reference(instance, exact=False).bound


@functools.cache
def tree_instance() -> SetCoverInstance:
    """The first benchmark-tier instance whose LP bound falls short of the optimum."""
    for seed in range(40):
        instance = TASK.generate(seed, "benchmark")
        certificate = TASK.reference(instance).certificate
        assert certificate is not None
        if len(certificate.get("tree", [])) > 1:
            return instance
    raise AssertionError("no benchmark seed below 40 needs a tree")


def test_a_tree_proves_what_the_root_dual_cannot() -> None:
    instance = tree_instance()
    optimum = integral(TASK.reference(instance).objective)
    assert optimum is not None and solvers.lp_bound(instance.membership) < optimum
    assert check_reference(instance).proven


def test_small_instances_by_hand() -> None:
    assert checker.objective(SMALL, [0, 1]) == 2
    assert checker.bound(SMALL, {"kind": "dual", "tree": [["prices", 2, [1, 1, 1]]]}) == 2
    assert checker.bound(ODD, {"kind": "dual", "tree": [["prices", 2, [1] * 5]]}) == 3
    # Prices of 1 over a scale of 1 overrun every subset (2 > 1): refused.
    with pytest.raises(CertificateError, match="past the scale"):
        checker.bound(SMALL, {"kind": "dual", "tree": [["prices", 1, [1, 1, 1]]]})
    # Subset 0 in (element 2 left: any free subset holding it costs 1), or left out (then 1
    # and 2 cover the rest, priced 1/2 each as the triangle).
    tree = [["split", 0], ["prices", 1, [0, 0, 1]], ["prices", 2, [1, 1, 1]]]
    assert checker.bound(SMALL, {"kind": "dual", "tree": tree}) == 2
    # Subset 0 left out, 1 taken: element 0 is left, priced 1 (only subset 2 holds it); 0 and
    # 1 left out: element 1 is in no subset still free, so no cover there.
    deeper = [["split", 0], ["prices", 1, [0, 0, 1]], ["split", 1], ["prices", 1, [1, 0, 0]]]
    deeper.append(["empty", 1])
    assert checker.bound(SMALL, {"kind": "dual", "tree": deeper}) == 2
    assert solvers.certify(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]], bool), 2)[0] == 2
    impossible = {"universe_size": 4, "subsets": [[0, 1], [1, 2]]}
    assert checker.objective(impossible, "Impossible") is None
    assert checker.bound(impossible, {"kind": "uncovered", "element": 3}) is None
    assert certificates.check(
        "SetCover", impossible, "Impossible", {"kind": "uncovered", "element": 3}
    ).proven
    with pytest.raises(CertificateError, match="not one that no subset holds"):
        checker.bound(impossible, {"kind": "uncovered", "element": 2})


@st.composite
def small_instances(draw: st.DrawFn) -> dict[str, Any]:
    """Coverable instances of up to 7 elements and 8 subsets."""
    universe = draw(st.integers(1, 7))
    subsets = draw(
        st.lists(
            st.sets(st.integers(0, universe - 1), max_size=universe).map(sorted),
            min_size=1,
            max_size=8,
        )
    )
    missing = sorted(set(range(universe)) - {e for subset in subsets for e in subset})
    return {"universe_size": universe, "subsets": [*subsets, *([missing] if missing else [])]}


def membership_of(instance: dict[str, Any]) -> np.ndarray:
    matrix = np.zeros((len(instance["subsets"]), instance["universe_size"]), np.bool_)
    for j, subset in enumerate(instance["subsets"]):
        matrix[j, subset] = True
    return matrix


@settings(max_examples=300, deadline=None)
@given(instance=small_instances(), slack=st.integers(-3, 2))
def test_certified_bounds_agree_with_brute_force(instance: dict[str, Any], slack: int) -> None:
    optimum = brute_force(instance["universe_size"], instance["subsets"])
    assert optimum is not None
    membership = membership_of(instance)
    bound, certificate = solvers.certify(membership, optimum)
    assert checker.bound(instance, certificate) == bound == optimum  # the tree reaches it
    target = max(optimum + slack, 0)
    bound, certificate = solvers.certify(membership, target)
    assert bound <= integral(checker.bound(instance, certificate)) <= optimum
    assert bound >= min(target, optimum)
    size = checker.bound(instance, solvers.size_certificate(membership))
    assert size == solvers.size_bound(membership) <= optimum


def numbers_of(tree: list[list[Any]]) -> list[tuple[int, int, int | None]]:
    """(node, position, price index) of every number in a tree."""
    found: list[tuple[int, int, int | None]] = []
    for n, node in enumerate(tree):
        found += [(n, 1, None)]
        if node[0] == "prices":
            found += [(n, 2, i) for i in range(len(node[2]))]
    return found


@settings(max_examples=400, deadline=None)
@given(instance=small_instances(), data=st.data())
def test_a_mutated_tree_is_refused_or_still_a_valid_bound(
    instance: dict[str, Any], data: st.DataObject
) -> None:
    optimum = brute_force(instance["universe_size"], instance["subsets"])
    assert optimum is not None
    tree = solvers.certify(membership_of(instance), optimum)[1]["tree"]
    node, position, index = data.draw(st.sampled_from(numbers_of(tree)), label="number")
    holder = tree[node] if index is None else tree[node][2]
    at = position if index is None else index
    old = holder[at]
    new = data.draw(
        st.integers(-3, 12) | st.sampled_from([old + 1, old - 1, 0, 10**30, -(10**30)]),
        label="new",
    )
    holder[at] = new
    try:
        mutated = integral(checker.bound(instance, {"kind": "dual", "tree": tree}))
    except CertificateError:
        return
    assert mutated is not None and mutated <= optimum


@settings(max_examples=200, deadline=None)
@given(instance=small_instances(), data=st.data())
def test_a_mutated_tree_shape_is_refused_or_still_a_valid_bound(
    instance: dict[str, Any], data: st.DataObject
) -> None:
    optimum = brute_force(instance["universe_size"], instance["subsets"])
    assert optimum is not None
    tree = solvers.certify(membership_of(instance), optimum + 2)[1]["tree"]
    at = data.draw(st.integers(0, len(tree)), label="at")
    mutation = data.draw(st.sampled_from(["delete", "insert empty", "insert split", "swap"]))
    if mutation == "delete" and at < len(tree):
        del tree[at]
    elif mutation == "insert empty":
        tree.insert(at, ["empty", data.draw(st.integers(0, instance["universe_size"] - 1))])
    elif mutation == "insert split":
        tree.insert(at, ["split", data.draw(st.integers(0, len(instance["subsets"]) - 1))])
    elif at + 1 < len(tree):
        tree[at], tree[at + 1] = tree[at + 1], tree[at]
    try:
        mutated = integral(checker.bound(instance, {"kind": "dual", "tree": tree}))
    except CertificateError:
        return
    assert mutated is not None and mutated <= optimum


@settings(max_examples=300, deadline=None)
@given(tree=JSON_VALUES, kind=st.sampled_from(["dual", "uncovered", "other"]))
def test_hostile_json_is_refused_or_a_valid_bound(tree: Any, kind: str) -> None:
    for field in ("tree", "element"):
        try:
            checked = certificates.check("SetCover", SMALL, [0, 1], {"kind": kind, field: tree})
        except CertificateError:
            continue
        assert checked.bound is not None and checked.bound <= 2


@pytest.mark.parametrize(
    "certificate",
    [
        {},
        {"kind": "dual"},
        {"kind": "dual", "tree": [], "extra": 1},
        {"kind": "dual", "tree": "prices"},
        {"kind": "dual", "tree": []},
        {"kind": "dual", "tree": [[]]},
        {"kind": "dual", "tree": [["prices", 0, [1, 1, 1]]]},
        {"kind": "dual", "tree": [["prices", -2, [1, 1, 1]]]},
        {"kind": "dual", "tree": [["prices", 2, [1, 1]]]},
        {"kind": "dual", "tree": [["prices", 2, [1, 1, 1, 1]]]},
        {"kind": "dual", "tree": [["prices", 2, [1, -1, 3]]]},
        {"kind": "dual", "tree": [["prices", 2, [1, 1, 1.0]]]},
        {"kind": "dual", "tree": [["prices", 2.0, [1, 1, 1]]]},
        {"kind": "dual", "tree": [["prices", True, [1, 1, 1]]]},
        {"kind": "dual", "tree": [["prices", 2, [1, 1, True]]]},
        {"kind": "dual", "tree": [["prices", 2, "111"]]},
        {"kind": "dual", "tree": [["prices", 2, [10**30, 0, 0]]]},
        {"kind": "dual", "tree": [["prices", 2, [1, 1, 1]], ["prices", 2, [1, 1, 1]]]},
        {"kind": "dual", "tree": [["split", 0], ["prices", 1, [0, 0, 1]]]},  # incomplete
        {"kind": "dual", "tree": [["split", 3], ["empty", 0], ["empty", 0]]},
        {"kind": "dual", "tree": [["split", -1], ["empty", 0], ["empty", 0]]},
        {"kind": "dual", "tree": [["split", True], ["empty", 0], ["empty", 0]]},
        {"kind": "dual", "tree": [["split", 0], ["split", 0], ["empty", 0], ["empty", 0]]},
        {"kind": "dual", "tree": [["empty", 0]]},  # element 0 is still coverable
        {"kind": "dual", "tree": [["split", 0], ["empty", 2], ["empty", 2]]},
        {"kind": "dual", "tree": [["split", 0], ["split", 2], ["empty", 1], ["empty", 0]]},
        {"kind": "dual", "tree": [["leaf"]]},
        {"kind": "dual", "tree": [[[[[[[[["prices", 2, [1, 1, 1]]]]]]]]]]},
        {"kind": "uncovered", "element": 0},
        {"kind": "uncovered", "element": 3},
        {"kind": "uncovered", "element": -1},
        {"kind": "uncovered", "element": "0"},
        {"kind": "uncovered"},
        {"kind": "DUAL", "tree": [["prices", 2, [1, 1, 1]]]},
    ],
)
def test_hostile_certificates_are_refused(certificate: dict[str, Any]) -> None:
    with pytest.raises(CertificateError):
        certificates.check("SetCover", SMALL, [0, 1], certificate)


@pytest.mark.parametrize(
    ("instance", "solution"),
    [
        (SMALL, [0]),
        (SMALL, [0, 0]),
        (SMALL, [0, 3]),
        (SMALL, [-1, 1]),
        (SMALL, [True, 1]),
        (SMALL, "Impossible"),
        (SMALL, "impossible"),
        (SMALL, None),
        ({**SMALL, "universe_size": 0}, []),
        ({**SMALL, "universe_size": 2}, [0, 1]),
        ({**SMALL, "subsets": []}, []),
        ({**SMALL, "subsets": [[0, 0], [1, 2]]}, [0, 1]),
        ({**SMALL, "subsets": [[0, 1.0], [1, 2]]}, [0, 1]),
        ({**SMALL, "subsets": [[0, -1], [1, 2]]}, [0, 1]),
        ({**SMALL, "subsets": "012"}, [0]),
        ({"subsets": [[0]]}, [0]),
    ],
)
def test_bad_solutions_and_instances_are_refused(instance: dict[str, Any], solution: Any) -> None:
    with pytest.raises(CertificateError):
        checker.objective(instance, solution)


def test_tree_work_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = {
        "kind": "dual",
        "tree": [["split", 0], ["prices", 1, [0, 0, 1]], ["prices", 2, [1] * 3]],
    }
    monkeypatch.setattr(checker, "TREE_MAX_WORK", 2 * (3 + 6))  # two leaves, u + memberships
    assert checker.bound(SMALL, tree) == 2
    monkeypatch.setattr(checker, "TREE_MAX_WORK", 2 * (3 + 6) - 1)
    with pytest.raises(CertificateError, match="leaves"):
        checker.bound(SMALL, tree)


def test_producer_limits_are_the_checkers() -> None:
    assert solvers.CERTIFIED_TREE_MAX_WORK == checker.TREE_MAX_WORK


def test_a_tree_past_its_node_budget_proves_the_root_bound() -> None:
    instance = tree_instance()
    optimum = integral(TASK.reference(instance).objective)
    assert optimum is not None
    bound, certificate = solvers.certify(instance.membership, optimum, max_nodes=0)
    assert bound == solvers.lp_bound(instance.membership) < optimum
    assert len(certificate["tree"]) == 1


def test_a_milp_claiming_optimality_falsely_never_reaches_proven(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Three disjoint pairs, and a decoy subset per pair that the greedy takes first: the greedy
    # needs 4 and the optimum is 3; a HiGHS patched to say "optimal" keeps the greedy's 4.
    subsets = [[0, 1, 2], [3, 4, 5], [0, 3], [1, 4], [2, 5], [0, 1, 3, 4]]
    instance = SetCoverInstance(universe_size=6, subsets=subsets)
    assert brute_force(6, subsets) == 2

    class Lie:
        status, x, mip_dual_bound = 0, None, None

    import scipy.optimize

    monkeypatch.setattr(scipy.optimize, "milp", lambda *args, **kwargs: Lie())
    monkeypatch.setattr(solvers, "lp_bound", lambda *args: 0)
    monkeypatch.setattr(solvers, "greedy_cover", lambda membership: np.array([2, 3, 4]))
    reference = TASK.reference(instance)
    assert reference.objective == 3 and not reference.proven_optimal
    assert reference.bound == 2 and reference.certificate is not None
    check_reference(instance)


def test_a_forged_certificate_is_caught_by_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    instance = TASK.generate(1, "medium")
    assert solvers.first_uncovered(instance.membership) < 0
    forged = {"kind": "dual", "tree": [["prices", 1, [1] * instance.universe_size]]}
    monkeypatch.setattr(solvers, "certify", lambda membership, target, **kwargs: (target, forged))
    with pytest.warns(UncertifiedReferenceWarning, match="past the scale"):
        reference = TASK.reference(instance)
    assert not reference.proven_optimal and reference.method == "heuristic"
    assert reference.bound is None and reference.certificate is None


def test_exact_false_states_the_size_bound_with_its_certificate() -> None:
    instance = SetCoverInstance(**ODD)
    reference = TASK.reference(instance, exact=False)
    assert reference.bound == 3 and reference.certificate == {
        "kind": "dual",
        "tree": [["prices", 2, [1] * 5]],
    }
    assert check_reference(instance, exact=False).bound == 3


def test_instance_size_limits() -> None:
    at = {"universe_size": checker.MAX_UNIVERSE, "subsets": [list(range(checker.MAX_UNIVERSE))]}
    assert checker.objective(at, [0]) == 1
    with pytest.raises(CertificateError, match="universe_size"):
        checker.objective({**at, "universe_size": checker.MAX_UNIVERSE + 1}, [0])
    many = {"universe_size": 1, "subsets": [[0]] * checker.MAX_SUBSETS}
    assert checker.objective(many, [0]) == 1
    with pytest.raises(CertificateError, match="subsets"):
        checker.objective({**many, "subsets": [[0]] * (checker.MAX_SUBSETS + 1)}, [0])
