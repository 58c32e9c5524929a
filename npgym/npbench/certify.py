"""Checks of a built dataset that do not take its manifest's word for it.

:func:`npgym.npbench.build.verify_dataset` checks a folder against its manifest: hashes, ids,
seeds, fingerprints, and that each reference solution verifies to its recorded objective. But a
manifest certifies itself: whoever rewrites it along with the data can plant another instance,
or a worse reference still marked proven. So ``npgym eval`` also checks against what cannot be
rewritten:

- :func:`regenerate` (the default): a folder made by ``bench build`` records its spec; every
  instance is generated again from it, with the same redraws, and must have the row's seed and
  fingerprint (about 0.5 s for NP-Bench). Variant rows and imported instances (no spec, no
  seeds) are left to the deep check.
- :func:`prove_again` (``--deep``): every reference is solved again, exactly; a reference marked
  proven must be proven again with the same objective, and an unproven one's bound must hold
  against a proven optimum (about 14 CPU-s for NP-Bench).
- :func:`provenance` (always, after the checks above): the rows are compared with the digests
  of the official NP-Bench versions shipped in the package (``npgym/npbench/digests/``: each
  row's id, instance fingerprint, prompt hash, reference objective and proven flag). An
  official instance whose reference is marked proven with another objective than the official
  proven optimum is refused (a forged reference, caught without ``--deep``); the dataset is
  called "NP-Bench version N" only when its rows are exactly version N's, and otherwise
  "custom", saying which version it derives from and how many of its rows are missing.
  :func:`write_official_digest` makes a digest from a built official folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from npgym.datasets import BENCH_VERSION, drawn, forbidden_fingerprints
from npgym.npbench.build import (
    BuildSpec,
    IntegrityError,
    load_manifest,
    recorded_spec,
    verify_dataset,
)
from npgym.progress import Progress
from npgym.records import RecordError, load_row
from npgym.results import DEFAULT_TIME_LIMIT
from npgym.seeding import derive_seed

REGENERATED = "regenerated"
DEEP = "deep"


def regenerate(folder: str | Path, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Generate every instance of a built folder again from its recorded spec, and compare.

    Returns the ids of the rows checked (none for a folder without a recorded spec: imported
    instances): each drawn row must have the seed and instance its spec makes, and each variant
    row the instance and transforms that :func:`npgym.variants.variant` derives from its
    original row. Raises :class:`IntegrityError` naming the first row that differs.
    """
    from npgym.variants import variant

    manifest = load_manifest(folder)
    recorded = manifest.get("spec")
    if recorded is None:
        return []
    spec = recorded_spec(folder, recorded)
    made = {
        item.record_id: (item.seed, instance.fingerprint())
        for item, instance in drawn(spec, forbidden_fingerprints(spec))
    }
    by_id = {str(row.get("id")): row for row in rows}
    checked: list[str] = []
    for row in rows:
        identifier = str(row.get("id"))
        instance = _instance(folder, row)
        original_id = row.get("original_id")
        if original_id is not None:  # a variant: derived from its original, not drawn
            original = by_id.get(str(original_id))
            number = row.get("variant")
            if (
                original is None
                or original.get("original_id") is not None
                or type(number) is not int
            ):
                raise IntegrityError(f"{folder}: variant row {identifier!r} has no original row")
            derived = variant(_instance(folder, original), derive_seed(spec.seed, number - 1))
            if (
                instance.fingerprint() != derived.instance.fingerprint()
                or row.get("transforms") != list(derived.transforms)
                or identifier != f"{original_id}-v{number}"
            ):
                raise IntegrityError(
                    f"{folder}: variant row {identifier!r} is not variant {number} of "
                    f"{original_id!r}; the dataset was changed after it was built"
                )
            checked.append(identifier)
            continue
        if identifier not in made:
            raise IntegrityError(f"{folder}: row {identifier!r} is not one its spec makes")
        seed, fingerprint = made[identifier]
        if row.get("seed") != seed or instance.fingerprint() != fingerprint:
            raise IntegrityError(
                f"{folder}: row {identifier!r} holds another instance than its spec generates "
                f"(seed {row.get('seed')!r}, expected {seed}); the dataset was changed after "
                "it was built. Rebuild it, or pass --no-verify if the change is on purpose"
            )
        checked.append(identifier)
    return checked


def _instance(folder: str | Path, row: Mapping[str, Any]) -> Any:
    """The row's decoded instance; a row that does not decode is an :class:`IntegrityError`."""
    try:
        return load_row(row).instance
    except RecordError as error:
        raise IntegrityError(f"{folder}: {error}") from None


def prove_again(
    rows: Sequence[Mapping[str, Any]], time_limit: float | None = None, progress: bool = False
) -> int:
    """Solve every row's reference again, exactly, and compare; returns the rows checked.

    A reference recorded as proven optimal must be proven again with the same objective. One
    recorded as unproven must not claim a bound that a proven optimum contradicts. Raises
    :class:`IntegrityError` naming the first row that fails.
    """
    checked = 0
    limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    with Progress(len(rows), "prove", enabled=progress) as bar:
        for row in rows:
            try:
                task, instance, recorded = load_row(row)
            except RecordError as error:
                raise IntegrityError(str(error)) from None
            bar.update(done=1)
            if recorded is None:
                continue
            solved = task.solve(instance, exact=True, time_limit=limit)
            where = f"row {row.get('id')!r} ({task.name})"
            if recorded.proven_optimal and (
                not solved.proven_optimal or solved.objective != recorded.objective
            ):
                found = solved.objective if solved.proven_optimal else "no proof"
                raise IntegrityError(
                    f"{where}: the reference is marked proven optimal with objective "
                    f"{recorded.objective}, but solving it again gives {found}; the reference "
                    "was planted or edited"
                )
            if not recorded.proven_optimal and solved.proven_optimal:
                bound, optimum = recorded.bound, solved.objective
                beyond = bound is not None and optimum is not None
                if beyond and (bound > optimum if task.sense == "min" else bound < optimum):  # type: ignore[operator]
                    raise IntegrityError(
                        f"{where}: the recorded bound {bound} contradicts the proven optimum "
                        f"{optimum}"
                    )
            checked += 1
    return checked


DIGESTS = Path(__file__).parent / "digests"
"""The digests of the official NP-Bench versions (package data), ``npbench_v<N>.json``."""


def official_spec(version: int) -> dict[str, Any]:
    """The build spec of NP-Bench version ``version`` as ``bench build --bench-version N``
    records it in its manifest."""
    spec = BuildSpec(bench_version=version, mix={"benchmark": 1.0}).model_dump(mode="json")
    return dict(json.loads(json.dumps(spec)))


def _row_digest(row: Mapping[str, Any]) -> list[Any]:
    """``[id, instance fingerprint, prompt sha256, reference objective, proven]`` of a row."""
    return [
        str(row.get("id")),
        load_row(row).instance.fingerprint(),
        hashlib.sha256(str(row.get("prompt")).encode()).hexdigest(),
        row.get("reference_objective"),
        row.get("proven_optimal"),
    ]


def official_digest(folder: str | Path) -> dict[str, Any]:
    """The digest of a built official NP-Bench folder (verified first): its version, spec and,
    per task in order, every row's :func:`_row_digest`. Raises :class:`IntegrityError` when the
    folder is not exactly an official build (another spec, variants or dropped rows)."""
    manifest = load_manifest(folder)
    version = manifest.get("bench_version")
    if version is None or manifest.get("spec") != official_spec(version):
        raise IntegrityError(f"{folder}: not a build of an official NP-Bench spec")
    if manifest.get("variants") or manifest.get("dropped"):
        raise IntegrityError(f"{folder}: an official digest has no variants or dropped rows")
    rows = verify_dataset(folder)
    regenerate(folder, rows)
    tasks: dict[str, list[list[Any]]] = {}
    for row in rows:
        tasks.setdefault(str(row["task"]), []).append(_row_digest(row))
    return {"bench_version": version, "spec": official_spec(version), "tasks": tasks}


def write_official_digest(folder: str | Path, out: str | Path | None = None) -> Path:
    """Write :func:`official_digest` of ``folder`` to ``out`` (default: the package's
    ``digests/npbench_v<N>.json``) and return its path. How the shipped digests were made::

        npgym bench build -o /tmp/npb1 --bench-version 1
        npgym bench build -o /tmp/npb2 --bench-version 2
        python -c "from npgym.npbench.certify import write_official_digest as w; \\
            w('/tmp/npb1'); w('/tmp/npb2')"
    """
    digest = official_digest(folder)
    path = Path(out) if out is not None else DIGESTS / f"npbench_v{digest['bench_version']}.json"
    path.write_text(json.dumps(digest, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


@cache
def load_official_digest(version: int) -> dict[str, Any]:
    """The shipped digest of NP-Bench version ``version``."""
    return dict(json.loads((DIGESTS / f"npbench_v{version}.json").read_text(encoding="utf-8")))


def official_versions() -> list[int]:
    """The NP-Bench versions whose digests ship with the package, oldest first."""
    return [
        version
        for version in range(1, BENCH_VERSION + 1)
        if (DIGESTS / f"npbench_v{version}.json").is_file()
    ]


@dataclass(frozen=True)
class Provenance:
    """What a dataset is, as far as the shipped digests tell."""

    label: str
    """``"NP-Bench version N"`` for exactly version N's rows, else ``"custom (...)"``."""
    bench_version: int | None
    """N when the rows are exactly NP-Bench version N's, else ``None``."""
    official_ids: frozenset[str]
    """Ids of rows that are official rows (same id, instance and prompt as a version's)."""


UNVERIFIED = Provenance("custom (not verified: --no-verify)", None, frozenset())
"""The provenance of a dataset read with ``--no-verify``: nothing is known."""


def provenance(rows: Sequence[Mapping[str, Any]]) -> Provenance:
    """Compare ``rows`` (already verified) with every shipped official digest.

    A row whose instance is an official one and whose reference is marked proven must have the
    official objective: otherwise :class:`IntegrityError` (a forged reference). The label names
    a version only when the rows are exactly its rows, in order, with the same references.
    """
    found = [_row_digest(row) for row in rows]
    best: tuple[int, int, int, set[str]] | None = None  # matched, version, total, ids
    for version in official_versions():
        digest = load_official_digest(version)
        official = [entry for entries in digest["tasks"].values() for entry in entries]
        if found == official:
            ids = frozenset(entry[0] for entry in found)
            return Provenance(f"NP-Bench version {version}", version, ids)
        by_print = {entry[1]: entry for entry in official}
        by_id = {entry[0]: entry for entry in official}
        for row, entry in zip(rows, found, strict=True):
            _check_official_reference(row, entry, by_print.get(entry[1]), version)
        matched = {entry[0] for entry in found if by_id.get(entry[0], [None])[:3] == entry[:3]}
        if matched and (best is None or len(matched) >= best[0]):
            best = (len(matched), version, len(official), matched)
    if best is None:
        return Provenance("custom (no NP-Bench rows)", None, frozenset())
    matched_count, version, total, matched = best
    parts = [f"{total - matched_count} of its {total} rows dropped"]
    if len(found) > matched_count:
        parts.append(f"{len(found) - matched_count} rows not in it")
    label = f"custom (derived from NP-Bench v{version}, {', '.join(parts)})"
    return Provenance(label, None, frozenset(matched))


def _check_official_reference(
    row: Mapping[str, Any], found: list[Any], official: list[Any] | None, version: int
) -> None:
    """Refuse a reference marked proven on an official instance with another objective than
    the official proven one."""
    if official is None or not official[4] or found[4] is not True:
        return
    if json.dumps(found[3]) != json.dumps(official[3]):
        raise IntegrityError(
            f"row {found[0]!r} ({row.get('task')}): the reference is marked proven optimal with "
            f"objective {found[3]!r}, but this instance is in NP-Bench version {version} with the "
            f"proven optimum {official[3]!r}; the reference was forged"
        )
