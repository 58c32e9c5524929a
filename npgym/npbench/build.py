"""Build datasets of instances with references: NP-Bench and training sets, resumable, parallel.

A build is a :class:`BuildSpec` (tasks, instances per task, tier mix, base seed, split) turned
into a plan of work items, each one instance: generate it, compute its reference, make its row.
Items run in local processes (default) or on Ray; each finished row is appended to a journal
under ``<out>/.journal`` as it arrives, so an interrupted build resumes without recomputing or
losing anything. When all items are done the rows are written per task in plan order
(``<out>/<Task>.jsonl``) with a ``manifest.json``: the same spec gives byte-identical files on
either backend with any number of workers.

Seeds come from ``SeedSequence`` keyed by (split, base seed, task, tier, index): training sets
and the benchmark draw from different streams, and neighbouring base seeds share nothing.
Instance fingerprints are checked too: a training build fails loudly if it contains an instance
of the benchmark.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from tqdm import tqdm

import npgym
from npgym.config import TIERS
from npgym.records import complete_lines, make_record, read_jsonl, write_jsonl
from npgym.registry import get_task, list_tasks
from npgym.seeding import derive_seed

MANIFEST = "manifest.json"
JOURNAL = ".journal"
BENCH_TIER = "benchmark"
BENCH_SIZE = 100


class BuildError(RuntimeError):
    """A build that cannot go on: overlap with the benchmark, a conflicting journal..."""


class BuildSpec(BaseModel):
    """What to build. ``mix`` maps tiers to weights (``{"easy": 5, "medium": 4, "hard": 1}``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    split: Literal["bench", "train"] = "bench"
    tasks: tuple[str, ...] = Field(default_factory=lambda: tuple(list_tasks()))
    n: int = Field(BENCH_SIZE, ge=1, description="instances per task")
    mix: dict[str, float] = Field(default_factory=lambda: {BENCH_TIER: 1.0})
    seed: int = Field(0, ge=0)
    reference: Literal["exact", "heuristic", "none"] = "exact"
    time_limit: float | None = Field(None, gt=0)

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
    def _known_tiers(cls, mix: dict[str, float]) -> dict[str, float]:
        if not mix or any(tier not in TIERS for tier in mix):
            raise ValueError(f"mix must name tiers among {', '.join(TIERS)}")
        if any(weight < 0 for weight in mix.values()) or sum(mix.values()) <= 0:
            raise ValueError("mix weights must be non-negative with a positive sum")
        return {tier: float(mix[tier]) for tier in TIERS if tier in mix}


@dataclass(frozen=True)
class WorkItem:
    """One instance to build: the plan's unit of work."""

    task: str
    tier: str
    index: int
    seed: int
    record_id: str


@dataclass(frozen=True)
class ItemResult:
    """A built row with its fingerprint and how long generation and reference took."""

    record: dict[str, Any]
    fingerprint: str
    generation_seconds: float
    reference_seconds: float


def tier_counts(n: int, mix: dict[str, float]) -> list[tuple[str, int]]:
    """Split ``n`` over the tiers in proportion to ``mix`` (largest remainder, exact total)."""
    total = sum(mix.values())
    shares = {tier: n * weight / total for tier, weight in mix.items()}
    counts = {tier: int(share) for tier, share in shares.items()}
    by_remainder = sorted(mix, key=lambda tier: (-(shares[tier] - counts[tier]), TIERS.index(tier)))
    for tier in by_remainder[: n - sum(counts.values())]:
        counts[tier] += 1
    return [(tier, counts[tier]) for tier in mix if counts[tier]]


def plan(spec: BuildSpec) -> list[WorkItem]:
    """Every instance of the build, in file order (task, then tier, then index)."""
    items = []
    for task in spec.tasks:
        for tier, count in tier_counts(spec.n, spec.mix):
            for index in range(count):
                seed = derive_seed(spec.split, spec.seed, task, tier, index)
                record_id = f"{task}-{tier}-{index:05d}"
                items.append(WorkItem(task, tier, index, seed, record_id))
    return items


def build_item(item: WorkItem, reference: str, time_limit: float | None) -> ItemResult:
    """Generate one instance and its reference (runs in a worker process or on Ray)."""
    task = get_task(item.task)
    started = time.perf_counter()
    instance = task.generate(item.seed, tier=item.tier)
    generated = time.perf_counter()
    solved = None
    if reference != "none":
        solved = task.reference(instance, exact=reference == "exact", time_limit=time_limit)
    finished = time.perf_counter()
    return ItemResult(
        make_record(item.record_id, task, instance, solved),
        instance.fingerprint(),
        generated - started,
        finished - generated,
    )


def _build_item_args(args: tuple[WorkItem, str, float | None]) -> ItemResult:
    return build_item(*args)


@dataclass
class BuildSummary:
    """What a build did: items computed now vs. taken from the journal, and where time went."""

    computed: int
    resumed: int
    wall_seconds: float
    generation_seconds: float
    reference_seconds: float
    manifest: dict[str, Any]


def build(
    spec: BuildSpec,
    out_dir: str | Path,
    *,
    workers: int | None = None,
    backend: Literal["local", "ray"] = "local",
    ray_address: str | None = None,
    exclude: Iterable[str | Path] = (),
    drop_overlap: bool = False,
    progress: bool | None = None,
) -> BuildSummary:
    """Build (or resume) ``spec`` into ``out_dir`` and return a summary.

    ``exclude`` lists other built datasets (folders with a manifest) whose instances must not
    appear in this one; a training build always excludes the default NP-Bench as well. With
    ``drop_overlap`` overlapping instances are left out and reported instead of failing.
    ``progress`` shows a progress bar with an ETA (default: when stderr is a terminal).
    """
    out = Path(out_dir)
    journal = _Journal(out / JOURNAL, spec)
    items = plan(spec)
    done = journal.load()
    pending = [item for item in items if item.record_id not in done]
    started = time.perf_counter()
    results = dict(done)
    timings = [0.0, 0.0]
    bar = tqdm(
        total=len(items),
        initial=len(done),
        unit="inst",
        desc="build",
        disable=None if progress is None else not progress,
    )
    for result in run_items(pending, spec, workers, backend, ray_address):
        journal.append(result)
        results[result.record["id"]] = result
        timings[0] += result.generation_seconds
        timings[1] += result.reference_seconds
        bar.update()
    bar.close()
    journal.close()
    ordered = [results[item.record_id] for item in items]
    kept = check_overlap(
        ordered, split=spec.split, tasks=spec.tasks, exclude=exclude, drop=drop_overlap
    )
    manifest = write_dataset(out, kept, {"spec": spec.model_dump(mode="json")})
    journal.remove()
    return BuildSummary(
        computed=len(pending),
        resumed=len(done),
        wall_seconds=time.perf_counter() - started,
        generation_seconds=timings[0],
        reference_seconds=timings[1],
        manifest=manifest,
    )


def run_items(
    items: list[WorkItem],
    spec: BuildSpec,
    workers: int | None = 1,
    backend: Literal["local", "ray"] = "local",
    ray_address: str | None = None,
) -> Iterator[ItemResult]:
    """Build ``items`` and yield their results as they finish (in any order)."""
    run = _run_ray if backend == "ray" else _run_local
    return run(items, spec, workers, ray_address)


def _run_local(
    items: list[WorkItem], spec: BuildSpec, workers: int | None, _address: str | None
) -> Iterator[ItemResult]:
    """Run items in this process (one worker) or a pool of spawned processes."""
    workers = workers or os.cpu_count() or 1
    arguments = [(item, spec.reference, spec.time_limit) for item in items]
    if workers == 1 or len(items) <= 1:
        yield from map(_build_item_args, arguments)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_build_item_args, argument) for argument in arguments]
        for future in as_completed(futures):
            yield future.result()


def _run_ray(
    items: list[WorkItem], spec: BuildSpec, workers: int | None, address: str | None
) -> Iterator[ItemResult]:
    """Run items as Ray tasks (``address`` of a cluster, or a local Ray started here)."""
    try:
        import ray
    except ImportError as error:
        raise BuildError('the Ray backend needs Ray: pip install "npgym[ray]"') from error
    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = {"address": address, "log_to_driver": False}
        if address is None:
            options |= {"num_cpus": workers or os.cpu_count(), "include_dashboard": False}
        ray.init(**options)
    try:
        remote = ray.remote(_build_item_args)
        waiting = [remote.remote((item, spec.reference, spec.time_limit)) for item in items]
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            yield ray.get(ready[0])
    finally:
        if started_here:
            ray.shutdown()


class _Journal:
    """Append-only record of finished items, so a build can resume after any interruption."""

    def __init__(self, folder: Path, spec: BuildSpec) -> None:
        self.folder = folder
        self.spec_path = folder / "spec.json"
        self.rows_path = folder / "rows.jsonl"
        self.spec_json = spec.model_dump_json()
        self._handle: Any = None

    def load(self) -> dict[str, ItemResult]:
        """Finished items of an interrupted build of the same spec (none for a new build)."""
        if not self.spec_path.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            self.spec_path.write_text(self.spec_json)
            return {}
        if self.spec_path.read_text() != self.spec_json:
            raise BuildError(
                f"{self.folder} holds an interrupted build of a different spec; "
                "finish it with the same options or delete the folder"
            )
        done: dict[str, ItemResult] = {}
        if self.rows_path.exists():
            for line in complete_lines(self.rows_path):
                entry = json.loads(line)
                done[entry["record"]["id"]] = ItemResult(
                    entry["record"], entry["fingerprint"], 0, 0
                )
        return done

    def append(self, result: ItemResult) -> None:
        if self._handle is None:
            self._handle = open(self.rows_path, "a", encoding="utf-8")  # noqa: SIM115
        entry = {"record": result.record, "fingerprint": result.fingerprint}
        self._handle.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def remove(self) -> None:
        for path in (self.rows_path, self.spec_path):
            path.unlink(missing_ok=True)
        self.folder.rmdir()


def benchmark_fingerprints(tasks: Iterable[str], n: int = BENCH_SIZE, seed: int = 0) -> set[str]:
    """Fingerprints of the default NP-Bench instances (generation only, no references)."""
    spec = BuildSpec(tasks=tuple(tasks), n=n, seed=seed, reference="none")
    return {
        get_task(item.task).generate(item.seed, tier=item.tier).fingerprint() for item in plan(spec)
    }


def load_manifest(folder: str | Path) -> dict[str, Any]:
    """The manifest of a built dataset folder."""
    path = Path(folder) / MANIFEST
    if not path.exists():
        raise BuildError(f"{folder} has no {MANIFEST}: not a finished npgym build")
    return json.loads(path.read_text())


def check_overlap(
    results: list[ItemResult],
    *,
    split: str,
    tasks: Iterable[str],
    exclude: Iterable[str | Path] = (),
    drop: bool = False,
) -> list[ItemResult]:
    """Refuse (or drop) instances that also appear in excluded datasets, in NP-Bench (for a
    ``train`` split) or twice in a ``bench`` split."""
    forbidden: dict[str, str] = {}
    for folder in exclude:
        for task in load_manifest(folder)["tasks"].values():
            forbidden |= dict.fromkeys(task["fingerprints"], str(folder))
    if split == "train":
        forbidden |= dict.fromkeys(benchmark_fingerprints(tasks), "NP-Bench")
    seen: dict[str, str] = {}
    kept, clashes = [], []
    for result in results:
        source = forbidden.get(result.fingerprint) or seen.get(result.fingerprint)
        if source is not None:
            clashes.append(f"{result.record['id']} (also in {source})")
            continue
        if split == "bench":
            seen[result.fingerprint] = "this build"
        kept.append(result)
    if clashes and not drop:
        shown = ", ".join(clashes[:10]) + (" ..." if len(clashes) > 10 else "")
        raise BuildError(
            f"{len(clashes)} instances overlap with excluded data: {shown}. "
            "Leave them out with --drop-overlap (the journal keeps the work done)."
        )
    if clashes:
        print(f"dropped {len(clashes)} overlapping instances: {', '.join(clashes[:10])}")
    return kept


def write_dataset(
    out: Path, results: list[ItemResult], description: dict[str, Any]
) -> dict[str, Any]:
    """Write ``<Task>.jsonl`` files (tasks in order of first appearance) and the manifest.

    ``description`` (the build spec, or where imported data came from) goes into the manifest,
    which holds no timestamps or timings so that equal inputs give byte-identical folders.
    """
    out.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[ItemResult]] = {}
    for result in results:
        by_task.setdefault(result.record["task"], []).append(result)
    tasks: dict[str, Any] = {}
    for task, rows in by_task.items():
        path = out / f"{task}.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            write_jsonl((result.record for result in rows), handle)
        proven = sum(bool(result.record.get("proven_optimal")) for result in rows)
        tasks[task] = {
            "file": path.name,
            "sha256": _sha256(path),
            "count": len(rows),
            "proven_optimal": round(proven / len(rows), 6),
            "ids": [result.record["id"] for result in rows],
            "seeds": [result.record["seed"] for result in rows],
            "fingerprints": [result.fingerprint for result in rows],
        }
    manifest = {"npgym_version": npgym.__version__, **description, "tasks": tasks}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_dataset(folder: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of a built dataset folder, task by task in manifest order."""
    manifest = load_manifest(folder)
    for task in manifest["tasks"].values():
        yield from read_jsonl(Path(folder) / task["file"])
