"""Knapsack certificates: every reference carries one the independent checker accepts, and
no mutated, forged or hostile certificate proves a false bound."""

from __future__ import annotations

import functools
import itertools
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import certificates
from npgym.certificates import CertificateError
from npgym.certificates import knapsack as checker
from npgym.heuristics import knapsack as solvers
from npgym.results import UncertifiedReferenceWarning
from npgym.tasks.knapsack import KnapsackInstance
from tests.certify import JSON_VALUES, TIERS_AND_DIFFICULTIES, integral
from tests.certify import check_reference as check_reference_of


def check_reference(instance: Any, exact: bool = True) -> certificates.Checked:
    """The reference of ``instance``, its claims checked against its certificate."""
    return check_reference_of("Knapsack", instance, exact)


TASK = npgym.get_task("Knapsack")
SMALL = {"weights": [5, 4, 6, 3], "values": [10, 40, 30, 50], "capacity": 10}
"""Items 1 and 3 (weight 7, value 90) are optimal. By ratio: items 3, 1, 2, 0 (16.7, 10, 5, 2);
Dantzig's bound takes 3 and 1 and half of item 2: 90 + 4 * 30 // 6 = 105."""


def brute_force(weights: list[int], values: list[int], capacity: int) -> int:
    """The optimum, over every subset."""
    return max(
        sum(values[i] for i in chosen)
        for size in range(len(weights) + 1)
        for chosen in itertools.combinations(range(len(weights)), size)
        if sum(weights[i] for i in chosen) <= capacity
    )


def instance_json(instance: KnapsackInstance) -> dict[str, Any]:
    return json.loads(instance.to_json())


@pytest.mark.parametrize(("tier", "difficulty"), TIERS_AND_DIFFICULTIES)
def test_every_tier_and_difficulty_is_proven_with_a_certificate(
    tier: str | None, difficulty: float | None
) -> None:
    for seed in range(3 if difficulty is None or difficulty < 2 else 1):
        instance = TASK.generate(seed, tier, difficulty)
        checked = check_reference(instance)
        assert checked.proven
        bounded = check_reference(instance, exact=False)  # Dantzig's bound, checked too
        assert checked.objective is not None and bounded.bound is not None
        assert bounded.bound >= checked.objective
        assert bounded.bound == TASK.reference(instance, exact=False).bound


def test_small_instance_by_hand() -> None:
    assert checker.objective(SMALL, [3, 1]) == 90
    assert checker.bound(SMALL, {"kind": "dp"}) == 90
    dantzig = {"kind": "lagrangian", "tree": [["bound", 30, 6]]}  # item 2's ratio, 5
    assert checker.bound(SMALL, dantzig) == 105  # (30 * 10 + 120 + 210) // 6
    assert solvers.lagrangian_leaf(SMALL["weights"], SMALL["values"], 10) == (105, dantzig)
    # Weights halved (rounded down) within 5: items 0, 1 and 3 (2 + 2 + 1) fit, worth 100.
    assert checker.bound(SMALL, {"kind": "dp", "scale": 2}) == 100
    assert checker.bound(SMALL, {"kind": "dp", "scale": 4}) == 50 + 40 + 30  # 0 + 1 + 1 <= 2
    assert checker.bound(SMALL, {"kind": "dp", "scale": 11}) == 130  # all weightless
    weaker = {"kind": "lagrangian", "tree": [["bound", 8, 1]]}
    assert checker.bound(SMALL, weaker) == 80 + 8 + 26  # items 1 and 3 beat the ratio 8
    tree = [
        ["split", 2],  # taken: 30, room 4; item 3 fits, half of item 1 (ratio 10)
        ["bound", 40, 4],  # (4 * 30 + 40 * 4 + (200 - 120)) // 4 = 90
        ["split", 0],  # item 2 left out, item 0 taken: 10, room 5; item 3, half of item 1
        ["bound", 40, 4],  # (4 * 10 + 40 * 5 + (200 - 120)) // 4 = 80
        ["bound", 0, 1],  # items 1 and 3 left, and both fit: 90
    ]
    assert checker.bound(SMALL, {"kind": "lagrangian", "tree": tree}) == 90
    proof = solvers.lagrangian_tree(SMALL["weights"], SMALL["values"], 10, 90, 100)
    assert proof == (90, {"kind": "lagrangian", "tree": tree})
    # Closing at 96, the left-out branch's bound (item 0's ratio) needs no split.
    proof = solvers.lagrangian_tree(SMALL["weights"], SMALL["values"], 10, 96, 100)
    assert proof == (96, {"kind": "lagrangian", "tree": [*tree[:2], ["bound", 10, 5]]})


@st.composite
def small_instances(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 7))
    return {
        "weights": draw(st.lists(st.integers(1, 30), min_size=n, max_size=n)),
        "values": draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)),
        "capacity": draw(st.integers(0, 120)),
    }


@settings(max_examples=300, deadline=None)
@given(instance=small_instances(), slack=st.integers(-20, 5), scale=st.integers(-2, 40))
def test_certified_bounds_agree_with_brute_force(
    instance: dict[str, Any], slack: int, scale: int
) -> None:
    weights, values, capacity = instance["weights"], instance["values"], instance["capacity"]
    optimum = brute_force(weights, values, capacity)
    assert checker.bound(instance, {"kind": "dp"}) == optimum
    assert checker.bound(instance, {"kind": "dp", "scale": 1}) == optimum
    if scale < 1:
        with pytest.raises(CertificateError, match="scale"):
            checker.bound(instance, {"kind": "dp", "scale": scale})
    else:
        scaled = checker.bound(instance, {"kind": "dp", "scale": scale})
        room = min(capacity, sum(weights))
        assert scaled == solvers.scaled_dp_bound(np.array(weights), np.array(values), room, scale)
        assert scaled >= optimum
    dantzig, leaf = solvers.lagrangian_leaf(weights, values, capacity)
    assert checker.bound(instance, leaf) == dantzig >= optimum
    proof = solvers.lagrangian_tree(weights, values, capacity, optimum + slack, 10_000)
    assert proof is not None
    assert checker.bound(instance, proof[1]) == proof[0] >= optimum
    if slack >= 0:
        assert proof[0] <= optimum + slack


def numbers_of(tree: list[list[Any]]) -> list[tuple[int, int]]:
    """(node, position) of every number in a tree."""
    return [(n, p) for n, node in enumerate(tree) for p in range(1, len(node))]


@settings(max_examples=400, deadline=None)
@given(instance=small_instances(), data=st.data())
def test_a_mutated_tree_is_refused_or_still_a_valid_bound(
    instance: dict[str, Any], data: st.DataObject
) -> None:
    weights, values, capacity = instance["weights"], instance["values"], instance["capacity"]
    optimum = brute_force(weights, values, capacity)
    target = data.draw(st.integers(max(optimum - 30, 0), optimum), label="target")
    proof = solvers.lagrangian_tree(weights, values, capacity, target, 10_000)
    assert proof is not None
    tree = proof[1]["tree"]
    node, position = data.draw(st.sampled_from(numbers_of(tree)), label="number")
    old = tree[node][position]
    new = data.draw(
        st.integers(-3, 60) | st.sampled_from([old + 1, old - 1, 0, 10**30, -(10**30)]),
        label="new",
    )
    tree[node][position] = new
    try:
        mutated = checker.bound(instance, {"kind": "lagrangian", "tree": tree})
    except CertificateError:
        return
    assert mutated >= optimum


@settings(max_examples=200, deadline=None)
@given(instance=small_instances(), data=st.data())
def test_a_mutated_tree_shape_is_refused_or_still_a_valid_bound(
    instance: dict[str, Any], data: st.DataObject
) -> None:
    weights, values, capacity = instance["weights"], instance["values"], instance["capacity"]
    optimum = brute_force(weights, values, capacity)
    proof = solvers.lagrangian_tree(weights, values, capacity, max(optimum - 10, 0), 10_000)
    assert proof is not None
    tree = proof[1]["tree"]
    at = data.draw(st.integers(0, len(tree)), label="at")
    mutation = data.draw(st.sampled_from(["delete", "insert over", "insert split", "swap"]))
    if mutation == "delete" and at < len(tree):
        del tree[at]
    elif mutation == "insert over":
        tree.insert(at, ["over"])
    elif mutation == "insert split":
        tree.insert(at, ["split", data.draw(st.integers(0, len(weights) - 1))])
    elif at + 1 < len(tree):
        tree[at], tree[at + 1] = tree[at + 1], tree[at]
    try:
        mutated = checker.bound(instance, {"kind": "lagrangian", "tree": tree})
    except CertificateError:
        return
    assert mutated >= optimum


@settings(max_examples=300, deadline=None)
@given(tree=JSON_VALUES, kind=st.sampled_from(["lagrangian", "dp", "other"]))
def test_hostile_json_is_refused_or_a_valid_bound(tree: Any, kind: str) -> None:
    try:
        checked = certificates.check("Knapsack", SMALL, [1, 3], {"kind": kind, "tree": tree})
    except CertificateError:
        return
    assert checked.bound is not None and checked.bound >= 90


@pytest.mark.parametrize(
    "certificate",
    [
        {},
        {"kind": "dp", "extra": 1},
        {"kind": "dp", "scale": 0},
        {"kind": "dp", "scale": -1},
        {"kind": "dp", "scale": True},
        {"kind": "dp", "scale": 1.5},
        {"kind": "dp", "scale": "2"},
        {"kind": "dp", "scale": None},
        {"kind": "dp", "scale": 2, "extra": 1},
        {"kind": "DP"},
        {"kind": "lagrangian"},
        {"kind": "lagrangian", "tree": "split"},
        {"kind": "lagrangian", "tree": []},
        {"kind": "lagrangian", "tree": [[]]},
        {"kind": "lagrangian", "tree": [["over"]]},  # nothing is taken at the root
        {"kind": "lagrangian", "tree": [["bound", -1, 1]]},
        {"kind": "lagrangian", "tree": [["bound", 1, 0]]},
        {"kind": "lagrangian", "tree": [["bound", 1.5, 1]]},
        {"kind": "lagrangian", "tree": [["bound", True, 1]]},
        {"kind": "lagrangian", "tree": [["bound", "5", 1]]},
        {"kind": "lagrangian", "tree": [["bound", 5]]},
        {"kind": "lagrangian", "tree": [["bound", 5, 1, 1]]},
        {"kind": "lagrangian", "tree": [["bound", 5, 1], ["bound", 5, 1]]},  # after the end
        {"kind": "lagrangian", "tree": [["split", 0], ["bound", 5, 1]]},  # incomplete
        {"kind": "lagrangian", "tree": [["split", 4], ["over"], ["bound", 5, 1]]},
        {"kind": "lagrangian", "tree": [["split", -1], ["over"], ["bound", 5, 1]]},
        {"kind": "lagrangian", "tree": [["split", 10**30], ["over"], ["bound", 5, 1]]},
        {"kind": "lagrangian", "tree": [["split", True], ["over"], ["bound", 5, 1]]},
        {"kind": "lagrangian", "tree": [["split", 0], ["split", 0], ["over"], ["over"], 0]},
        {"kind": "lagrangian", "tree": [["leaf"]]},
        {"kind": "lagrangian", "tree": [[[[[[[[[["bound", 5, 1]]]]]]]]]]},
        {"kind": "lagrangian", "tree": [["bound", 5, 1]], "scale": 1},
    ],
)
def test_hostile_certificates_are_refused(certificate: dict[str, Any]) -> None:
    with pytest.raises(CertificateError):
        certificates.check("Knapsack", SMALL, [1, 3], certificate)


def test_an_over_leaf_at_exactly_the_capacity_is_refused() -> None:
    # Items 1 and 2 weigh 10, the capacity: a solution, so no "over" leaf.
    tree = [["split", 1], ["split", 2], ["over"], ["bound", 0, 1], ["bound", 0, 1]]
    with pytest.raises(CertificateError, match="not over the capacity"):
        checker.bound(SMALL, {"kind": "lagrangian", "tree": tree})


def test_dantzig_bound_orders_ratios_exactly() -> None:
    # In floats, item 0's ratio (1 - 2e-9 / 0.999...) looks at least item 1's (1 - 1e-9):
    # taking item 0 first gave 999999998, below the optimum (item 1 alone).
    weights, values, capacity = [10**9 - 1, 10**9, 3], [10**9 - 2, 10**9 - 1, 1], 10**9
    optimum = brute_force(weights, values, capacity)
    assert solvers.exact_ratio_order(weights, values) == [1, 0, 2]
    bound = solvers.dantzig_bound(np.array(weights), np.array(values), capacity)
    assert bound == optimum == 10**9 - 1
    instance = {"weights": weights, "values": values, "capacity": capacity}
    assert checker.bound(instance, solvers.lagrangian_leaf(weights, values, capacity)[1]) == bound


def test_splitting_twice_on_an_item_is_refused() -> None:
    # Taken, then split again: the left-out child would have item 0 both taken and left out.
    tree = [["split", 0], ["split", 0], ["over"], ["bound", 0, 1], ["bound", 0, 1]]
    with pytest.raises(CertificateError, match="not free"):
        checker.bound(SMALL, {"kind": "lagrangian", "tree": tree})


@pytest.mark.parametrize(
    ("instance", "solution"),
    [
        (SMALL, [1, 1]),
        (SMALL, [0, 1, 3]),  # weight 12
        (SMALL, [4]),
        (SMALL, [-1]),
        (SMALL, [True]),
        (SMALL, "1 3"),
        (SMALL, None),
        ({**SMALL, "weights": [5, 0, 6, 3]}, [1]),
        ({**SMALL, "values": [10, -1, 30, 50]}, [1]),
        ({**SMALL, "values": [10, 40, 30]}, [1]),
        ({**SMALL, "capacity": -1}, []),
        ({**SMALL, "capacity": 10.0}, []),
        ({"weights": [], "values": [], "capacity": 1}, []),
        ({"values": [1], "capacity": 1}, []),
    ],
)
def test_bad_solutions_and_instances_are_refused(instance: dict[str, Any], solution: Any) -> None:
    with pytest.raises(CertificateError):
        certificates.check("Knapsack", instance, solution, {"kind": "dp"})


def test_dp_room_limit() -> None:
    at = {"weights": [checker.DP_MAX_ROOM], "values": [7], "capacity": checker.DP_MAX_ROOM}
    assert checker.bound(at, {"kind": "dp"}) == 7
    past = {"weights": [checker.DP_MAX_ROOM + 1], "values": [7], "capacity": 10**12}
    with pytest.raises(CertificateError, match="past the limits"):
        checker.bound(past, {"kind": "dp"})


def test_scaled_dp_room_limit() -> None:
    room = 2 * checker.DP_MAX_ROOM + 1
    instance = {"weights": [room], "values": [7], "capacity": room}
    assert checker.bound(instance, {"kind": "dp", "scale": 2}) == 7  # room 2 * DP_MAX_ROOM // 2
    with pytest.raises(CertificateError, match="past the limits"):
        checker.bound(instance, {"kind": "dp", "scale": 1})


def test_dp_cell_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checker, "DP_MAX_CELLS", 4 * 11)  # SMALL: 4 items, room 10
    assert checker.bound(SMALL, {"kind": "dp"}) == 90
    monkeypatch.setattr(checker, "DP_MAX_CELLS", 4 * 11 - 1)
    with pytest.raises(CertificateError, match="past the limits"):
        checker.bound(SMALL, {"kind": "dp"})


def test_dp_value_limit() -> None:
    big = {"weights": [1, 1], "values": [2**61, 2**61 - 1], "capacity": 2}
    assert checker.bound(big, {"kind": "dp"}) == 2**62 - 1
    big["values"] = [2**61, 2**61]
    with pytest.raises(CertificateError, match="2\\*\\*62"):
        checker.bound(big, {"kind": "dp"})


def test_tree_work_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = {"kind": "lagrangian", "tree": [["split", 2], ["bound", 8, 1], ["bound", 0, 1]]}
    monkeypatch.setattr(checker, "TREE_MAX_WORK", 2 * 4)  # two leaves of 4 items
    assert checker.bound(SMALL, tree) == max(30 + 32 + 8 + 26, 10 + 40 + 50)
    monkeypatch.setattr(checker, "TREE_MAX_WORK", 2 * 4 - 1)
    with pytest.raises(CertificateError, match="leaves"):
        checker.bound(SMALL, tree)


def test_producer_limits_are_the_checkers() -> None:
    assert solvers.CERTIFIED_DP_MAX_CELLS == checker.DP_MAX_CELLS
    assert solvers.CERTIFIED_DP_MAX_ROOM == checker.DP_MAX_ROOM
    assert solvers.CERTIFIED_TREE_MAX_WORK == checker.TREE_MAX_WORK
    assert solvers.CERTIFIED_MAX_BYTES == certificates.MAX_CERTIFICATE_BYTES
    widest = ["bound", 10**9, 10**9]  # values and weights are at most 10**9 in the task
    assert len(json.dumps(widest, separators=(",", ":"))) + 1 <= 32


HUGE = KnapsackInstance(
    weights=[10**8 + 7 * i * i for i in range(12)],
    values=[10**8 + 5 * i * i + (i % 3) * 10**6 for i in range(12)],
    capacity=5 * 10**8,
)
"""A capacity past the checker's programme: CP-SAT's answer, proven by a recorded tree."""


def test_huge_capacities_are_proven_by_a_recorded_tree() -> None:
    reference = TASK.reference(HUGE)
    assert reference.proven_optimal and reference.certificate is not None
    assert reference.certificate["kind"] == "lagrangian"
    weights, values = list(HUGE.weights), list(HUGE.values)
    assert reference.objective == brute_force(weights, values, HUGE.capacity)
    check_reference(HUGE)


def test_a_tree_past_its_leaf_budget_leaves_the_reference_unproven() -> None:
    weights, values = list(HUGE.weights), list(HUGE.values)
    optimum = brute_force(weights, values, HUGE.capacity)
    assert solvers.lagrangian_tree(weights, values, HUGE.capacity, optimum, 1) is None


def test_past_its_tree_budget_the_proof_is_the_scaled_programme(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(solvers, "CERTIFIED_TREE_MAX_WORK", 0)
    weights, values = HUGE.weight_array, HUGE.value_array
    optimum = brute_force(weights.tolist(), values.tolist(), HUGE.capacity)
    bound, certificate = solvers.certify(weights, values, HUGE.capacity, optimum, True)
    assert certificate["kind"] == "dp" and certificate["scale"] > 1
    assert checker.bound(instance_json(HUGE), certificate) == bound >= optimum


def test_a_wrong_dynamic_programme_never_reaches_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    instance = TASK.generate(1, "hard")
    optimum = integral(TASK.reference(instance).objective)
    monkeypatch.setattr(solvers, "dp_knapsack", solvers.greedy_knapsack)  # claims optimality
    with pytest.warns(UncertifiedReferenceWarning, match="bounds the optimum by"):
        reference = TASK.reference(TASK.generate(1, "hard"))  # a fresh one: no memo
    assert not reference.proven_optimal and reference.method == "heuristic"
    assert reference.bound == optimum and integral(reference.objective) < optimum


@pytest.mark.parametrize("hint", [[], [0], [0, 1, 2, 3, 4, 5]])  # empty, poor, overweight
def test_a_wrong_hint_never_yields_a_false_proof(hint: list[int]) -> None:
    weights, values = HUGE.weight_array, HUGE.value_array
    result = solvers.exact_knapsack(
        weights, values, HUGE.capacity, incumbent=np.array(hint, dtype=np.int64)
    )
    checked = certificates.check_claim(
        "Knapsack",
        instance_json(HUGE),
        objective=result.objective,
        solution=result.witness.tolist(),
        proven_optimal=result.proven_optimal,
        bound=result.bound,
        certificate=result.certificate,
    )
    assert checked.proven and result.objective == brute_force(
        weights.tolist(), values.tolist(), HUGE.capacity
    )


class LyingSolver:
    """CP-SAT patched to claim optimality of the empty selection."""

    deterministic_time = 0.0
    best_objective_bound = 0.0

    def solve(self, model: Any) -> Any:
        from ortools.sat.python import cp_model

        return cp_model.OPTIMAL

    def boolean_value(self, variable: Any) -> bool:
        return False


@pytest.mark.parametrize("capacity_items", [5, 12])
def test_a_cp_sat_claiming_optimality_falsely_never_reaches_proven(
    monkeypatch: pytest.MonkeyPatch, capacity_items: int
) -> None:
    monkeypatch.setattr(solvers, "cp_sat_solver", lambda *args: LyingSolver())
    weights = np.array(HUGE.weights[:capacity_items], dtype=np.int64)
    values = np.array(HUGE.values[:capacity_items], dtype=np.int64)
    result = solvers.exact_knapsack(weights, values, HUGE.capacity, incumbent=None)
    assert result.objective == 0
    assert result.certificate is not None
    instance = {"weights": weights.tolist(), "values": values.tolist(), "capacity": HUGE.capacity}
    optimum = brute_force(weights.tolist(), values.tolist(), HUGE.capacity)
    checked = certificates.check("Knapsack", instance, [], result.certificate)
    assert checked.bound is not None and checked.bound >= optimum > 0
    assert not checked.proven


def test_a_cp_sat_lie_is_caught_by_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    # Forced onto CP-SAT with a capacity the checker's programme still covers: the solver's
    # "dp" certificate repeats CP-SAT's false claim, and the checker's rerun refutes it.
    monkeypatch.setattr(solvers, "cp_sat_solver", lambda *args: LyingSolver())
    monkeypatch.setattr(
        solvers, "exact_knapsack", functools.partial(solvers.exact_knapsack, max_dp_cells=0)
    )
    monkeypatch.setattr(solvers, "greedy_knapsack", lambda *args: np.empty(0, np.int64))
    instance = KnapsackInstance(**SMALL)
    with pytest.warns(UncertifiedReferenceWarning):
        reference = TASK.reference(instance)
    assert not reference.proven_optimal and reference.objective == 0 and reference.bound == 90
