"""SubsetSum certificates: every reference carries one the independent checker accepts, and
no forged, mutated or hostile certificate or claim proves a false bound."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npgym
from npgym import certificates
from npgym.certificates import CertificateError
from npgym.certificates import subset_sum as checker
from npgym.heuristics import subset_sum as solvers
from npgym.results import UncertifiedReferenceWarning
from npgym.tasks.subset_sum import SubsetSumInstance
from tests.certify import JSON_VALUES, TIERS_AND_DIFFICULTIES, integral
from tests.certify import check_reference as check_reference_of


def check_reference(instance: Any, exact: bool = True) -> certificates.Checked:
    """The reference of ``instance``, its claims checked against its certificate."""
    return check_reference_of("SubsetSum", instance, exact)


TASK = npgym.get_task("SubsetSum")
SMALL: dict[str, Any] = {"numbers": [1, 3, 2, 2, 5, 4], "target": 7}
"""At most 3 indices sum to 7 (1 + 2 + 4 at indices 0, 2, 5; 3 + 2 + 2 at 1, 2, 3): the four
smallest numbers already sum to 1 + 2 + 2 + 3 = 8, so the ``smallest`` bound is 3 as well."""


def brute_force(numbers: list[int], target: int) -> int | None:
    """The most indices summing to ``target`` (``None``: no subset does)."""
    for size in range(len(numbers), 0, -1):
        if any(sum(chosen) == target for chosen in itertools.combinations(numbers, size)):
            return size
    return None


@pytest.mark.parametrize(("tier", "difficulty"), TIERS_AND_DIFFICULTIES)
def test_every_tier_and_difficulty_is_proven_with_a_certificate(
    tier: str | None, difficulty: float | None
) -> None:
    for seed in range(3):
        instance = TASK.generate(seed, tier, difficulty)
        checked = check_reference(instance)
        assert checked.proven
        bounded = check_reference(instance, exact=False)  # the greedy's bound, checked too
        assert integral(bounded.bound) >= integral(checked.objective)
        assert bounded.bound == TASK.reference(instance, exact=False).bound


def test_small_instance_by_hand() -> None:
    assert brute_force(SMALL["numbers"], 7) == 3
    assert checker.objective(SMALL, [5, 0, 2]) == 3
    assert checker.objective(SMALL, [4, 3]) == 2
    assert checker.bound(SMALL, {"kind": "dp"}) == 3
    assert checker.bound(SMALL, {"kind": "smallest"}) == 3
    assert checker.bound({**SMALL, "target": 8}, {"kind": "smallest"}) == 4


@st.composite
def small_instances(draw: st.DrawFn) -> dict[str, Any]:
    numbers = draw(st.lists(st.integers(1, 12), min_size=1, max_size=9))
    return {"numbers": numbers, "target": draw(st.integers(1, sum(numbers) + 2))}


@settings(max_examples=400, deadline=None)
@given(instance=small_instances())
def test_certified_bounds_agree_with_brute_force(instance: dict[str, Any]) -> None:
    optimum = brute_force(instance["numbers"], instance["target"])
    smallest = checker.bound(instance, {"kind": "smallest"})
    if optimum is None:
        with pytest.raises(CertificateError, match="no subset"):
            checker.bound(instance, {"kind": "dp"})
        return
    assert checker.bound(instance, {"kind": "dp"}) == optimum <= smallest
    array = np.array(instance["numbers"], dtype=np.int64)
    assert smallest == solvers.cardinality_bound(array, instance["target"])


@settings(max_examples=400, deadline=None)
@given(instance=small_instances(), data=st.data())
def test_a_mutated_claim_is_refused_or_true(instance: dict[str, Any], data: st.DataObject) -> None:
    """The certificates hold no numbers: mutate a number of the claim (the witness, the
    objective or the bound) instead, and each mutation is refused or still true."""
    numbers, target = instance["numbers"], instance["target"]
    optimum = brute_force(numbers, target)
    if optimum is None:
        return
    witness = solvers.max_cardinality_subset(np.array(numbers, dtype=np.int64), target)
    assert witness is not None
    claim: dict[str, Any] = {"objective": optimum, "bound": optimum, "solution": witness.tolist()}
    what = data.draw(st.sampled_from(["objective", "bound", "solution"]), label="what")
    new = data.draw(st.integers(-2, 12), label="new")
    if what == "solution":
        claim["solution"][data.draw(st.integers(0, optimum - 1), label="at")] = new
    else:
        claim[what] = new
    kind = data.draw(st.sampled_from(["dp", "smallest"]), label="kind")
    try:
        checked = certificates.check_claim(
            "SubsetSum",
            instance,
            proven_optimal=claim["bound"] == claim["objective"],
            certificate={"kind": kind},
            **claim,
        )
    except CertificateError:
        return
    assert checked.objective == claim["objective"] <= optimum
    assert claim["bound"] >= integral(checked.bound) >= optimum
    if claim["bound"] == claim["objective"]:  # proven: truly optimal
        assert claim["objective"] == optimum


@settings(max_examples=200, deadline=None)
@given(certificate=st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3))
def test_hostile_json_is_refused_or_a_valid_bound(certificate: dict[str, Any]) -> None:
    try:
        checked = certificates.check("SubsetSum", SMALL, [0, 2, 5], certificate)
    except CertificateError:
        return
    assert integral(checked.bound) >= 3


@pytest.mark.parametrize(
    "certificate",
    [
        {},
        {"kind": "DP"},
        {"kind": None},
        {"kind": ["dp"]},
        {"kind": "dp", "table": [0, 1]},
        {"kind": "smallest", "k": 3},
    ],
)
def test_hostile_certificates_are_refused(certificate: dict[str, Any]) -> None:
    with pytest.raises(CertificateError):
        certificates.check("SubsetSum", SMALL, [0, 2, 5], certificate)


@pytest.mark.parametrize(
    ("instance", "solution"),
    [
        (SMALL, [0, 0, 4]),  # 1 + 1 + 5, index 0 twice
        (SMALL, [0, 1]),  # 4, not 7
        (SMALL, []),
        (SMALL, [6, 0]),
        (SMALL, [-1, 4]),
        (SMALL, [True, 4]),
        (SMALL, "0 2 5"),
        (SMALL, {"0": 1}),
        ({**SMALL, "numbers": [1, 0, 6]}, [0, 2]),
        ({**SMALL, "numbers": []}, []),
        ({**SMALL, "target": 0}, []),
        ({**SMALL, "target": 7.0}, [0, 2, 5]),
        ({"numbers": [1, 6]}, [0, 1]),
    ],
)
def test_bad_solutions_and_instances_are_refused(instance: dict[str, Any], solution: Any) -> None:
    with pytest.raises(CertificateError):
        certificates.check("SubsetSum", instance, solution, {"kind": "dp"})


def test_dp_width_limit() -> None:
    # K = 1 (one number, so at most one of them): the integer is (target + 1) * 2 bits wide.
    target = checker.DP_MAX_WIDTH // 2 - 1
    at = {"numbers": [target], "target": target}
    assert checker.bound(at, {"kind": "dp"}) == 1
    past = {"numbers": [target + 1], "target": target + 1}
    with pytest.raises(CertificateError, match="past the limits"):
        checker.bound(past, {"kind": "dp"})
    assert checker.bound(past, {"kind": "smallest"}) == 1


def test_dp_bit_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checker, "DP_MAX_BITS", 6 * 8 * 4)  # SMALL: 6 numbers, target 7, K 3
    assert checker.bound(SMALL, {"kind": "dp"}) == 3
    monkeypatch.setattr(checker, "DP_MAX_BITS", 6 * 8 * 4 - 1)
    with pytest.raises(CertificateError, match="past the limits"):
        checker.bound(SMALL, {"kind": "dp"})


def test_a_huge_number_is_skipped_not_shifted() -> None:
    instance = {"numbers": [10**18, 3, 4], "target": 7}
    assert checker.bound(instance, {"kind": "dp"}) == 2


def test_the_task_limits_fit_the_dp() -> None:
    from npgym.tasks.subset_sum.instance import MAX_NUMBERS, MAX_VALUE

    width = (MAX_VALUE + 1) * (MAX_NUMBERS + 1)  # K is at most the count of numbers
    assert width <= checker.DP_MAX_WIDTH and MAX_NUMBERS * width <= checker.DP_MAX_BITS


def greedy_misses(instance: SubsetSumInstance) -> bool:
    """Whether the greedy falls short of the optimum on ``instance``."""
    greedy = solvers.greedy_subset(instance.number_array, instance.target)
    exact = solvers.max_cardinality_subset(instance.number_array, instance.target)
    assert greedy is not None and exact is not None
    return greedy.size < exact.size


def test_a_wrong_dynamic_programme_never_reaches_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    seed = next(s for s in range(50) if greedy_misses(TASK.generate(s, "hard")))
    optimum = integral(TASK.reference(TASK.generate(seed, "hard")).objective)
    monkeypatch.setattr(solvers, "max_cardinality_subset", solvers.greedy_subset)
    with pytest.warns(UncertifiedReferenceWarning, match="bounds the optimum by"):
        reference = TASK.reference(TASK.generate(seed, "hard"))  # a fresh one: no memo
    assert not reference.proven_optimal and reference.method == "heuristic"
    assert reference.bound == optimum and integral(reference.objective) < optimum


def test_a_bound_stronger_than_its_certificate_never_reaches_proven(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    instance = TASK.generate(0, "hard")
    smallest = integral(TASK.reference(instance, exact=False).bound)
    monkeypatch.setattr(solvers, "cardinality_bound", lambda numbers, target: 1)
    with pytest.warns(UncertifiedReferenceWarning, match="proves only"):
        reference = TASK.reference(TASK.generate(0, "hard"), exact=False)
    assert not reference.proven_optimal and reference.bound == smallest
