"""References on every task: one meaning of ``gap``, proofs that do not depend on the clock, and
a reference that never raises, whenever the wall-clock safety net fires."""

from __future__ import annotations

import ast
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import npgym
from npgym.heuristics import budget
from npgym.heuristics.result import relative_gap
from npgym.results import DEADLINE_NOTE, Reference

TASK_NAMES = npgym.list_tasks()
HEURISTICS = Path(npgym.heuristics.__path__[0])


def assert_consistent(task: Any, instance: Any, reference: Reference) -> None:
    """The reference verifies, and its bound and gap follow :class:`Reference`'s definition."""
    if reference.objective is None:  # an instance without a solution (SetCover)
        assert reference.proven_optimal and reference.gap in (None, 0.0)
        return
    assert task.verify(instance, reference.solution).objective == reference.objective
    assert reference.method == "heuristic" or reference.proven_optimal
    assert reference.proven_optimal == (reference.method in ("exact", "planted"))
    if reference.bound is None:
        assert reference.gap is None and not reference.proven_optimal
        return
    if task.sense == "min":
        assert reference.bound <= reference.objective
    else:
        assert reference.bound >= reference.objective
    assert reference.gap == relative_gap(reference.objective, reference.bound)
    assert (reference.gap == 0.0) == reference.proven_optimal


def test_relative_gap_definition() -> None:
    assert relative_gap(10, 10) == 0.0
    assert relative_gap(50, 40) == pytest.approx(0.2)  # a minimisation: (50 - 40) / 50
    assert relative_gap(40, 50) == pytest.approx(0.25)  # a maximisation: (50 - 40) / 40
    assert relative_gap(0, 3) == 3.0  # an objective of 0 divides by 1, never by 0
    assert relative_gap(0, 0) == 0.0


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_gap_follows_the_one_definition(task_name: str) -> None:
    task = npgym.get_task(task_name)
    cases = [("easy", seed, exact, 60.0) for seed in range(3) for exact in (True, False)]
    cases += [("benchmark", seed, exact, 0.0) for seed in range(3) for exact in (True, False)]
    for tier, seed, exact, limit in cases:
        instance = task.generate(seed, tier=tier)
        assert_consistent(task, instance, task.solve(instance, exact=exact, time_limit=limit))


def test_heuristics_never_read_the_clock_outside_the_safety_net() -> None:
    readers = {"time", "monotonic", "perf_counter", "process_time"}
    for path in sorted(HEURISTICS.glob("*.py")):
        if path.name == "budget.py":
            continue
        tree = ast.parse(path.read_text())
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        names |= {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        found = readers & names
        assert not found, f"{path.name} reads the clock directly: {sorted(found)}"


class FakeClock:
    """``budget.monotonic`` replacement: real time that jumps past every deadline after ``fire``
    reads (never, when ``fire`` is None), or that runs ``speed`` times too fast (a loaded
    machine)."""

    def __init__(self, fire: int | None = None, speed: float = 1.0) -> None:
        self.fire, self.speed, self.reads = fire, speed, 0
        self.origin = time.monotonic()

    def __call__(self) -> float:
        self.reads += 1
        if self.fire is not None and self.reads > self.fire:
            return 1e12
        return self.origin + self.speed * (time.monotonic() - self.origin)


def hard_instance(task: Any) -> Any:
    """A benchmark-tier instance whose exact reference needs more than its heuristic."""
    for seed in range(40):
        instance = task.generate(seed, tier="benchmark")
        quick = task.solve(instance, exact=False, time_limit=60.0)
        if not quick.proven_optimal:
            return instance
    return task.generate(0, tier="benchmark")


@pytest.fixture(scope="module", params=TASK_NAMES)
def hard(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    """Each task with its :func:`hard_instance`, searched for once for all the tests here."""
    task = npgym.get_task(request.param)
    return task, hard_instance(task)


def test_reference_never_raises_whenever_the_safety_net_fires(
    hard: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    task, instance = hard
    counter = FakeClock()
    monkeypatch.setattr(budget, "monotonic", counter)
    expected = task.solve(instance, exact=True, time_limit=0.5)
    # Every one of the first reads, then a spread over the rest: each stage of the search.
    reads = counter.reads
    for fire in sorted({*range(min(reads, 6) + 1), *np.linspace(0, reads, 8).astype(int)}):
        monkeypatch.setattr(budget, "monotonic", FakeClock(fire))
        reference = task.solve(instance, exact=True, time_limit=0.5)
        assert_consistent(task, instance, reference)
        if reference != expected:
            assert reference.solver.endswith(DEADLINE_NOTE), (fire, reference, expected)
            assert not reference.proven_optimal


def test_tsp_reference_with_a_short_limit_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    # Seed 7 once raised OverflowError: an infinite LP bound converted to an int.
    task = npgym.get_task("TSP")
    instance = task.generate(7, tier="benchmark")
    for fire in (0, 1, 2, 3, 5, 8, 13):
        monkeypatch.setattr(budget, "monotonic", FakeClock(fire))
        assert_consistent(task, instance, task.solve(instance, exact=True, time_limit=0.5))


def test_reference_bytes_do_not_depend_on_machine_speed(
    hard: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    task, instance = hard
    for limit in (0.05, 60.0):
        idle = task.solve(instance, exact=True, time_limit=limit)
        monkeypatch.setattr(budget, "monotonic", FakeClock(speed=5.0))
        loaded = task.solve(instance, exact=True, time_limit=limit)
        monkeypatch.undo()
        if limit < 1 and loaded.solver.endswith(DEADLINE_NOTE):
            continue  # the safety net (1.5 s at 5x speed) fired, and says so
        assert loaded.model_dump_json() == idle.model_dump_json()


def large_instance(task: Any, n: int) -> Any:
    """A random instance beyond the generators' caps: Euclidean cities or G(n, 0.2)."""
    rng = np.random.default_rng(0)
    if task.name == "TSP":
        points = rng.integers(0, 1000, size=(n, 2))
        squared = ((points[:, None, :] - points[None, :, :]) ** 2).sum(-1)
        distances = np.rint(np.sqrt(squared)).astype(np.int64) + 1
        np.fill_diagonal(distances, 0)
        return task.instance_type(distances=distances.tolist())
    upper = np.triu(rng.random((n, n)) < 0.2, 1)
    return task.instance_type(n=n, edges=np.argwhere(upper).tolist())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task_name", "n", "limit"),
    [("MaxIndependentSet", 2000, 1.0), ("MaxIndependentSet", 5000, 5.0), ("TSP", 2000, 5.0)],
)
def test_large_instances_respect_the_budget(task_name: str, n: int, limit: float) -> None:
    task = npgym.get_task(task_name)
    instance = large_instance(task, n)
    task.solve(task.generate(0, tier="easy"), exact=True, time_limit=1.0)  # compile first
    started = time.perf_counter()
    reference = task.solve(instance, exact=True, time_limit=limit)
    elapsed = time.perf_counter() - started
    assert_consistent(task, instance, reference)
    assert not reference.solver.endswith(DEADLINE_NOTE), elapsed


@pytest.mark.parametrize("limit", [-1.0, float("nan")])
def test_a_bad_time_limit_is_refused(limit: float) -> None:
    task = npgym.get_task("TSP")
    with pytest.raises(ValueError, match="time_limit"):
        task.reference(task.generate(0, tier="easy"), time_limit=limit)


def test_work_units_and_the_safety_net_handle_any_effort() -> None:
    assert budget.work_units(float("nan"), 100.0) == 1
    assert budget.work_units(-5.0, 100.0) == 1
    assert budget.work_units(float("inf"), 100.0) == 2**62
    assert budget.work_units(2.5, 100.0) == 250
    assert not budget.Deadline.for_effort(float("nan")).expired()
    assert budget.Deadline.for_effort(-1.0).seconds == 1.0
