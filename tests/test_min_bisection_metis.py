"""MinBisection with METIS: exact-balance repair, refinement, fallbacks and wrong hints.

METIS only proposes a partition; npgym repairs it to a bisection, recomputes its cut and keeps it
only when strictly smaller, and every bound is npgym's own. So a missing, failing or lying
pymetis can cost quality, never correctness (checked against brute force).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npgym
from npgym.heuristics import min_bisection as solvers
from tests.test_min_bisection import brute_force, random_weights

pymetis = pytest.importorskip("pymetis")
TASK = npgym.get_task("MinBisection")


def _generated(seed: int, n: int) -> Any:
    config = {"n_min": n, "n_max": n, "traitors": seed % 3, "double_agents": seed % 2}
    return TASK.generate(seed, tier="benchmark", overrides=config)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30))
def test_repair_and_refine_make_a_bisection_from_any_side_array(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    weights = random_weights(rng, n)
    side = (rng.random(n) < rng.random()).astype(np.int64)  # any balance at all
    repaired = solvers.repair_balance(weights, side)
    assert abs(2 * int(repaired.sum()) - n) <= 1
    if abs(2 * int(side.sum()) - n) <= 1:
        assert (repaired == side).all()  # a bisection is left alone
    refined, cut = solvers.refine(weights, side)
    assert abs(2 * int(refined.sum()) - n) <= 1 and (n == 0 or refined[0] == 0)
    assert cut == solvers.cut_weight(weights, refined) <= solvers.cut_weight(weights, repaired)


def test_repair_moves_the_cheapest_vertex() -> None:
    # Path 0-1-2-3 (weights 5, 1, 5) all on side 0: moving 0 or 3 raises the cut by 5, 1 or 2 by
    # 6, so 0 moves (lowest id); then moving 1 lowers it by 4, so 1 follows: the cut is 1.
    weights = np.zeros((4, 4), np.int64)
    for u, v, w in [(0, 1, 5), (1, 2, 1), (2, 3, 5)]:
        weights[u, v] = weights[v, u] = w
    repaired = solvers.repair_balance(weights, np.zeros(4, np.int64))
    assert repaired.tolist() == [1, 1, 0, 0]
    assert solvers.cut_weight(weights, solvers.refine(weights, np.zeros(4, np.int64))[0]) == 1


def test_metis_bisection_is_deterministic_and_kept_only_when_strictly_smaller() -> None:
    instance = TASK.generate(0, difficulty=1.2)
    first, _ = solvers.metis_bisection(instance.weights)
    second, _ = solvers.metis_bisection(instance.weights)
    assert first is not None and second is not None and (first == second).all()
    poor = (np.arange(instance.n) >= instance.n // 2).astype(np.int64)
    poor_cut = solvers.cut_weight(instance.weights, poor)
    side, cut, source = solvers.with_metis(instance.weights, poor, poor_cut, "poor")
    assert cut < poor_cut and source == solvers.METIS_REFINED
    assert cut == solvers.cut_weight(instance.weights, side)
    again, same_cut, same_source = solvers.with_metis(instance.weights, side, cut, "mine")
    assert (again == side).all() and same_cut == cut and same_source == "mine"  # a tie keeps it


def _lying_metis(answer: Any) -> Any:
    """A pymetis.part_graph that ignores the graph and returns ``answer(n)``."""

    def part_graph(parts: int, adjacency: Any = None, **_: Any) -> Any:
        return answer(len(adjacency.adj_starts) - 1)

    return part_graph


def _crash(*_: Any, **__: Any) -> Any:
    raise RuntimeError("METIS crashed")


WRONG_HINTS = {
    "all on one side, claiming a cut of 0": _lying_metis(lambda n: (0, [0] * n)),
    "an unbalanced split": _lying_metis(lambda n: (0, [int(v < 1) for v in range(n)])),
    "a part id that is no side": _lying_metis(lambda n: (0, [2] * n)),
    "too short": _lying_metis(lambda n: (0, [0] * (n - 1))),
    "not numbers": _lying_metis(lambda n: (0, ["a"] * n)),
    "a crash": _crash,
}


@pytest.mark.parametrize("hint", WRONG_HINTS)
def test_wrong_metis_hints_never_give_a_wrong_reference(
    hint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pymetis, "part_graph", WRONG_HINTS[hint])
    for seed in range(8):
        instance = _generated(seed, 6 + seed)
        optimum = brute_force(instance.weights)
        for exact, time_limit in ((True, 60.0), (True, 1e-9), (False, 60.0)):
            reference = TASK.solve(instance, exact=exact, time_limit=time_limit)
            assert TASK.verify(instance, reference.solution).objective == reference.objective
            assert reference.objective >= optimum
            assert reference.bound is None or reference.bound <= optimum
            assert reference.proven_optimal == (reference.bound == reference.objective)
            if reference.proven_optimal:
                assert reference.objective == optimum
            failing = hint in ("a crash", "too short", "not numbers", "a part id that is no side")
            if exact and time_limit < 1 and failing and not reference.proven_optimal:
                assert "METIS fallback" in reference.solver


def test_missing_pymetis_falls_back_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pymetis", None)  # import pymetis raises ImportError
    instance = _generated(3, solvers.METIS_MIN_VERTICES)
    reference = TASK.solve(instance, exact=False, time_limit=60.0)
    assert reference.solver == f"{solvers.KERNIGHAN_LIN} (METIS fallback: pymetis not installed)"
    assert TASK.verify(instance, reference.solution).objective == reference.objective


def test_a_proven_reference_never_asks_metis(monkeypatch: pytest.MonkeyPatch) -> None:
    # The published tiers prove with the branch and bound alone: their bytes stay as they were.
    monkeypatch.setattr(pymetis, "part_graph", _crash)
    for tier in npgym.TIERS:
        reference = TASK.reference(TASK.generate(5, tier=tier))
        assert reference.proven_optimal and "METIS" not in reference.solver


def test_unproven_references_are_never_worse_than_metis() -> None:
    instance = TASK.generate(4, difficulty=1.2)  # seed 4: METIS alone cuts 3 more than npgym
    start, _ = solvers.metis_bisection(instance.weights)
    assert start is not None
    _, metis_refined = solvers.refine(instance.weights, start)
    repaired = solvers.repair_balance(instance.weights, start)
    metis_raw = solvers.cut_weight(instance.weights, repaired)
    for exact in (True, False):
        reference = TASK.solve(instance, exact=exact, time_limit=0.01)
        assert reference.objective <= metis_refined <= metis_raw
        assert TASK.verify(instance, reference.solution).objective == reference.objective


@pytest.mark.parametrize("n", [solvers.METIS_MIN_VERTICES - 1, solvers.METIS_MIN_VERTICES])
def test_the_heuristic_reference_asks_metis_from_its_size_on(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pymetis, "part_graph", _crash)
    reference = TASK.solve(_generated(1, n), exact=False, time_limit=60.0)
    asked = n >= solvers.METIS_MIN_VERTICES
    assert reference.solver == solvers.KERNIGHAN_LIN + (
        " (METIS fallback: pymetis failed: RuntimeError)" if asked else ""
    )
