"""Build dataset folders of instances with references: NP-Bench and training sets, resumable.

A build makes a :class:`~npgym.datasets.DatasetSpec` (here also called ``BuildSpec``) with
:func:`npgym.datasets.make_rows`, which draws distinct instances and runs the references on
local processes (default) or on Ray. Each finished row is appended to a journal under
``<out>/.journal`` as it arrives, so an interrupted build resumes without recomputing or
losing anything. When all items are done the rows are written per task in plan order
(``<out>/<Task>.jsonl``) with a ``manifest.json``: the same spec gives byte-identical files on
either backend with any number of workers. Running the same build again on a finished folder
verifies it and does nothing else.

With ``variants=k`` each kept instance is followed by ``k`` variants that keep its optimum
(:func:`npgym.variants.expand_variants`): rows ``<id>-v<j>`` with ``original_id``, ``variant``
(``1..k``) and ``transforms``, each with its own reference, computed in this process and checked
against the original's (the variant's objective is ``scale * original + shift``).

:func:`read_dataset` (behind ``eval``, ``export`` and ``show``) first checks the folder against
its manifest with :func:`verify_dataset`: file hashes, counts, ids, seeds and fingerprints,
the planned ids of the recorded spec, and that every reference solution verifies to its
recorded objective. A mismatch raises :class:`IntegrityError` naming the file and what differs.
A folder may come from anyone, so nothing in it is taken on trust: the manifest is checked field
by field (:func:`load_manifest`), files are regular files in the folder (no links, no paths
that leave it) of bounded size (:data:`MAX_MANIFEST_BYTES`, :data:`MAX_TASK_FILE_BYTES`),
hashed in chunks, and every row's columns, its prompt included, are derived again from its own
instance and reference and compared (:func:`_check_row`).

Seeds and the no-duplicates rule are :mod:`npgym.datasets`'s: training sets and the benchmark
draw from different streams, a training set never holds an NP-Bench instance, and ``exclude``
names further datasets whose instances must not appear (checked at the end, loudly).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, Any, Literal, TypedDict, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)
from typing_extensions import Required

from npgym.config import validation_summary
from npgym.datasets import (
    BENCH_SIZE,
    BENCH_TIER,
    BENCH_VERSION,
    Backend,
    DatasetError,
    DatasetSpec,
    ItemResult,
    WorkItem,
    benchmark_fingerprints,
    make_rows,
    plan,
    tier_counts,
    warm_up,
)
from npgym.instance import Instance
from npgym.npbench.certificates import write_certificates
from npgym.outputs import CERTIFICATES, JOURNAL, LOCK, MANIFEST, OutputError, open_regular
from npgym.progress import Progress
from npgym.records import (
    ROW_SCHEMA_VERSION,
    RecordError,
    Row,
    complete_lines,
    load_row,
    make_record,
    read_jsonl,
    write_jsonl,
)
from npgym.registry import get_task
from npgym.results import Reference
from npgym.task import Task
from npgym.version import __version__

__all__ = [
    "BENCH_SIZE",
    "BENCH_TIER",
    "BuildError",
    "BuildSpec",
    "IntegrityError",
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
    "verify_dataset",
    "write_dataset",
]


class BuildError(DatasetError):
    """A build that cannot go on: overlap with excluded data, a conflicting journal..."""


class IntegrityError(BuildError):
    """A dataset folder that is not what its manifest says, or whose references do not verify."""


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
    bench_version: int
    """The NP-Bench version whose generators drew the instances (builds only)."""
    spec: dict[str, Any]
    variants: int
    """``k`` of ``bench build --variants k`` (absent when no variants were made)."""
    dropped: list[str]
    """Ids left out by ``--drop-overlap`` (absent when none were)."""
    source: dict[str, Any]
    tasks: Required[dict[str, TaskEntry]]


MAX_MANIFEST_BYTES = 256 * 2**20
"""Largest ``manifest.json`` read (256 MiB): about 1.7 million rows at some 150 bytes of id, seed
and fingerprint each, more than the largest spec (100,000 rows for each of NP-Bench's ten tasks,
about 150 MiB). Checked before reading."""
MAX_TASK_FILE_BYTES = 4 * 2**30
"""Largest task file read (4 GiB; NP-Bench's largest is 1.2 MB): checked before a byte is read,
so a huge or sparse file is refused at once rather than hashed or parsed."""
MAX_ROWS_PER_FILE = 10_000_000
"""Most rows one manifest entry may list (a spec's largest count with its variants is less)."""
MAX_ID_CHARS = 200
"""Longest row id a manifest may list (built ids are under 60 characters)."""
MAX_SEED = 2**64 - 1
"""Largest seed a manifest may list (built seeds are 63-bit, :func:`npgym.seeding.derive_seed`)."""
HASH_CHUNK_BYTES = 2**20
"""Task files are hashed in chunks of this many bytes: memory stays bounded whatever the size."""

_FILE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_+-]{0,120}\.jsonl$"
_HEX64 = r"^[0-9a-f]{64}$"
_Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)]
_Hex64 = Annotated[str, StringConstraints(pattern=_HEX64)]
_Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]


class _TaskEntryModel(BaseModel):
    """What :class:`TaskEntry` must hold, checked strictly (no coercion, no extra keys)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    file: Annotated[str, StringConstraints(pattern=_FILE_NAME)]
    """A plain file name in the folder: no path, no ``..``, no leading dot."""
    sha256: _Hex64
    count: int = Field(ge=1, le=MAX_ROWS_PER_FILE)
    proven_optimal: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    ids: list[_Name] = Field(max_length=MAX_ROWS_PER_FILE)
    seeds: list[_Seed | None] = Field(max_length=MAX_ROWS_PER_FILE)
    fingerprints: list[_Hex64] = Field(max_length=MAX_ROWS_PER_FILE)

    @model_validator(mode="after")
    def _lists_match_the_count(self) -> _TaskEntryModel:
        for column in ("ids", "seeds", "fingerprints"):
            if len(getattr(self, column)) != self.count:
                raise ValueError(
                    f"{column} lists {len(getattr(self, column))} rows, count says {self.count}"
                )
        return self


class _ManifestModel(BaseModel):
    """What :class:`Manifest` must hold, checked strictly before anything else reads it."""

    model_config = ConfigDict(strict=True, extra="forbid")

    schema_version: Literal[1]
    row_schema_version: Literal[1]
    npgym_version: Annotated[str, StringConstraints(max_length=MAX_ID_CHARS)]
    bench_version: int | None = Field(None, ge=1, le=BENCH_VERSION)
    spec: dict[str, Any] | None = None
    variants: int | None = Field(None, ge=1, le=MAX_ROWS_PER_FILE)
    dropped: list[_Name] | None = Field(None, min_length=1, max_length=MAX_ROWS_PER_FILE)
    source: dict[str, Any] | None = None
    tasks: dict[_Name, _TaskEntryModel] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> _ManifestModel:
        for name, entry in self.tasks.items():
            if entry.file != f"{name}.jsonl":
                raise ValueError(f"tasks.{name}.file is {entry.file!r}, not {name}.jsonl")
        if (self.spec is None) == (self.source is None):
            raise ValueError("a manifest records either a build spec or an import source")
        recorded = None if self.spec is None else self.spec.get("bench_version")
        if self.bench_version != recorded:
            raise ValueError(
                f"bench_version is {self.bench_version}, but the recorded spec's is {recorded}"
            )
        if self.spec is None and (self.variants is not None or self.dropped is not None):
            raise ValueError("variants and dropped belong to builds (a manifest with a spec)")
        return self


@dataclass
class BuildSummary:
    """What a build did: items computed now vs. taken from the journal, and where time went."""

    computed: int
    resumed: int
    wall_seconds: float
    generation_seconds: float
    reference_seconds: float
    manifest: Manifest
    already_built: bool = False
    """The folder held this finished build already: it was verified and nothing was done."""


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
    variants: int = 0,
) -> BuildSummary:
    """Build (or resume) ``spec`` into ``out_dir`` and return a summary.

    ``exclude`` lists other built datasets (folders with a manifest) whose instances must not
    appear in this one; a training build always excludes the default NP-Bench as well. With
    ``drop_overlap`` overlapping instances are left out and reported instead of failing.
    ``variants`` adds that many optimum-keeping variants of every kept instance. ``progress``
    (default on) shows a bar on a terminal and periodic lines on stderr otherwise.

    A folder that already holds this finished build is verified and left as it is
    (``already_built``); one that holds a different finished build is an error.
    """
    if spec.split == "stream":
        raise BuildError("a stream is endless: a build needs a finite split")
    if variants < 0:
        raise BuildError(f"variants must be at least 0, got {variants}")
    out = Path(out_dir)
    with _locked(out):
        return _build(
            spec, out, workers, backend, ray_address, exclude, drop_overlap, progress, variants
        )


def _open_for_writing(path: Path, mode: Literal["w", "a", "a+"]) -> IO[str]:
    """:func:`npgym.outputs.open_regular`, refusing as a :class:`BuildError`: a folder a build
    writes into (or resumes) may come from elsewhere."""
    try:
        return open_regular(path, mode)
    except OutputError as error:
        raise BuildError(f"a build cannot write there: {error}") from None


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold ``out``'s build lock (the file :data:`LOCK`, removed when the build ends) while the
    block runs; a second build into the same folder is refused at once, naming the first one's
    process. A lock file left by a killed build holds no lock and is taken over."""
    import fcntl

    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK
    with _open_for_writing(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # A build that just finished may have removed the file we opened: then its
            # successor's new file is the lock, and we hold a stale one.
            current = os.stat(path).st_ino if path.exists() else None
            if current != os.fstat(handle.fileno()).st_ino:
                raise BlockingIOError
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise BuildError(
                f"another build is writing to {out} (pid {holder}); wait for it to finish, "
                "or build into another folder"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            path.unlink(missing_ok=True)  # still ours: unlinked before the lock is let go


def _build(
    spec: BuildSpec,
    out: Path,
    workers: int | None,
    backend: Backend,
    ray_address: str | None,
    exclude: Iterable[str | Path],
    drop_overlap: bool,
    progress: bool | None,
    variants: int,
) -> BuildSummary:
    """:func:`build`'s work, under the folder's lock."""
    started = time.perf_counter()
    if (out / MANIFEST).exists() and not (out / JOURNAL).exists():
        return _finished(spec, out, variants, started)
    if variants:
        _check_variants_defined(spec.tasks)
    journal = _Journal(out / JOURNAL, spec)
    done = journal.load()
    items = plan(spec)
    results = dict(done)
    timings = [0.0, 0.0]
    if len(done) < len(items) and backend != "ray":
        warm_up(spec.tasks, spec.reference != "none")
    made = make_rows(
        spec, workers=workers, backend=backend, ray_address=ray_address, skip=done, ordered=False
    )
    computed = 0
    with Progress(len(items), "build", enabled=progress is not False) as bar:
        bar.update(done=len(done))
        for result in made:
            computed += 1
            journal.append(result)
            results[result.record["id"]] = result
            timings[0] += result.generation_seconds
            timings[1] += result.reference_seconds
            bar.update(done=1)
    journal.close()
    ordered = [results[item.record_id] for item in items]
    kept = check_overlap(
        ordered, split=spec.split, tasks=spec.tasks, exclude=exclude, drop=drop_overlap
    )
    kept_ids = {result.record["id"] for result in kept}
    dropped = [result.record["id"] for result in ordered if result.record["id"] not in kept_ids]
    if variants:
        kept, variant_seconds = _with_variants(kept, spec, variants, progress is not False)
        timings[1] += variant_seconds
    manifest = write_dataset(
        out, kept, spec=spec.model_dump(mode="json"), variants=variants, dropped=dropped
    )
    journal.remove()
    return BuildSummary(
        computed=computed,
        resumed=len(done),
        wall_seconds=time.perf_counter() - started,
        generation_seconds=timings[0],
        reference_seconds=timings[1],
        manifest=manifest,
    )


def _finished(spec: BuildSpec, out: Path, variants: int, started: float) -> BuildSummary:
    """The summary of a folder that already holds this finished build (verified first)."""
    manifest = load_manifest(out)
    wanted = json.loads(json.dumps(spec.model_dump(mode="json")))
    if manifest.get("spec") != wanted or manifest.get("variants", 0) != variants:
        raise BuildError(
            f"{out} holds a finished build of a different spec (see its {MANIFEST}); "
            "choose another folder, or delete this one to rebuild"
        )
    verify_dataset(out)
    return BuildSummary(0, 0, time.perf_counter() - started, 0.0, 0.0, manifest, True)


def _check_variants_defined(tasks: Iterable[str]) -> None:
    """Fail before any work when a task has no optimum-keeping variants."""
    from npgym.variants import variant

    for name in tasks:
        try:
            variant(get_task(name).generate(0, tier="easy"), 0)
        except ValueError as error:
            raise BuildError(f"--variants: {error}") from error


def _with_variants(
    results: list[ItemResult], spec: BuildSpec, k: int, show: bool
) -> tuple[list[ItemResult], float]:
    """Each result followed by its ``k`` variants, with references of their own; and the
    seconds their references took. A variant whose proven optimum is not the original's
    mapped through the variant's scale and shift is a bug, and raises."""
    from npgym.variants import expand_variants

    expanded: list[ItemResult] = []
    seconds = 0.0
    with Progress(len(results) * k, "variants", enabled=show) as bar:
        for result in results:
            loaded = load_row(result.record)
            task, original = loaded.task, loaded.instance
            expanded.append(result)
            for number, made in enumerate(expand_variants([original], k, spec.seed)[0], start=1):
                begun = time.perf_counter()
                solved = None
                if spec.reference != "none":
                    solved = task.reference(
                        made.instance,
                        exact=spec.reference == "exact",
                        time_limit=spec.time_limit,
                    )
                seconds += time.perf_counter() - begun
                reference = loaded.reference
                if (
                    solved is not None
                    and reference is not None
                    and solved.proven_optimal
                    and reference.proven_optimal
                    and made.objective_to_original(solved.objective) != reference.objective
                ):
                    raise BuildError(
                        f"variant {number} of {result.record['id']} has the proven optimum "
                        f"{solved.objective}, which does not map back to the original's "
                        f"{reference.objective}"
                    )
                original_id = result.record["id"]
                marks = {
                    "original_id": original_id,
                    "variant": number,
                    "transforms": list(made.transforms),
                }
                record = make_record(f"{original_id}-v{number}", task, made.instance, solved)
                record = cast(Row, {**record, **marks})
                certificate = None if solved is None else solved.certificate
                expanded.append(
                    ItemResult(record, made.instance.fingerprint(), 0.0, 0.0, certificate)
                )
                bar.update(done=1)
    return expanded, seconds


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
        if not os.path.lexists(self.spec_path):
            self.folder.mkdir(parents=True, exist_ok=True)
            with _open_for_writing(self.spec_path, "w") as handle:
                handle.write(self.spec_json)
            return {}
        with _open_regular(self.spec_path, MAX_MANIFEST_BYTES) as handle:
            recorded = handle.read().decode("utf-8", errors="replace")
        if recorded != self.spec_json:
            raise BuildError(
                f"{self.folder} holds an interrupted build of a different spec; "
                "finish it with the same options or delete the folder"
            )
        done: dict[str, ItemResult] = {}
        if os.path.lexists(self.rows_path):
            _regular_file(self.rows_path, MAX_TASK_FILE_BYTES)  # never a planted link or FIFO
            for number, line in enumerate(complete_lines(self.rows_path), start=1):
                try:
                    entry = json.loads(line)
                    record, fingerprint = entry["record"], entry["fingerprint"]
                    certificate = entry.get("certificate")
                    done[record["id"]] = ItemResult(record, fingerprint, 0, 0, certificate)
                except (json.JSONDecodeError, KeyError, TypeError) as error:
                    raise BuildError(
                        f"{self.rows_path}:{number}: not a journal entry ({error}); the "
                        "journal is damaged: delete that line to recompute its item, or the "
                        "folder to start over"
                    ) from error
        return done

    def append(self, result: ItemResult) -> None:
        if self._handle is None:
            self._handle = _open_for_writing(self.rows_path, "a")
        entry = {
            "record": result.record,
            "fingerprint": result.fingerprint,
            "certificate": result.certificate,
        }
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


def dataset_files(folder: str | Path) -> list[Path]:
    """The files of a dataset folder that npgym writes or reads: the manifest, the task files it
    lists, the certificates, the build journal and lock (what an export must never overwrite)."""
    root = Path(folder)
    files = [root / MANIFEST, root / JOURNAL, root / LOCK, root / CERTIFICATES]
    try:
        entries = load_manifest(root).get("tasks") or {}
    except BuildError:
        return files
    if isinstance(entries, dict):
        files += [
            root / str(entry.get("file", ""))
            for entry in entries.values()
            if isinstance(entry, dict)
        ]
    return files


def load_manifest(folder: str | Path) -> Manifest:
    """The manifest of a built dataset folder, checked field by field (:class:`_ManifestModel`).

    The manifest must be a regular file (not a link) of at most :data:`MAX_MANIFEST_BYTES`;
    anything malformed raises :class:`IntegrityError` naming the first field that is wrong.
    """
    path = Path(folder) / MANIFEST
    if not os.path.lexists(path):
        raise BuildError(f"{folder} has no {MANIFEST}: not a finished npgym build")
    data = _read_bounded(path, MAX_MANIFEST_BYTES)
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as error:  # bad JSON, bad UTF-8, a 5000-digit number
        raise IntegrityError(f"{path}: not a valid manifest ({_short(error)})") from None
    if not isinstance(manifest, dict):
        raise IntegrityError(f"{path}: not a valid manifest (not a JSON object)")
    try:
        _ManifestModel.model_validate(manifest)
    except ValidationError as error:
        raise IntegrityError(f"{path}: not a valid manifest: {_first_error(error)}") from None
    return cast(Manifest, manifest)


def _short(error: BaseException | str, limit: int = 200) -> str:
    """An error (or a message) cut to ``limit`` characters: a message may quote hostile input."""
    text = str(error)
    return text if len(text) <= limit else text[:limit] + "..."


def _first_error(error: ValidationError) -> str:
    """The first failing field of a validation error and why, on one short line."""
    item = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in item["loc"]) or "value"
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return _short(f"{where}: {item['msg']}") + more


def _regular_file(path: Path, limit: int) -> os.stat_result:
    """``path``'s status after checking it is a regular file, not a link, of at most ``limit``
    bytes (read from the status, before any byte is read)."""
    try:
        status = os.lstat(path)
    except OSError as error:
        raise IntegrityError(
            f"{path}: listed in {MANIFEST} but missing ({error.strerror})"
        ) from None
    if stat.S_ISLNK(status.st_mode):
        raise IntegrityError(f"{path}: a symbolic link; a dataset folder holds its own files")
    if not stat.S_ISREG(status.st_mode):
        raise IntegrityError(f"{path}: not a regular file")
    if status.st_size > limit:
        raise IntegrityError(
            f"{path}: {status.st_size} bytes, more than the {limit} bytes a dataset file may hold"
        )
    return status


def _open_regular(path: Path, limit: int) -> IO[bytes]:
    """``path`` opened for reading after :func:`_regular_file`'s checks; the open itself
    follows no link (``O_NOFOLLOW``) and never blocks on a FIFO swapped in meanwhile."""
    _regular_file(path, limit)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise IntegrityError(f"{path}: cannot be opened ({error.strerror})") from None
    handle = os.fdopen(descriptor, "rb")
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
        handle.close()
        raise IntegrityError(f"{path}: changed while it was checked")
    return handle


def _read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (see :func:`_open_regular`)."""
    with _open_regular(path, limit) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise IntegrityError(f"{path}: more than the {limit} bytes a dataset file may hold")
    return data


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
    variants: int = 0,
    dropped: list[str] | None = None,
) -> Manifest:
    """Write ``<Task>.jsonl`` files (tasks in order of first appearance), the references'
    certificates beside them (:data:`~npgym.outputs.CERTIFICATES`) and the manifest.

    The build ``spec`` or where imported data came from (``source``) goes into the manifest,
    which holds no timestamps or timings so that equal inputs give byte-identical folders;
    ``variants`` and ``dropped`` (ids left out for overlap) only when there are any.
    """
    out.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[ItemResult]] = {}
    for result in results:
        by_task.setdefault(result.record["task"], []).append(result)
    tasks: dict[str, TaskEntry] = {}
    for task, rows in by_task.items():
        path = out / f"{task}.jsonl"
        with _open_for_writing(path, "w") as handle:
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
    described = {
        "bench_version": spec.get("bench_version") if spec else None,
        "spec": spec,
        "variants": variants or None,
        "dropped": dropped or None,
        "source": source,
    }
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
    write_certificates(
        out,
        ((result.record["id"], result.certificate) for rows in by_task.values() for result in rows),
    )
    with _open_for_writing(out / MANIFEST, "w") as handle:
        handle.write(json.dumps(manifest, indent=1) + "\n")
    return manifest


def _sha256(path: Path, limit: int | None = None) -> str:
    """SHA-256 of a regular file of at most ``limit`` bytes (default
    :data:`MAX_TASK_FILE_BYTES`), read in chunks of :data:`HASH_CHUNK_BYTES` (bounded memory)."""
    limit = MAX_TASK_FILE_BYTES if limit is None else limit
    digest = hashlib.sha256()
    read = 0
    with _open_regular(path, limit) as handle:
        while chunk := handle.read(HASH_CHUNK_BYTES):
            read += len(chunk)
            if read > limit:
                raise IntegrityError(f"{path}: more than the {limit} bytes a dataset file may hold")
            digest.update(chunk)
    return digest.hexdigest()


def read_dataset(folder: str | Path, *, verify: bool = True) -> Iterator[Row]:
    """Rows of a built dataset folder, task by task in manifest order.

    With ``verify`` (the default) the whole folder is checked first (:func:`verify_dataset`)
    and an :class:`IntegrityError` is raised before any row is given out.
    """
    if verify:
        return iter(verify_dataset(folder))
    manifest = load_manifest(folder)
    return (
        cast(Row, row)
        for task in manifest["tasks"].values()
        for row in read_jsonl(Path(folder) / task["file"])
    )


def verify_dataset(folder: str | Path, *, progress: bool = False) -> list[Row]:
    """Check a dataset folder against its manifest and return its rows.

    Checked: every task file's sha256, row count, ids, seeds and instance fingerprints (each
    recomputed from the row); no id or instance twice; the ``proven_optimal`` share; for a
    build, that the ids are the ones its recorded spec plans (less ``dropped``, plus variants);
    and that every row's reference solution verifies, by the task's own verifier, to the
    recorded objective (so an edited objective is caught even when the manifest was rewritten
    to match). Raises :class:`IntegrityError` naming the file and what differs.
    """
    root = Path(folder)
    manifest = load_manifest(root)
    entries = manifest.get("tasks")
    if not isinstance(entries, dict) or not entries:
        raise IntegrityError(f"{root / MANIFEST}: lists no task files")
    total = sum(int(entry.get("count", 0)) for entry in entries.values())
    rows: list[Row] = []
    seen_ids: dict[str, str] = {}
    seen_prints: dict[str, str] = {}
    with Progress(total, "verify", enabled=progress) as bar:
        for name, entry in entries.items():
            for row, fingerprint in _verified_file(root, name, entry):
                where = f"{root / entry['file']}: row {row['id']!r}"
                for seen, key, what in (
                    (seen_ids, row["id"], "id"),
                    (seen_prints, fingerprint, "instance"),
                ):
                    if key in seen:
                        raise IntegrityError(f"{where}: the same {what} as row {seen[key]!r}")
                    seen[key] = row["id"]
                rows.append(row)
                bar.update(done=1)
    _check_planned_ids(root, manifest, rows)
    return rows


def _mismatch(path: Path, what: str, recorded: Any, found: Any) -> IntegrityError:
    return IntegrityError(
        f"{path}: {what} differs from {MANIFEST} (recorded {recorded}, found {found}); the folder "
        "was changed after it was built. Rebuild it, or pass --no-verify if the edit is on purpose"
    )


def _verified_file(root: Path, name: str, entry: TaskEntry) -> Iterator[tuple[Row, str]]:
    """The rows of one task file with their fingerprints, each checked against ``entry``."""
    path = root / entry["file"]  # a plain file name (checked by load_manifest)
    digest = _sha256(path)
    if digest != entry["sha256"]:
        raise _mismatch(path, "sha256", entry["sha256"][:12] + "...", digest[:12] + "...")
    try:
        rows = cast("list[Row]", list(read_jsonl(path)))
    except (RecordError, UnicodeDecodeError) as error:
        raise IntegrityError(_short(f"{path}: {error}", 400)) from None
    except RecursionError:
        raise IntegrityError(f"{path}: a line nested too deeply to read") from None
    if len(rows) != entry["count"]:
        raise _mismatch(path, "row count", entry["count"], len(rows))
    proven = 0
    for index, row in enumerate(rows):
        if row.get("id") != entry["ids"][index]:
            raise _mismatch(
                path, f"id of row {index + 1}", entry["ids"][index], _short(repr(row.get("id")), 80)
            )
        if row.get("task") != name:
            raise _mismatch(
                path, f"task of row {row['id']!r}", name, _short(repr(row.get("task")), 80)
            )
        if row.get("seed") != entry["seeds"][index] or type(row.get("seed")) is not type(
            entry["seeds"][index]
        ):
            raise _mismatch(
                path,
                f"seed of row {row['id']!r}",
                entry["seeds"][index],
                _short(repr(row.get("seed")), 80),
            )
        fingerprint = _check_row(path, row)
        if fingerprint != entry["fingerprints"][index]:
            raise _mismatch(
                path, f"instance of row {row['id']!r}", "its fingerprint", "another instance"
            )
        proven += row.get("proven_optimal") is True
        yield row, fingerprint
    share = round(proven / len(rows), 6) if rows else 0.0
    if share != entry["proven_optimal"]:
        raise _mismatch(path, "proven_optimal share", entry["proven_optimal"], share)


VARIANT_COLUMNS = ("original_id", "variant", "transforms")
"""The columns a variant row adds to :func:`~npgym.records.make_record`'s (checked by type
here, and against the original by :func:`npgym.npbench.certify.regenerate`)."""


def _check_row(path: Path, row: Row) -> str:
    """The row's instance fingerprint, after checking that every column is what the row's own
    instance and reference make (:func:`~npgym.records.make_record`, compared as canonical
    JSON, so types count: ``1`` is not ``true``), the prompt included, byte for byte: a prompt
    edited to leak the answer is refused; and that the reference solution verifies, by the
    task's own verifier, to the recorded objective, of the same type (``None`` only for a proven
    "no solution", which the verifier must accept as correct)."""
    where = f"{path}: row {row['id']!r}"
    try:
        task, instance, reference = load_row(row)
    except RecordError as error:
        raise IntegrityError(_short(f"{path}: {error}", 400)) from None
    marks = {key: row[key] for key in VARIANT_COLUMNS if key in row}  # type: ignore[literal-required]
    if marks:
        _check_variant_marks(where, marks)
    if reference is not None:
        _check_reference(where, task, instance, reference)
    expected = make_record(row["id"], task, instance, reference)
    plain = {key: value for key, value in row.items() if key not in VARIANT_COLUMNS}
    if _canonical(plain) != _canonical(expected):
        column = next(
            key
            for key in sorted({*plain, *expected})
            if key not in plain
            or key not in expected
            or _canonical(plain[key]) != _canonical(expected[key])  # type: ignore[literal-required]
        )
        what = (
            "the prompt is not the one its instance renders (edited: it may leak the answer)"
            if column == "prompt"
            else f"column {column!r} is not what its instance and reference give"
        )
        raise IntegrityError(f"{where}: {what}; the folder was changed after it was built")
    return instance.fingerprint()


def _check_reference(
    where: str, task: Task[Any, Any], instance: Instance, reference: Reference
) -> None:
    """The reference solution verifies, by the task's own verifier, to the recorded objective,
    of the same type (``None`` only for a proven "no solution" the verifier accepts)."""
    verdict = task.verify(instance, reference.solution)
    recorded = reference.objective
    if not verdict.feasible or _canonical(verdict.objective) != _canonical(recorded):
        found = verdict.objective if verdict.feasible else f"infeasible ({verdict.reason})"
        raise IntegrityError(
            _short(
                f"{where}: the reference solution verifies to {found!r}, not to the recorded "
                f"objective {recorded!r}; the reference was edited",
                400,
            )
        )
    if recorded is not None and not (isinstance(recorded, int | float) and math.isfinite(recorded)):
        raise IntegrityError(
            f"{where}: the reference objective {recorded!r} is not a finite number"
        )


def _check_variant_marks(where: str, marks: dict[str, Any]) -> None:
    """A variant row's marks: all three, with the right types."""
    original, number, transforms = (marks.get(key) for key in VARIANT_COLUMNS)
    if not (
        len(marks) == len(VARIANT_COLUMNS)
        and isinstance(original, str)
        and type(number) is int
        and number >= 1
        and isinstance(transforms, list)
        and all(isinstance(item, str) for item in transforms)
    ):
        raise IntegrityError(
            f"{where}: a variant row needs original_id (text), variant (a number from 1) and "
            "transforms (a list of names)"
        )


def _canonical(value: Any) -> str:
    """``value`` as sorted compact JSON: equal only when equal in value and type."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def recorded_spec(where: str | Path, recorded: Any) -> BuildSpec:
    """A manifest's recorded spec, validated; :class:`IntegrityError` naming ``where`` and the
    first bad field otherwise (an unknown task included)."""
    try:
        return BuildSpec.model_validate(recorded)
    except ValidationError as error:
        reason = _short(validation_summary(error), 400)
    except KeyError as error:  # an unknown task name, from the task registry
        reason = _short(f"tasks: {error.args[0] if error.args else error}", 400)
    raise IntegrityError(f"{where}: the recorded spec is not valid: {reason}")


def _check_planned_ids(root: Path, manifest: Manifest, rows: list[Row]) -> None:
    """For a build: the rows are exactly the ids its recorded spec plans (so rows deleted
    together with their manifest entries are still missed), less dropped, plus variants."""
    recorded = manifest.get("spec")
    if recorded is None:
        return
    spec = recorded_spec(root / MANIFEST, recorded)
    dropped = set(manifest.get("dropped", []))
    variants = manifest.get("variants", 0)
    items = plan(spec)
    unplanned = dropped - {item.record_id for item in items}
    if unplanned or len(dropped) != len(manifest.get("dropped", [])):
        raise IntegrityError(
            f"{root / MANIFEST}: dropped lists ids its spec does not plan, or one id twice "
            f"({_short(', '.join(sorted(unplanned)[:5]), 200) or 'a repeated id'})"
        )
    expected: dict[str, list[str]] = {}
    for item in items:
        if item.record_id not in dropped:
            ids = expected.setdefault(item.task, [])
            ids.append(item.record_id)
            ids += [f"{item.record_id}-v{number}" for number in range(1, variants + 1)]
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row["task"], []).append(row["id"])
    if found != {task: ids for task, ids in expected.items() if ids}:
        planned = {key for ids in expected.values() for key in ids}
        present = {key for ids in found.values() for key in ids}
        missing = sorted(planned - present)
        extra = sorted(present - planned)
        raise IntegrityError(
            f"{root}: the rows are not the ones its spec plans ({len(planned)} expected, "
            f"{len(present)} found; missing: {', '.join(missing[:5]) or 'none'}; unexpected: "
            f"{', '.join(extra[:5]) or 'none'})"
        )
