"""The reference pool: the same rows with it as without it, and no lost row, hang or orphan when
its workers die or stall."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from npgym.curriculum import AdaptiveCurriculum
from npgym.datasets import DatasetSpec, make_rows
from npgym.integrations.curriculum import CurriculumPrefetch, curriculum_record
from npgym.reference_pool import (
    MAX_PREFETCH,
    MAX_RESTARTS,
    MAX_WORKERS,
    ReferenceJob,
    ReferencePool,
    ReferencePoolFallback,
)
from npgym.registry import get_task

TASKS = ["Knapsack", "SubsetSum", "MaxClique"]


def _workers(pool: ReferencePool) -> list[int]:
    """The pids of the pool's live worker processes."""
    executor = pool._executor
    return [] if executor is None else list(executor._processes)  # type: ignore[attr-defined]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead
        return stat.read().split()[2] != "Z"


def test_stream_rows_are_the_same_with_the_pool() -> None:
    spec = DatasetSpec(split="stream", tasks=tuple(TASKS), count=None, difficulty=1.0)
    plain = [result.record for result in itertools.islice(make_rows(spec), 9)]
    with ReferencePool(workers=2, prefetch=4) as pool:
        pooled = [result.record for result in itertools.islice(make_rows(spec, pool=pool), 9)]
        assert pool.stats.from_pool + pool.stats.in_process == 9
        assert pool.stats.from_pool > 0
    assert pooled == plain


def _curriculum_run(prefetch: CurriculumPrefetch | None, curriculum: AdaptiveCurriculum) -> list:
    """Rows of a curriculum whose frontier moves often: reports from a seeded coin that leans
    towards passing on odd draws and failing on even ones."""
    coin = np.random.default_rng(7)
    rows = []
    for index in range(24):
        item = curriculum.next()
        rows.append(curriculum_record(item, "exact", prefetch))
        chance = 0.9 if index % 6 < 3 else 0.1
        curriculum.report(item, 2.0 if coin.random() < chance else -0.5)
    return rows


def test_curriculum_rows_are_the_same_with_the_pool_while_the_frontier_moves() -> None:
    options = {"seed": 3, "start": 1.0, "window": 2, "step": 0.1}
    plain_curriculum = AdaptiveCurriculum(TASKS, **options)
    plain = _curriculum_run(None, plain_curriculum)
    curriculum = AdaptiveCurriculum(TASKS, **options)
    with ReferencePool(workers=2, prefetch=5) as pool:
        pooled = _curriculum_run(CurriculumPrefetch(curriculum, pool, "exact"), curriculum)
        stats = pool.stats
    assert pooled == plain
    assert curriculum.state_dict() == plain_curriculum.state_dict()
    assert stats.from_pool > 0 and stats.discarded > 0  # guesses used, and wrong ones dropped
    assert stats.from_pool + stats.in_process == len(plain)


def _job_and_instance(seed: int) -> tuple[ReferenceJob, object]:
    job = ReferenceJob.make("MaxClique", seed, difficulty=2.0)
    return job, job.instance()


def _signal_the_worker(pool: ReferencePool, job: ReferenceJob, signum: int) -> int:
    """Hand ``job`` to the pool's only worker, then send that worker ``signum``; its pid."""
    pool.keep([job])
    (worker,) = _workers(pool)
    os.kill(worker, signum)
    return worker


def test_a_killed_worker_costs_a_recomputation_never_a_row() -> None:
    task = get_task("MaxClique")
    with ReferencePool(workers=1, prefetch=2) as pool:
        job, instance = _job_and_instance(1)
        worker = _signal_the_worker(pool, job, signal.SIGKILL)
        reference = pool.reference(job, instance)  # type: ignore[arg-type]
        assert reference == task.reference(job.instance())
        assert pool.stats.recovered == 1 and pool.stats.restarts == 1
        # The pool is rebuilt: the next reference comes from a new worker.
        job, instance = _job_and_instance(2)
        pool.keep([job])
        assert pool.reference(job, instance) == task.reference(job.instance())  # type: ignore[arg-type]
        assert pool.stats.from_pool == 1
    assert not _alive(worker)


def test_jobs_sent_after_a_worker_died_go_to_a_rebuilt_pool() -> None:
    task = get_task("MaxClique")
    with ReferencePool(workers=1, prefetch=2) as pool:
        first, _ = _job_and_instance(5)
        worker = _signal_the_worker(pool, first, signal.SIGKILL)
        time.sleep(1.0)  # the executor notices the death and marks itself broken
        job, instance = _job_and_instance(6)
        pool.keep([first, job])
        assert pool.reference(job, instance) == task.reference(job.instance())  # type: ignore[arg-type]
        assert pool.stats.restarts >= 1
    assert not _alive(worker)


def test_a_stalled_worker_is_waited_for_at_most_wait_timeout() -> None:
    with ReferencePool(workers=1, prefetch=1, wait_timeout=3.0) as pool:
        job, instance = _job_and_instance(3)
        worker = _signal_the_worker(pool, job, signal.SIGSTOP)
        started = time.monotonic()
        reference = pool.reference(job, instance)  # type: ignore[arg-type]
        assert time.monotonic() - started < 3.0 + 10.0  # the timeout, then the in-process solve
        assert reference == get_task("MaxClique").reference(job.instance())
        assert pool.stats.recovered == 1 and pool.stats.restarts == 1
    assert not _alive(worker)


def test_close_leaves_no_worker_behind_and_refuses_more_jobs() -> None:
    pool = ReferencePool(workers=2, prefetch=4)
    pool.keep(_job_and_instance(seed)[0] for seed in range(4))
    workers = _workers(pool)
    assert workers
    pool.close()
    assert not any(_alive(pid) for pid in workers)
    with pytest.raises(RuntimeError, match="closed"):
        pool.keep([])


def test_a_reference_never_asked_for_is_computed_in_process_and_counted_as_a_wait() -> None:
    with ReferencePool(workers=1, prefetch=1) as pool:
        job, instance = _job_and_instance(4)
        assert pool.reference(job, instance) == get_task("MaxClique").reference(job.instance())  # type: ignore[arg-type]
        assert pool.stats.waits == 1 and pool.stats.in_process == 1
        assert _workers(pool) == []  # nothing asked of the workers: none started


@pytest.mark.parametrize(
    ("options", "accepted"),
    [
        ({"workers": 1, "prefetch": 1}, True),
        ({"workers": MAX_WORKERS, "prefetch": MAX_PREFETCH}, True),
        ({"workers": 0}, False),
        ({"workers": MAX_WORKERS + 1}, False),
        ({"prefetch": 0}, False),
        ({"prefetch": MAX_PREFETCH + 1}, False),
        ({"workers": True}, False),
        ({"wait_timeout": 0.0}, False),
        ({"wait_timeout": float("inf")}, False),
        ({"wait_timeout": float("nan")}, False),
    ],
)
def test_pool_limits(options: dict, accepted: bool) -> None:
    if accepted:
        ReferencePool(**options).close()
    else:
        with pytest.raises(ValueError, match="must be"):
            ReferencePool(**options)


def test_upcoming_names_the_next_draws_until_a_report_moves_a_frontier() -> None:
    curriculum = AdaptiveCurriculum(TASKS, seed=5, start=1.5)
    guessed = curriculum.upcoming(10)
    drawn = []
    for _ in range(10):
        item = curriculum.next()
        drawn.append((item.task, item.instance.seed, item.difficulty))
    assert drawn == guessed


UNGUARDED_SCRIPT = """
from npgym.reference_pool import ReferenceJob, ReferencePool

job = ReferenceJob.make("Knapsack", 0, tier="easy")
with ReferencePool(workers=1, prefetch=1) as pool:  # no `if __name__ == "__main__":` guard
    pool.keep([job])
    reference = pool.reference(job, job.instance())
    print("in-process", pool.stats.in_process, "objective", reference.objective)
"""


def test_a_script_without_a_main_guard_warns_once_and_computes_in_process(
    tmp_path: Path,
) -> None:
    """Spawned workers import the script again; in an unguarded one they exit quietly and the
    pool warns once (the cause and the fix), instead of each printing a traceback."""
    script = tmp_path / "train.py"
    script.write_text(UNGUARDED_SCRIPT)
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    job = ReferenceJob.make("Knapsack", 0, tier="easy")
    expected = get_task("Knapsack").reference(job.instance()).objective
    assert run.stdout.split() == ["in-process", "1", "objective", str(expected)]
    assert "Traceback" not in run.stderr
    warnings = [line for line in run.stderr.splitlines() if "ReferencePoolFallback" in line]
    assert len(warnings) == 1, run.stderr
    assert "train.py" in warnings[0] and 'if __name__ == "__main__":' in warnings[0]


def test_a_pool_switched_off_after_max_restarts_warns_once() -> None:
    pool = ReferencePool(workers=1, prefetch=1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(MAX_RESTARTS + 3):  # no workers ever started: each rebuild is bookkeeping
            pool._restart()
    assert [type(warning.message) for warning in seen] == [ReferencePoolFallback]
    assert f"more than MAX_RESTARTS={MAX_RESTARTS}" in str(seen[0].message)
    assert pool._disabled and pool.stats.restarts == MAX_RESTARTS + 1
    job = ReferenceJob.make("Knapsack", 0, tier="easy")
    pool.keep([job])  # nothing is sent to workers any more
    assert pool._executor is None and pool.stats.submitted == 0
    pool.reference(job, job.instance())
    assert pool.stats.in_process == 1
