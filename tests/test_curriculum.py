"""The adaptive curriculum: the update rule, fresh instances, resuming, bad input, the env."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import npgym
from npgym.curriculum import AdaptiveCurriculum, CurriculumError, CurriculumItem
from npgym.datasets import benchmark_fingerprints

SOLVED, FAILED = 2.0, -0.5


def _run(curriculum: AdaptiveCurriculum, steps: int, pass_every: int) -> list[tuple[str, float]]:
    """Issue and report ``steps`` items; every ``pass_every``-th passes."""
    trace = []
    for step in range(steps):
        item = curriculum.next()
        curriculum.report(item, SOLVED if step % pass_every == 0 else FAILED)
        trace.append((item.key, item.difficulty))
    return trace


def test_frontier_rises_when_passing_and_falls_when_failing() -> None:
    up = AdaptiveCurriculum(["Knapsack"], target=(0.3, 0.7), start=0.4, step=0.05, window=4)
    _run(up, 12, pass_every=1)
    assert up.difficulty("Knapsack") == pytest.approx(0.55)
    down = AdaptiveCurriculum(["Knapsack"], target=(0.3, 0.7), start=0.4, step=0.05, window=4)
    _run(down, 12, pass_every=10**6)
    assert down.difficulty("Knapsack") == pytest.approx(0.25 + 1e-9, abs=1e-6)


def test_in_band_pass_rate_keeps_the_frontier_and_bounds_clamp() -> None:
    steady = AdaptiveCurriculum(["SubsetSum"], start=0.4, window=4)
    _run(steady, 16, pass_every=2)  # pass rate 0.5: inside (0.3, 0.7)
    assert steady.difficulty("SubsetSum") == 0.4
    low = AdaptiveCurriculum(["Knapsack"], start=0.05, step=0.1, window=2)
    _run(low, 10, pass_every=10**6)
    assert low.difficulty("Knapsack") == 0.0


def test_reports_from_an_older_frontier_do_not_count() -> None:
    curriculum = AdaptiveCurriculum(["Knapsack"], start=0.4, window=2)
    stale = curriculum.next()
    for _ in range(2):
        curriculum.report(curriculum.next(), SOLVED)
    assert curriculum.difficulty("Knapsack") == pytest.approx(0.45)
    curriculum.report(stale, SOLVED)
    curriculum.report(stale, SOLVED)  # accepted, but issued at the old frontier
    assert curriculum.difficulty("Knapsack") == pytest.approx(0.45)


def test_instances_never_repeat_and_never_come_from_np_bench() -> None:
    curriculum = AdaptiveCurriculum(["MaxClique"], start=0.2, seed=3)
    items = [curriculum.next() for _ in range(300)]
    fingerprints = [item.instance.fingerprint() for item in items]
    assert len(set(fingerprints)) == len(fingerprints)
    assert len({item.key for item in items}) == len(items)
    assert not set(fingerprints) & benchmark_fingerprints(["MaxClique"])


def test_an_exhausted_frontier_moves_up_and_stays_up() -> None:
    curriculum = AdaptiveCurriculum(["SubsetSum"], start=0.0, window=4)
    items = [curriculum.next() for _ in range(3000)]
    assert len({item.instance.fingerprint() for item in items}) == len(items)
    floor = curriculum.difficulty("SubsetSum")
    assert floor > 0.0  # difficulty 0 ran out of distinct instances
    for _ in range(40):  # failing reports cannot push it back below the floor
        curriculum.report(curriculum.next(), FAILED)
    assert curriculum.difficulty("SubsetSum") == floor
    resumed = AdaptiveCurriculum.from_state(curriculum.state_dict())
    assert resumed.next().difficulty == floor


def test_a_frontier_at_the_benchmark_never_issues_np_bench_instances() -> None:
    curriculum = AdaptiveCurriculum(["SubsetSum"], start=0.8, seed=0)
    issued = {curriculum.next().instance.fingerprint() for _ in range(50)}
    assert not issued & benchmark_fingerprints(["SubsetSum"])


def test_state_dict_resumes_identically() -> None:
    tasks = ["TSP", "GraphColoring", "Knapsack"]
    uninterrupted = AdaptiveCurriculum(tasks, seed=5, window=3)
    expected = _run(uninterrupted, 40, pass_every=3)
    first = AdaptiveCurriculum(tasks, seed=5, window=3)
    head = _run(first, 17, pass_every=3)
    state = json.loads(json.dumps(first.state_dict()))
    resumed = AdaptiveCurriculum.from_state(state)
    tail = []
    for step in range(17, 40):
        item = resumed.next()
        resumed.report(item, SOLVED if step % 3 == 0 else FAILED)
        tail.append((item.key, item.difficulty))
    assert head + tail == expected
    assert resumed.stats() == uninterrupted.stats()


def test_a_score_or_a_float_can_be_reported() -> None:
    curriculum = AdaptiveCurriculum(["Knapsack"], pass_ratio=0.9)
    item = curriculum.next()
    task = npgym.get_task("Knapsack")
    reference = task.reference(item.instance, exact=False)
    optimal = task.score(item.instance, task.format_answer(reference.solution), reference)
    assert curriculum.report(item, optimal)
    assert curriculum.report(item, 1.95)
    assert not curriculum.report(item, 1.5)
    with pytest.raises(TypeError, match="Score or a reward float"):
        curriculum.report(item, "2.0")  # type: ignore[arg-type]


def test_bad_input_gets_clear_errors() -> None:
    curriculum = AdaptiveCurriculum(["Knapsack"])
    foreign = AdaptiveCurriculum(["Knapsack"], seed=9).next()
    curriculum.next()
    forged = CurriculumItem("Knapsack", foreign.instance, 0.2, "Knapsack/999")
    with pytest.raises(CurriculumError, match="not issued by this curriculum"):
        curriculum.report(forged, SOLVED)
    with pytest.raises(CurriculumError, match="not issued"):
        curriculum.report("nonsense", SOLVED)
    state = curriculum.state_dict()
    with pytest.raises(CurriculumError, match="version"):
        AdaptiveCurriculum.from_state({**state, "version": 0})
    with pytest.raises(CurriculumError, match="malformed"):
        AdaptiveCurriculum.from_state({**state, "frontiers": {"Knapsack": {}}})
    with pytest.raises(ValueError, match="start"):
        AdaptiveCurriculum(["Knapsack"], start=2.5)
    with pytest.raises(ValueError, match="band"):
        AdaptiveCurriculum(["Knapsack"], target=(0.7, 0.3))
    with pytest.raises(KeyError, match="unknown task"):
        AdaptiveCurriculum(["NoSuchTask"])


def test_gym_env_draws_from_and_reports_to_the_curriculum() -> None:
    env = gym.make(
        "npgym/Curriculum",
        tasks=["Knapsack", "SubsetSum"],
        exact_reference=False,
        curriculum_options={"window": 2, "start": 0.4},
    )
    curriculum = env.unwrapped.curriculum
    for _ in range(6):
        _, info = env.reset()
        task = npgym.get_task(info["task"])
        answer = task.format_answer(info["reference"].solution)
        _, reward, terminated, _, info = env.step(answer)
        assert terminated and reward == 2.0 and info["passed"]
    assert sum(stat["reports"] for stat in curriculum.stats().values()) == 6
    assert max(stat["difficulty"] for stat in curriculum.stats().values()) > 0.4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make("npgym/Curriculum", tasks=["Knapsack"], exact_reference=False).unwrapped)
