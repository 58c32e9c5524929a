"""One way to make data: a typed :class:`DatasetSpec` and :func:`make_rows`, which turns it into
instances with references, serially, on a local process pool or on Ray.

Every path that makes instances goes through here: ``npgym generate``, ``npgym bench build``
(NP-Bench and training sets), the TRL dataset, curriculum and stream, and so the exports.

Seeds come from ``SeedSequence`` keys (:func:`npgym.seeding.derive_seed`); the key layout is
the spec's ``split``, and each layout is the one its path has always used, so existing datasets
keep their bytes:

- ``bench`` / ``train``: ``(split, seed, task, tier, index)``; ids ``<Task>-<tier>-<index>``;
- ``generate`` (the CLI): ``(seed, task, label, index)``, label the tier or ``d<difficulty>``;
  ids ``<Task>-<label>-s<seed>-<index>``;
- ``curriculum``: ``(curriculum, seed, task, index)`` with the difficulty ramped over the
  indices; tasks interleaved; ids ``<Task>-curriculum-<index>``;
- ``stream``: ``(stream, seed, index)``, endless, tasks in turn and a tier drawn per row.

A dataset holds distinct instances: an instance whose fingerprint is already in the dataset,
or in NP-Bench for every split but ``bench``, is redrawn with the keys above plus
``("redraw", attempt)``. Instances are drawn in the parent before any reference is computed,
so a tier too small for the requested count fails at once, naming how many distinct instances
it gave.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import sys
import time
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import numpy as np
from numba.core import event as numba_event
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from npgym.config import MAX_DIFFICULTY, TIERS
from npgym.instance import Instance
from npgym.records import Row, make_record
from npgym.reference_pool import ReferenceJob, ReferencePool, die_with_parent
from npgym.registry import get_task
from npgym.seeding import derive_seed

Split = Literal["bench", "train", "generate", "curriculum", "stream"]
"""The seed stream, which fixes the seed keys and row ids (see the module docstring)."""
ReferenceMode = Literal["exact", "heuristic", "none"]
Backend = Literal["serial", "local", "ray"]

BENCH_TIER = "benchmark"
BENCH_SIZE = 100
BENCH_VERSION = 2
_NP_ENGINE_TASKS = (
    "TSP",
    "MaxClique",
    "MaxIndependentSet",
    "GraphColoring",
    "MeetingScheduling",
    "HamiltonianCycle",
    "SubsetSum",
    "SetCover",
    "Knapsack",
    "MinBisection",
)
BENCH_TASKS: dict[int, tuple[str, ...]] = {1: _NP_ENGINE_TASKS, 2: _NP_ENGINE_TASKS}
"""The tasks of each NP-Bench version, named explicitly: a build with no task list makes these,
so an installed plug-in never changes what a default build writes (name it to build it)."""
"""The NP-Bench version that today's generators draw (docs/contract.md, "NP-Bench versions")."""
BENCH_REVISIONS: dict[int, int] = {1: 1}
"""The generator revision that every task used in each earlier NP-Bench version: building with
``bench_version=1`` lays ``revision=1`` over every config, which reproduces version 1's bytes."""
MAX_REDRAWS = 64
"""Redraws of one instance before its tier counts as exhausted."""
DEFAULT_TRAINING_MIX = {"easy": 5.0, "medium": 4.0, "hard": 1.0}
"""The published best training mix."""


MAX_COUNT = 100_000
"""Most instances per task in one dataset spec: a hundred times NP-Bench, and a plan of at most
a few million ids for the ten tasks (a larger count is refused before any plan is made)."""
MAX_TIME_LIMIT = 86_400.0
"""Longest work budget of one reference, in nominal seconds (a day)."""
MAX_MIX_WEIGHT = 1e6
"""Largest tier weight of a mix (weights are relative: 1e6 to 1 is already all one tier)."""


class DatasetError(RuntimeError):
    """A dataset that cannot be made: a tier too small for the count, a bad backend..."""


class DatasetSpec(BaseModel):
    """What to make: tasks, how many per task, which tiers or difficulty, seed and references.

    Give at most one of ``mix`` (tier weights, default ``{"benchmark": 1}``), ``difficulty``
    (one value of the continuous knob) or ``curriculum`` (a ``(start, end)`` ramp of the knob
    over the rows). ``overrides`` lays generator config fields over the tier or difficulty.
    ``count`` is per task (``n`` is accepted too); ``None`` only for the endless ``stream``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    split: Split = "bench"
    tasks: tuple[str, ...] = BENCH_TASKS[BENCH_VERSION]
    """Default: the tasks of ``bench_version`` (:data:`BENCH_TASKS`), never a plug-in."""
    count: int | None = Field(
        BENCH_SIZE,
        ge=1,
        le=MAX_COUNT,
        validation_alias=AliasChoices("count", "n"),
        description="per task",
    )
    mix: dict[str, float] | None = None
    difficulty: float | None = Field(None, ge=0, le=MAX_DIFFICULTY, allow_inf_nan=False)
    curriculum: tuple[float, float] | None = None
    overrides: dict[str, Any] | None = None
    seed: int = Field(0, ge=0)
    reference: ReferenceMode = "exact"
    time_limit: float | None = Field(None, gt=0, le=MAX_TIME_LIMIT, allow_inf_nan=False)
    bench_version: int = Field(
        BENCH_VERSION, ge=1, le=BENCH_VERSION, description="NP-Bench version whose generators draw"
    )

    @property
    def generator_overrides(self) -> dict[str, Any] | None:
        """``overrides``, with the generator revision of an earlier ``bench_version`` laid in."""
        if self.bench_version == BENCH_VERSION:
            return self.overrides
        return {"revision": BENCH_REVISIONS[self.bench_version], **(self.overrides or {})}

    @property
    def n(self) -> int:
        """Instances per task (the name builds have always used)."""
        if self.count is None:
            raise DatasetError("an endless stream has no count")
        return self.count

    @property
    def tier_mix(self) -> dict[str, float]:
        """The tier weights in effect (empty when a difficulty or curriculum is given)."""
        if self.difficulty is not None or self.curriculum is not None:
            return {}
        return self.mix or {BENCH_TIER: 1.0}

    @model_validator(mode="before")
    @classmethod
    def _bench_tasks_by_default(cls, data: Any) -> Any:
        """No task list: the tasks of the spec's bench version."""
        if isinstance(data, dict) and "tasks" not in data:
            version = data.get("bench_version", BENCH_VERSION)
            return {**data, "tasks": BENCH_TASKS.get(version, BENCH_TASKS[BENCH_VERSION])}
        return data

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, tasks: tuple[str, ...]) -> tuple[str, ...]:
        if not tasks:
            raise ValueError("no tasks selected")
        names = tuple(get_task(name).name for name in tasks)
        if len(set(names)) != len(names):
            raise ValueError("a task is listed twice")
        return names

    @field_validator("mix")
    @classmethod
    def _known_tiers(cls, mix: dict[str, float] | None) -> dict[str, float] | None:
        if mix is None:
            return None
        if not mix or any(tier not in TIERS for tier in mix):
            raise ValueError(f"mix must name tiers among {', '.join(TIERS)}")
        if any(not 0 <= weight <= MAX_MIX_WEIGHT for weight in mix.values()) or not (
            sum(mix.values()) > 0
        ):
            raise ValueError(
                f"mix weights must be numbers in 0..{MAX_MIX_WEIGHT:g} with a positive sum"
            )
        return {tier: float(mix[tier]) for tier in TIERS if tier in mix}

    @field_validator("curriculum")
    @classmethod
    def _ramp_in_range(cls, ramp: tuple[float, float] | None) -> tuple[float, float] | None:
        if ramp is not None and not all(0.0 <= value <= MAX_DIFFICULTY for value in ramp):
            raise ValueError(f"curriculum difficulties must lie in [0, {MAX_DIFFICULTY:g}]")
        return ramp

    @model_validator(mode="after")
    def _one_way_to_choose_difficulty(self) -> DatasetSpec:
        chosen = [
            name for name in ("mix", "difficulty", "curriculum") if getattr(self, name) is not None
        ]
        if len(chosen) > 1:
            raise ValueError(
                f"give one of mix, difficulty or curriculum, not {' and '.join(chosen)}"
            )
        if (self.curriculum is not None) != (self.split == "curriculum"):
            raise ValueError("a curriculum ramp goes with split='curriculum' and only with it")
        if (self.count is None) != (self.split == "stream"):
            raise ValueError("count=None (endless) goes with split='stream' and only with it")
        if self.generator_overrides is not None:
            for task in self.tasks:
                for tier in self.tier_mix or [None]:
                    get_task(task).config(tier, self.difficulty, self.generator_overrides)
        return self


@dataclass(frozen=True)
class WorkItem:
    """One instance to make: the unit of work that runs in a worker."""

    task: str
    tier: str | None
    difficulty: float | None
    index: int
    seed: int
    record_id: str
    attempt: int = 0


@dataclass(frozen=True)
class ItemResult:
    """A made row with its instance's fingerprint, how long generation and reference took, and
    its reference's certificate (kept beside the rows: :mod:`npgym.npbench.certificates`)."""

    record: Row
    fingerprint: str
    generation_seconds: float
    reference_seconds: float
    certificate: dict[str, Any] | None = None


def tier_counts(n: int, mix: Mapping[str, float]) -> list[tuple[str, int]]:
    """Split ``n`` over the tiers in proportion to ``mix`` (largest remainder, exact total)."""
    total = sum(mix.values())
    shares = {tier: n * weight / total for tier, weight in mix.items()}
    counts = {tier: int(share) for tier, share in shares.items()}
    by_remainder = sorted(mix, key=lambda tier: (-(shares[tier] - counts[tier]), TIERS.index(tier)))
    for tier in by_remainder[: n - sum(counts.values())]:
        counts[tier] += 1
    return [(tier, counts[tier]) for tier in mix if counts[tier]]


def _label(tier: str | None, difficulty: float | None) -> str:
    return tier if tier is not None else f"d{difficulty:g}"


def _seed_keys(spec: DatasetSpec, task: str, label: str, index: int) -> tuple[int | str, ...]:
    """The seed keys of the ``index``-th instance of ``task`` under the spec's split."""
    if spec.split in ("bench", "train"):
        return (spec.split, spec.seed, task, label, index)
    if spec.split == "generate":
        return (spec.seed, task, label, index)
    if spec.split == "curriculum":
        return ("curriculum", spec.seed, task, index)
    return ("stream", spec.seed, index)


def _item(
    spec: DatasetSpec,
    task: str,
    tier: str | None,
    difficulty: float | None,
    index: int,
    attempt: int,
) -> WorkItem:
    label = _label(tier, difficulty)
    keys = _seed_keys(spec, task, label, index)
    if attempt:
        keys = (*keys, "redraw", attempt)
    if spec.split in ("bench", "train"):
        record_id = f"{task}-{label}-{index:05d}"
    elif spec.split == "generate":
        record_id = f"{task}-{label}-s{spec.seed}-{index:05d}"
    elif spec.split == "curriculum":
        record_id = f"{task}-curriculum-{index:05d}"
    else:
        record_id = f"{task}-stream-{index}"
    return WorkItem(task, tier, difficulty, index, derive_seed(*keys), record_id, attempt)


def plan(spec: DatasetSpec) -> list[WorkItem]:
    """The spec's instances before any redraw, in file order (cheap: no generation).

    ``bench``/``train``/``generate``: task, then tier, then index; ``curriculum``: index, then
    task. Use :func:`draw` for the distinct items a dataset is made of.
    """
    if spec.split == "stream":
        raise DatasetError("a stream is endless: iterate make_rows(spec) instead")
    if spec.curriculum is not None:
        start, end = spec.curriculum
        return [
            _item(
                spec,
                task,
                None,
                round(start + (end - start) * index / max(spec.n - 1, 1), 6),
                index,
                0,
            )
            for index, task in itertools.product(range(spec.n), spec.tasks)
        ]
    if spec.difficulty is not None:
        return [
            _item(spec, task, None, spec.difficulty, index, 0)
            for task in spec.tasks
            for index in range(spec.n)
        ]
    return [
        _item(spec, task, tier, None, index, 0)
        for task in spec.tasks
        for tier, count in tier_counts(spec.n, spec.tier_mix)
        for index in range(count)
    ]


def generate_instance(item: WorkItem, spec: DatasetSpec) -> Instance:
    """The item's instance (deterministic: workers regenerate what the parent drew)."""
    tier = item.tier
    if tier is None and item.difficulty is None:
        tier = "medium"
    return get_task(item.task).generate(item.seed, tier, item.difficulty, spec.generator_overrides)


def benchmark_fingerprints(
    tasks: Iterable[str], n: int = BENCH_SIZE, seed: int = 0
) -> frozenset[str]:
    """Fingerprints of the default NP-Bench instances of ``tasks`` (generation only, cached)."""
    return frozenset().union(*(_benchmark_fingerprints(task, n, seed) for task in tasks))


@cache
def _benchmark_fingerprints(task: str, n: int, seed: int) -> frozenset[str]:
    spec = DatasetSpec(tasks=(task,), count=n, seed=seed, reference="none")
    return frozenset(instance.fingerprint() for _, instance in _distinct(spec, plan(spec), {}))


def forbidden_fingerprints(spec: DatasetSpec) -> dict[str, str]:
    """Fingerprints the spec's dataset may not contain, with where they come from."""
    if spec.split == "bench":
        return {}
    return dict.fromkeys(benchmark_fingerprints(spec.tasks), "NP-Bench")


def draw(spec: DatasetSpec, forbidden: Mapping[str, str] | None = None) -> list[WorkItem]:
    """The spec's items with every instance distinct, redrawing collisions deterministically.

    ``forbidden`` (default: :func:`forbidden_fingerprints`) maps fingerprints that must not
    appear to where they come from. Raises :class:`DatasetError` before any reference work
    when a tier cannot give enough distinct instances.
    """
    blocked = forbidden_fingerprints(spec) if forbidden is None else forbidden
    return [item for item, _ in _distinct(spec, plan(spec), blocked)]


def drawn(spec: DatasetSpec, forbidden: Mapping[str, str]) -> Iterator[tuple[WorkItem, Instance]]:
    """The items of :func:`draw` with their instances, generated again (what a check of a
    built dataset compares its rows with)."""
    return _distinct(spec, plan(spec), forbidden)


def _distinct(
    spec: DatasetSpec, items: Iterable[WorkItem], forbidden: Mapping[str, str]
) -> Iterator[tuple[WorkItem, Instance]]:
    """Each item, or its first redraw whose fingerprint is new and not forbidden."""
    seen: set[str] = set()
    distinct: dict[tuple[str, str], int] = {}
    for item in items:
        candidate = item
        for attempt in range(MAX_REDRAWS + 1):
            if attempt:
                candidate = _item(spec, item.task, item.tier, item.difficulty, item.index, attempt)
            instance = generate_instance(candidate, spec)
            fingerprint = instance.fingerprint()
            if fingerprint not in seen and fingerprint not in forbidden:
                break
        else:
            label = _label(item.tier, item.difficulty)
            found = distinct.get((item.task, label), 0)
            raise DatasetError(
                f"{item.task} {label}: the instance space holds only about {found} distinct "
                f"instances ({found} found, then {MAX_REDRAWS + 1} draws in a row repeated "
                f"them); ask for at most {found} per task here, or use a harder setting"
            )
        seen.add(fingerprint)
        key = (item.task, _label(item.tier, item.difficulty))
        distinct[key] = distinct.get(key, 0) + 1
        yield candidate, instance


def reference_job(item: WorkItem, spec: DatasetSpec) -> ReferenceJob:
    """The item's reference as a :class:`ReferencePool` job (it generates the same instance)."""
    tier = item.tier if item.tier is not None or item.difficulty is not None else "medium"
    return ReferenceJob.make(
        item.task,
        item.seed,
        tier,
        item.difficulty,
        spec.generator_overrides,
        exact=spec.reference == "exact",
        time_limit=spec.time_limit,
    )


def build_item(
    item: WorkItem,
    spec: DatasetSpec,
    instance: Instance | None = None,
    pool: ReferencePool | None = None,
) -> ItemResult:
    """Generate one instance (unless given) and its reference (from ``pool`` when given), and
    make its row (runs in a worker, which regenerates the instance from its seed rather than
    receive it)."""
    task = get_task(item.task)
    started = time.perf_counter()
    if instance is None:
        instance = generate_instance(item, spec)
    generated = time.perf_counter()
    solved = None
    if spec.reference != "none" and pool is not None:
        solved = pool.reference(reference_job(item, spec), instance)
    elif spec.reference != "none":
        solved = task.reference(
            instance, exact=spec.reference == "exact", time_limit=spec.time_limit
        )
    finished = time.perf_counter()
    return ItemResult(
        make_record(item.record_id, task, instance, solved),
        instance.fingerprint(),
        generated - started,
        finished - generated,
        None if solved is None else solved.certificate,
    )


def _build_item_args(args: tuple[WorkItem, DatasetSpec]) -> ItemResult:
    return build_item(*args)


def make_rows(
    spec: DatasetSpec,
    *,
    workers: int | None = 1,
    backend: Backend = "local",
    ray_address: str | None = None,
    forbidden: Mapping[str, str] | None = None,
    skip: Collection[str] = (),
    ordered: bool = True,
    pool: ReferencePool | None = None,
) -> Iterator[ItemResult]:
    """Make the spec's rows: distinct instances with their references.

    Finite specs are drawn first (see :func:`draw`), then built on ``backend``: ``serial`` (or
    ``workers=1``) here, ``local`` a process pool of ``workers`` (default: the usable cores),
    ``ray`` Ray tasks on the cluster at ``ray_address`` or a local Ray. Rows come in file order,
    or as they finish with ``ordered=False``; ids in ``skip`` (done by an earlier run) are left
    out. A ``stream`` spec yields rows forever, one at a time in this process; with a ``pool``
    (:class:`npgym.reference_pool.ReferencePool`, opt-in) the references of its next
    ``pool.prefetch`` rows are computed ahead in the pool's workers, and the rows are the same.
    """
    if spec.split == "stream":
        blocked = forbidden_fingerprints(spec) if forbidden is None else forbidden
        return _stream(spec, blocked, pool)
    items = [item for item in draw(spec, forbidden) if item.record_id not in skip]
    results = execute(items, spec, workers=workers, backend=backend, ray_address=ray_address)
    if not ordered:
        return results
    return _in_order(items, results)


def _in_order(items: list[WorkItem], results: Iterator[ItemResult]) -> Iterator[ItemResult]:
    """Results in the order of ``items``, yielding each as soon as its turn comes."""
    waiting: dict[str, ItemResult] = {}
    position = 0
    for result in results:
        waiting[result.record["id"]] = result
        while position < len(items) and items[position].record_id in waiting:
            yield waiting.pop(items[position].record_id)
            position += 1


def _stream(
    spec: DatasetSpec, forbidden: Mapping[str, str], pool: ReferencePool | None = None
) -> Iterator[ItemResult]:
    """Endless rows: a task in turn, a tier drawn by the mix, every instance new (their
    references computed ``pool.prefetch`` rows ahead by ``pool``, when given)."""
    mix = spec.tier_mix
    tiers = list(mix)
    probabilities = np.array([mix[tier] for tier in tiers], dtype=float)
    probabilities /= probabilities.sum()
    rng = np.random.default_rng(derive_seed("stream", spec.seed))

    def items() -> Iterator[WorkItem]:
        for index in itertools.count():
            task = spec.tasks[index % len(spec.tasks)]
            tier: str | None = None
            if spec.difficulty is None:
                tier = tiers[int(rng.choice(len(tiers), p=probabilities))]
            yield _item(spec, task, tier, spec.difficulty, index, 0)

    drawn = _distinct(spec, items(), forbidden)
    if pool is None or spec.reference == "none":
        for item, instance in drawn:
            yield build_item(item, spec, instance)
        return
    ahead: deque[tuple[WorkItem, Instance]] = deque()
    while True:
        while len(ahead) < pool.prefetch:
            ahead.append(next(drawn))
        pool.keep(reference_job(item, spec) for item, _ in ahead)
        item, instance = ahead.popleft()
        yield build_item(item, spec, instance, pool)


def execute(
    items: list[WorkItem],
    spec: DatasetSpec,
    *,
    workers: int | None = 1,
    backend: Backend = "local",
    ray_address: str | None = None,
) -> Iterator[ItemResult]:
    """Build ``items`` and yield their results as they finish (in any order)."""
    if backend == "ray":
        return _run_ray(items, spec, workers, ray_address)
    if backend not in ("serial", "local"):
        raise DatasetError(f"unknown backend {backend!r}; choose serial, local or ray")
    count = worker_count(workers, len(items))
    if backend == "serial" or count == 1:
        return (build_item(item, spec) for item in items)
    return _run_pool(items, spec, count)


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worker_count(requested: int | None, items: int) -> int:
    """Processes to use: as requested (default all usable cores), at most one per core and
    per item, since more processes than cores only adds start-up and contention."""
    return max(1, min(requested or usable_cores(), usable_cores(), items))


COMPILING_MESSAGE = "compiling verifier kernels (first run only)"
"""Starts each progress line of a cold warm-up: ``<message>: 3/10 TSP ...`` when numba starts
compiling a task's kernels (not when it loads them from its on-disk cache), ``<message>: 3/10
TSP ... 12 kernels, 20 s`` at most every :data:`COMPILE_PROGRESS_EVERY` seconds while it goes
on, then ``<message>: done in 48 s``. A warm cache says nothing."""
COMPILE_PROGRESS_EVERY = 5.0
"""Seconds between two progress lines while one task's kernels compile (a cold TSP alone takes
about 40 s on a busy 2-core machine)."""
_warmed: set[tuple[str, bool]] = set()


class _CompileNotice(numba_event.Listener):
    """Says on stderr which task's kernels numba compiles, and how far it got (see
    :data:`COMPILING_MESSAGE`), so a cold start shows progress, not silence."""

    def __init__(self, total: int) -> None:
        self.total, self.index, self.name = total, 0, ""
        self.started = self.said_at = time.monotonic()
        self.kernels = 0
        self.said_task = self.compiled = False

    def task(self, index: int, name: str) -> None:
        """Warm-up moves on to the ``index``-th task (from 1), called ``name``."""
        self.index, self.name, self.said_task, self.kernels = index, name, False, 0

    def _say(self, tail: str = "") -> None:
        self.said_at = time.monotonic()
        line = f"{COMPILING_MESSAGE}: {self.index}/{self.total} {self.name} ...{tail}"
        print(line, file=sys.stderr, flush=True)

    def on_start(self, event: numba_event.Event) -> None:
        if not self.said_task:
            self.said_task = self.compiled = True
            self._say()

    def on_end(self, event: numba_event.Event) -> None:
        self.kernels += 1
        if time.monotonic() - self.said_at >= COMPILE_PROGRESS_EVERY:
            self._say(f" {self.kernels} kernels, {time.monotonic() - self.started:.0f} s")


def warm_up(tasks: Iterable[str], references: bool = True) -> None:
    """Compile (or load) every numba kernel the tasks use, once, in this process.

    Pool workers are forked after this, so they inherit the compiled kernels instead of each
    importing and compiling them again. Without ``references`` only generation is warmed.
    Tasks warmed before are skipped. If numba has to compile (its cache is cold), each task
    that compiles says so on stderr, and the end says how long it took
    (:data:`COMPILING_MESSAGE`).
    """
    todo = [
        name
        for name in dict.fromkeys(tasks)
        if (name, references) not in _warmed and (name, True) not in _warmed
    ]
    notice = _CompileNotice(len(todo))
    with numba_event.install_listener("numba:compile", notice):
        for index, name in enumerate(todo, start=1):
            notice.task(index, name)
            task = get_task(name)
            instance = task.generate(0, tier="easy")
            if references:
                reference = task.reference(instance, time_limit=1.0)
                task.score(instance, task.format_answer(reference.solution), reference)
            _warmed.add((name, references))
    if notice.compiled:
        elapsed = time.monotonic() - notice.started
        print(f"{COMPILING_MESSAGE}: done in {elapsed:.0f} s", file=sys.stderr, flush=True)


def _run_pool(items: list[WorkItem], spec: DatasetSpec, workers: int) -> Iterator[ItemResult]:
    """Run items on ``workers`` processes forked from this warmed-up one (where fork exists)."""
    methods = multiprocessing.get_all_start_methods()
    method = "fork" if "fork" in methods else "spawn"
    if method == "fork":
        warm_up(dict.fromkeys(item.task for item in items), spec.reference != "none")
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    ) as pool:
        futures = [pool.submit(_build_item_args, (item, spec)) for item in items]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for future in futures:
                future.cancel()


def _run_ray(
    items: list[WorkItem], spec: DatasetSpec, workers: int | None, address: str | None
) -> Iterator[ItemResult]:
    """Run items as Ray tasks (``address`` of a cluster, or a local Ray started here)."""
    try:
        import ray
    except ImportError as error:
        raise DatasetError('the Ray backend needs Ray: pip install "npgym[ray]"') from error
    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = {"address": address, "log_to_driver": False}
        if address is None:
            options |= {"num_cpus": workers or usable_cores(), "include_dashboard": False}
        ray.init(**options)
    try:
        remote = ray.remote(_build_item_args)
        waiting = [remote.remote((item, spec)) for item in items]
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            yield ray.get(ready[0])
    finally:
        if started_here:
            ray.shutdown()
