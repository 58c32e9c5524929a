"""The one dataset pipeline: seed layouts, distinct instances, small tiers, pool workers."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
import time

import pytest
from pydantic import ValidationError

import npgym
from npgym import datasets
from npgym.datasets import DatasetError, DatasetSpec, draw, make_rows, plan
from npgym.seeding import derive_seed

TINY_CLIQUES = {"n_min": 3, "n_max": 3, "clique_min": 2, "clique_max": 3}
"""MaxClique on 3 vertices: only a handful of distinct graphs."""


def test_seed_layouts_are_the_ones_each_path_always_used() -> None:
    bench = plan(DatasetSpec(tasks=("TSP",), count=2))
    assert bench[1].seed == derive_seed("bench", 0, "TSP", "benchmark", 1)
    assert bench[1].record_id == "TSP-benchmark-00001"
    generate = plan(DatasetSpec(split="generate", tasks=("TSP",), count=2, difficulty=0.3, seed=4))
    assert generate[1].seed == derive_seed(4, "TSP", "d0.3", 1)
    assert generate[1].record_id == "TSP-d0.3-s4-00001"
    ramp = plan(
        DatasetSpec(split="curriculum", tasks=("TSP", "Knapsack"), count=3, curriculum=(0.1, 0.5))
    )
    assert [(item.task, item.difficulty) for item in ramp[:3]] == [
        ("TSP", 0.1),
        ("Knapsack", 0.1),
        ("TSP", 0.3),
    ]
    assert ramp[2].seed == derive_seed("curriculum", 0, "TSP", 1)


def test_spec_takes_one_way_to_choose_difficulty() -> None:
    with pytest.raises(ValidationError, match="not mix and difficulty"):
        DatasetSpec(mix={"easy": 1.0}, difficulty=0.5)
    with pytest.raises(ValidationError, match="curriculum"):
        DatasetSpec(curriculum=(0.1, 0.2))
    with pytest.raises(ValidationError, match="endless"):
        DatasetSpec(count=None)
    with pytest.raises(ValidationError, match="n_max"):
        DatasetSpec(tasks=("MaxClique",), overrides={"n_max": -1})
    assert DatasetSpec(n=7).count == 7


SMALL_CLIQUES = {"n_min": 5, "n_max": 6}
"""MaxClique on 5-6 vertices: enough distinct graphs for 100 rows, with repeats among them."""


def test_a_small_tier_gives_distinct_instances_by_redrawing() -> None:
    spec = DatasetSpec(
        tasks=("MaxClique",),
        count=100,
        mix={"easy": 1.0},
        overrides=SMALL_CLIQUES,
        reference="none",
    )
    items = draw(spec)
    task = npgym.get_task("MaxClique")
    fingerprints = [
        task.generate(i.seed, tier="easy", overrides=SMALL_CLIQUES).fingerprint() for i in items
    ]
    assert len(set(fingerprints)) == 100
    redrawn = [item for item in items if item.attempt]
    assert redrawn, "small MaxClique repeats itself within 100 seeds: some item is redrawn"
    originals = {item.record_id: item for item in plan(spec)}
    for item in items:
        assert (item.seed == originals[item.record_id].seed) == (item.attempt == 0)


def test_a_too_small_tier_fails_before_any_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    task = npgym.get_task("MaxClique")

    def no_reference(*args: object, **options: object) -> None:
        raise AssertionError("a reference was computed before the size check")

    monkeypatch.setattr(type(task), "reference", no_reference)
    spec = DatasetSpec(
        split="train", tasks=("MaxClique",), count=20, mix={"easy": 1.0}, overrides=TINY_CLIQUES
    )
    with pytest.raises(
        DatasetError, match=r"MaxClique easy: the instance space holds only about \d+ distinct"
    ):
        next(make_rows(spec))


def test_stream_is_distinct_and_avoids_forbidden_instances(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = DatasetSpec(
        split="stream", tasks=("MaxClique",), count=None, mix={"easy": 1.0}, reference="none"
    )
    first = [result.fingerprint for result in itertools.islice(make_rows(spec), 150)]
    assert len(set(first)) == 150
    monkeypatch.setattr(datasets, "forbidden_fingerprints", lambda spec: {first[0]: "NP-Bench"})
    again = [result.fingerprint for result in itertools.islice(make_rows(spec), 3)]
    assert first[0] not in again and again[1:] == first[1:3]


def test_pool_gives_the_serial_rows_in_order() -> None:
    spec = DatasetSpec(tasks=("Knapsack", "SubsetSum"), count=3, mix={"easy": 1.0})
    serial = [result.record for result in make_rows(spec, backend="serial")]
    pooled = [result.record for result in make_rows(spec, workers=2)]
    assert pooled == serial


def test_worker_count_never_exceeds_cores_or_items() -> None:
    cores = datasets.usable_cores()
    assert datasets.worker_count(None, 1000) == cores
    assert datasets.worker_count(4 * cores, 1000) == cores
    assert datasets.worker_count(8, 1) == 1


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc to find the workers")
def test_pool_workers_exit_when_their_parent_is_killed() -> None:
    script = textwrap.dedent(
        """
        import multiprocessing, os, time
        from concurrent.futures import ProcessPoolExecutor
        from npgym.reference_pool import die_with_parent

        pool = ProcessPoolExecutor(2, multiprocessing.get_context("fork"),
                                   initializer=die_with_parent, initargs=(os.getpid(),))
        futures = [pool.submit(time.sleep, 120) for _ in range(2)]
        time.sleep(1.0)
        print(" ".join(str(pid) for pid in pool._processes), flush=True)
        time.sleep(120)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(workers) == 2 and all(os.path.exists(f"/proc/{pid}") for pid in workers)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
