"""Scoring speed: ``score()`` per benchmark-tier completion for every task, and the TSP kernel.

Run: ``pytest bench/test_score_speed.py --benchmark-only`` (not part of the default test run).
The goal is that scoring never bottlenecks an RL loop: tens of microseconds per completion.
"""

from __future__ import annotations

import numpy as np
import pytest

import npgym
from npgym.heuristics.jit import njit
from npgym.tasks.tsp.verifier import check_tour

REASONING = "Let me work through the constraints one at a time and check each candidate. " * 30


def _instance_and_reference(task_name: str) -> tuple[npgym.Task, object, npgym.Reference]:
    task = npgym.get_task(task_name)
    instance = task.generate(0, tier="benchmark")
    return task, instance, task.reference(instance)


@pytest.mark.parametrize("task_name", npgym.list_tasks())
def test_score_optimal_completion(benchmark, task_name: str) -> None:
    task, instance, reference = _instance_and_reference(task_name)
    completion = REASONING + task.format_answer(reference.solution)
    task.score(instance, completion, reference)
    score = benchmark(task.score, instance, completion, reference)
    assert score.reward == 2.0


@pytest.mark.parametrize("task_name", npgym.list_tasks())
def test_score_unparseable_completion(benchmark, task_name: str) -> None:
    task, instance, reference = _instance_and_reference(task_name)
    completion = REASONING + "Answer: I am not sure."
    score = benchmark(task.score, instance, completion, reference)
    assert not score.format_ok


@njit
def _check_many(dist: np.ndarray, tours: np.ndarray) -> np.ndarray:
    lengths = np.empty(tours.shape[0], np.int64)
    for row in range(tours.shape[0]):
        lengths[row] = check_tour(dist, tours[row])[3]
    return lengths


def _tsp_tours(count: int) -> tuple[np.ndarray, np.ndarray]:
    task = npgym.get_task("TSP")
    instance = task.generate(0, overrides={"n_min": 50, "n_max": 50})
    rng = np.random.default_rng(0)
    tours = np.stack([np.append(p, p[0]) for p in (rng.permutation(50) for _ in range(count))])
    return instance.matrix, tours.astype(np.int64)


def test_tsp_kernel_single_call(benchmark) -> None:
    dist, tours = _tsp_tours(1)
    check_tour(dist, tours[0])
    result = benchmark(check_tour, dist, tours[0])
    assert result[0] == 0


def test_tsp_kernel_batched_1000_tours(benchmark) -> None:
    dist, tours = _tsp_tours(1000)
    _check_many(dist, tours)
    lengths = benchmark(_check_many, dist, tours)
    assert (lengths > 0).all()
