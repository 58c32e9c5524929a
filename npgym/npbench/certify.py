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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from npgym.config import validation_summary
from npgym.datasets import drawn, forbidden_fingerprints
from npgym.npbench.build import BuildSpec, IntegrityError, load_manifest
from npgym.progress import Progress
from npgym.records import RecordError, load_row
from npgym.results import DEFAULT_TIME_LIMIT

REGENERATED = "regenerated"
DEEP = "deep"


def regenerate(folder: str | Path, rows: Sequence[Mapping[str, Any]]) -> int:
    """Generate every instance of a built folder again from its recorded spec, and compare.

    Returns how many rows were checked (0 for a folder without a recorded spec: imported
    instances). Raises :class:`IntegrityError` naming the first row whose seed or instance is
    not what the spec makes.
    """
    manifest = load_manifest(folder)
    recorded = manifest.get("spec")
    if recorded is None:
        return 0
    try:
        spec = BuildSpec.model_validate(recorded)
    except ValidationError as error:
        raise IntegrityError(
            f"{folder}: the recorded spec is not valid: {validation_summary(error)}"
        ) from None
    made = {
        item.record_id: (item.seed, instance.fingerprint())
        for item, instance in drawn(spec, forbidden_fingerprints(spec))
    }
    checked = 0
    for row in rows:
        if row.get("original_id") is not None:
            continue  # a variant: its instance is derived, not drawn (see prove_again)
        identifier = str(row.get("id"))
        if identifier not in made:
            raise IntegrityError(f"{folder}: row {identifier!r} is not one its spec makes")
        seed, fingerprint = made[identifier]
        try:
            _, instance, _ = load_row(row)
        except RecordError as error:
            raise IntegrityError(f"{folder}: {error}") from None
        if row.get("seed") != seed or instance.fingerprint() != fingerprint:
            raise IntegrityError(
                f"{folder}: row {identifier!r} holds another instance than its spec generates "
                f"(seed {row.get('seed')!r}, expected {seed}); the dataset was changed after "
                "it was built. Rebuild it, or pass --no-verify if the change is on purpose"
            )
        checked += 1
    return checked


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
