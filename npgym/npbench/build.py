"""Build dataset folders of instances with references: NP-Bench and training sets, resumable.

A build makes a :class:`~npgym.datasets.DatasetSpec` (here also called ``BuildSpec``) with
:func:`npgym.datasets.make_rows`, which draws distinct instances and runs the references on
local processes (default) or on Ray. Each finished row is appended to a journal under
``<out>/.journal`` as it arrives, so an interrupted build resumes without recomputing or
losing anything. When all items are done the rows are written per task in plan order
(``<out>/<Task>.jsonl``) with a ``manifest.json``: the same spec gives byte-identical files on
either backend with any number of workers.

Seeds and the no-duplicates rule are :mod:`npgym.datasets`'s: training sets and the benchmark
draw from different streams, a training set never holds an NP-Bench instance, and ``exclude``
names further datasets whose instances must not appear (checked at the end, loudly).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypedDict, cast

from tqdm import tqdm
from typing_extensions import Required

from npgym.datasets import (
    BENCH_SIZE,
    BENCH_TIER,
    Backend,
    DatasetError,
    DatasetSpec,
    ItemResult,
    WorkItem,
    benchmark_fingerprints,
    make_rows,
    plan,
    tier_counts,
)
from npgym.records import ROW_SCHEMA_VERSION, Row, complete_lines, read_jsonl, write_jsonl
from npgym.version import __version__

MANIFEST = "manifest.json"
JOURNAL = ".journal"
__all__ = [
    "BENCH_SIZE",
    "BENCH_TIER",
    "BuildError",
    "BuildSpec",
    "ItemResult",
    "Manifest",
    "WorkItem",
    "benchmark_fingerprints",
    "build",
    "check_overlap",
    "load_manifest",
    "plan",
    "read_dataset",
    "tier_counts",
    "write_dataset",
]


class BuildError(DatasetError):
    """A build that cannot go on: overlap with excluded data, a conflicting journal..."""


BuildSpec = DatasetSpec
"""What to build (the one dataset spec; ``n`` is accepted for ``count``)."""

MANIFEST_SCHEMA_VERSION = 1


class TaskEntry(TypedDict):
    """One task's file in a manifest, with what identifies its rows."""

    file: str
    sha256: str
    count: int
    proven_optimal: float
    ids: list[str]
    seeds: list[int | None]
    fingerprints: list[str]


class Manifest(TypedDict, total=False):
    """``manifest.json`` of a dataset folder; ``spec`` for builds, ``source`` for imports."""

    schema_version: Required[int]
    row_schema_version: Required[int]
    npgym_version: Required[str]
    spec: dict[str, Any]
    source: dict[str, Any]
    tasks: Required[dict[str, TaskEntry]]


@dataclass
class BuildSummary:
    """What a build did: items computed now vs. taken from the journal, and where time went."""

    computed: int
    resumed: int
    wall_seconds: float
    generation_seconds: float
    reference_seconds: float
    manifest: Manifest


def build(
    spec: BuildSpec,
    out_dir: str | Path,
    *,
    workers: int | None = None,
    backend: Backend = "local",
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
    if spec.split == "stream":
        raise BuildError("a stream is endless: a build needs a finite split")
    out = Path(out_dir)
    started = time.perf_counter()
    journal = _Journal(out / JOURNAL, spec)
    done = journal.load()
    items = plan(spec)
    results = dict(done)
    timings = [0.0, 0.0]
    bar = tqdm(
        total=len(items),
        initial=len(done),
        unit="inst",
        desc="build",
        disable=None if progress is None else not progress,
    )
    made = make_rows(
        spec, workers=workers, backend=backend, ray_address=ray_address, skip=done, ordered=False
    )
    computed = 0
    for result in made:
        computed += 1
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
    manifest = write_dataset(out, kept, spec=spec.model_dump(mode="json"))
    journal.remove()
    return BuildSummary(
        computed=computed,
        resumed=len(done),
        wall_seconds=time.perf_counter() - started,
        generation_seconds=timings[0],
        reference_seconds=timings[1],
        manifest=manifest,
    )


class _Journal:
    """Append-only record of finished items, so a build can resume after any interruption."""

    def __init__(self, folder: Path, spec: BuildSpec) -> None:
        self.folder = folder
        self.spec_path = folder / "spec.json"
        self.rows_path = folder / "rows.jsonl"
        self.spec_json = spec.model_dump_json()
        self._handle: IO[str] | None = None

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


def load_manifest(folder: str | Path) -> Manifest:
    """The manifest of a built dataset folder."""
    path = Path(folder) / MANIFEST
    if not path.exists():
        raise BuildError(f"{folder} has no {MANIFEST}: not a finished npgym build")
    manifest: Manifest = json.loads(path.read_text())
    return manifest


def check_overlap(
    results: list[ItemResult],
    *,
    split: str,
    tasks: Iterable[str],
    exclude: Iterable[str | Path] = (),
    drop: bool = False,
) -> list[ItemResult]:
    """Refuse (or drop) instances that also appear in excluded datasets, in NP-Bench (for any
    split but ``bench``) or twice. Builds draw distinct instances that avoid NP-Bench, so only
    ``exclude`` can make this fire; it stays as the last check before files are written."""
    forbidden: dict[str, str] = {}
    for folder in exclude:
        for task in load_manifest(folder)["tasks"].values():
            forbidden |= dict.fromkeys(task["fingerprints"], str(folder))
    if split != "bench":
        forbidden |= dict.fromkeys(benchmark_fingerprints(tasks), "NP-Bench")
    seen: dict[str, str] = {}
    kept, clashes = [], []
    for result in results:
        source = forbidden.get(result.fingerprint) or seen.get(result.fingerprint)
        if source is not None:
            clashes.append(f"{result.record['id']} (also in {source})")
            continue
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
    out: Path,
    results: list[ItemResult],
    *,
    spec: dict[str, Any] | None = None,
    source: dict[str, Any] | None = None,
) -> Manifest:
    """Write ``<Task>.jsonl`` files (tasks in order of first appearance) and the manifest.

    The build ``spec`` or where imported data came from (``source``) goes into the manifest,
    which holds no timestamps or timings so that equal inputs give byte-identical folders.
    """
    out.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[ItemResult]] = {}
    for result in results:
        by_task.setdefault(result.record["task"], []).append(result)
    tasks: dict[str, TaskEntry] = {}
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
    described = {"spec": spec, "source": source}
    manifest = cast(
        Manifest,
        {
            "schema_version": MANIFEST_SCHEMA_VERSION,
            "row_schema_version": ROW_SCHEMA_VERSION,
            "npgym_version": __version__,
            **{key: value for key, value in described.items() if value is not None},
            "tasks": tasks,
        },
    )
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_dataset(folder: str | Path) -> Iterator[Row]:
    """Rows of a built dataset folder, task by task in manifest order."""
    manifest = load_manifest(folder)
    for task in manifest["tasks"].values():
        yield from cast("Iterator[Row]", read_jsonl(Path(folder) / task["file"]))
