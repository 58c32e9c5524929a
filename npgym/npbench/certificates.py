"""Certificates beside a dataset's rows, and the check of every row's proof claims.

Rows keep their bytes (NP-Bench's published rows are pinned by digests), so a dataset folder
holds its references' certificates in a sidecar, :data:`npgym.outputs.CERTIFICATES`: one JSON
line per row that has one, ``{"id": ..., "certificate": {...}}``, in the rows' order. Exports
carry them in a ``certificate`` column (docs/certificates.md).

The sidecar needs no hash in the manifest: a certificate proves what it proves on the row's
instance, whoever wrote it. :func:`check_rows` checks every row that claims something, with the
independent checker :mod:`npgym.certificates`, reading the instance and the reference from the
row's own JSON (not through npgym's parsers): a row marked ``proven_optimal`` needs a
certificate whose bound meets its objective, a row with a ``bound`` one that proves it.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import npgym.certificates as checker
from npgym.outputs import CERTIFICATES, open_regular
from npgym.records import RecordError, Row, read_jsonl

MAX_FILE_BYTES = 4 * 2**30
"""Largest certificates file or export read (4 GiB, as a task file): checked before a byte is
read."""


class CertificateCheckError(ValueError):
    """Rows whose proof claims their certificates do not back (the message lists them)."""


def write_certificates(out: Path, entries: Iterable[tuple[str, dict[str, Any] | None]]) -> int:
    """Write the sidecar of ``(row id, certificate)`` pairs (rows without one are left out);
    return how many were written. The file is written even when empty, so that a folder built
    with certificates says so."""
    written = 0
    with open_regular(out / CERTIFICATES, "w") as handle:
        for identifier, certificate in entries:
            if certificate is None:
                continue
            line = {"id": identifier, "certificate": certificate}
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")
            written += 1
    return written


def _check_regular(path: Path) -> None:
    """:class:`~npgym.records.RecordError` unless ``path`` is a regular file (not a link) of
    at most :data:`MAX_FILE_BYTES`."""
    status = os.lstat(path)
    if not stat.S_ISREG(status.st_mode):
        raise RecordError(f"{path}: not a regular file (a link, FIFO or device is never read)")
    if status.st_size > MAX_FILE_BYTES:
        raise RecordError(f"{path}: more than the {MAX_FILE_BYTES} bytes it may hold")


def read_certificates(folder: str | Path) -> dict[str, Any] | None:
    """The sidecar of ``folder`` as ``{row id: certificate}``; ``None`` when the folder has none.
    Only a regular file of at most :data:`MAX_FILE_BYTES` is read, in bounded lines
    (:func:`npgym.records.read_jsonl`); anything else, a malformed line or an id twice raises
    :class:`~npgym.records.RecordError` naming it."""
    path = Path(folder) / CERTIFICATES
    if not os.path.lexists(path):
        return None
    _check_regular(path)
    found: dict[str, Any] = {}
    for number, line in enumerate(read_jsonl(path), start=1):
        identifier = line.get("id")
        if not isinstance(identifier, str) or set(line) != {"id", "certificate"}:
            raise RecordError(f"{path}:{number}: expected {{'id': str, 'certificate': ...}}")
        if identifier in found:
            raise RecordError(f"{path}:{number}: a second certificate for {identifier!r}")
        found[identifier] = line["certificate"]
    return found


def with_certificates(rows: Iterable[Row], found: Mapping[str, Any] | None) -> list[Row]:
    """``rows`` with a ``certificate`` field as exports carry it: compact JSON text, or ``None``
    for a row without one."""
    found = found or {}
    joined: list[Row] = []
    for row in rows:
        certificate = found.get(str(row.get("id")))
        text = None if certificate is None else json.dumps(certificate, separators=(",", ":"))
        joined.append(cast(Row, {**row, "certificate": text}))
    return joined


def row_certificate(row: Mapping[str, Any]) -> Any:
    """The certificate a row carries in its ``certificate`` field (an export's), or ``None``."""
    value = row.get("certificate")
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value  # the checker refuses it, naming the row
    return value


def exported_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of an exported file (``npgym export``: jsonl, parquet, trl or verl), each with
    ``id``, ``task``, ``instance``, ``reference`` and ``certificate`` (verl's ``extra_info``
    lifted up). Only a regular file of at most :data:`MAX_FILE_BYTES` is read, JSON lines
    bounded as :func:`npgym.records.read_jsonl` bounds them; parquet needs pyarrow."""
    path = Path(path)
    _check_regular(path)
    if str(path).endswith(".jsonl"):
        rows = list(read_jsonl(path))
    elif str(path).endswith(".parquet"):
        try:
            import pyarrow.parquet
        except ImportError as error:
            raise ValueError(
                f"reading parquet needs pyarrow: pip install 'npgym[parquet]' ({error})"
            ) from None
        rows = pyarrow.parquet.read_table(path).to_pylist()
    else:
        raise ValueError(f"{path}: expected a dataset folder, a .jsonl or a .parquet export")
    return [
        {**row, **row["extra_info"]} if isinstance(row.get("extra_info"), dict) else row
        for row in rows
    ]


@dataclass
class CertificateReport:
    """What :func:`check_rows` found, per task and in all."""

    certified: dict[str, int] = field(default_factory=dict)
    """Rows whose every claim (proven, bound) their certificate backs, per task."""
    unclaimed: dict[str, int] = field(default_factory=dict)
    """Rows that claim no proof and no bound (nothing to check), per task."""
    uncheckable: dict[str, int] = field(default_factory=dict)
    """Rows of tasks without a checker (plug-ins, families): their solver's word, per task."""
    refused: dict[str, str] = field(default_factory=dict)
    """Row id -> why its claims do not check (a missing certificate included)."""
    seconds: float = 0.0

    def summary(self) -> str:
        """One line: how many rows were certified, refused and left unchecked (no timing:
        reports that quote it stay the same from run to run)."""
        parts = [f"{sum(self.certified.values())} references' certificates checked"]
        if self.refused:
            parts.append(f"{len(self.refused)} refused")
        if self.uncheckable:
            parts.append(f"{sum(self.uncheckable.values())} of tasks without a checker")
        return ", ".join(parts)

    def raise_if_refused(self) -> None:
        """:class:`CertificateCheckError` listing the first refused rows, if there are any."""
        if self.refused:
            shown = "; ".join(f"{key}: {why}" for key, why in list(self.refused.items())[:5])
            more = f" (and {len(self.refused) - 5} more)" if len(self.refused) > 5 else ""
            raise CertificateCheckError(
                f"{len(self.refused)} references' claims are not backed by a certificate: "
                f"{shown}{more}"
            )


Outcome = tuple[str, str, str]
"""(task, status, reason) of one row: status ``certified``, ``unclaimed``, ``uncheckable`` or
``refused``."""


def check_row(row: Mapping[str, Any], certificate: Any) -> Outcome:
    """Check one row's claims against ``certificate`` (see the module docstring)."""
    task = str(row.get("task"))
    try:
        reference = row.get("reference")
        claims = json.loads(reference) if isinstance(reference, str) else reference
        if not isinstance(claims, dict):
            return task, "unclaimed", ""
        proven, bound = claims.get("proven_optimal") is True, claims.get("bound")
        if not proven and bound is None:
            return task, "unclaimed", ""
        if not checker.has_checker(task):
            return task, "uncheckable", ""
        instance = row.get("instance")
        instance = json.loads(instance) if isinstance(instance, str) else instance
        if not isinstance(instance, dict):
            return task, "refused", "the instance is not a JSON object"
        checker.check_claim(
            task,
            instance,
            objective=claims.get("objective"),
            solution=claims.get("solution"),
            proven_optimal=proven,
            bound=bound,
            certificate=certificate,
        )
    except checker.CertificateError as error:
        return task, "refused", str(error)[:300]
    except (ValueError, RecursionError) as error:
        return task, "refused", f"unreadable: {str(error)[:200]}"
    return task, "certified", ""


def check_rows(
    rows: Sequence[Mapping[str, Any]], found: Mapping[str, Any] | None = None
) -> CertificateReport:
    """Check every row's claims; a row's certificate is ``found[id]`` (a folder's sidecar) or,
    without ``found``, the row's own ``certificate`` field (an export's). One process: all of
    NP-Bench checks in about 0.6 s (bench/certificate_times.py), less than worker processes
    would take to start."""
    started = time.perf_counter()
    report = CertificateReport()
    for row in rows:
        certificate = row_certificate(row) if found is None else found.get(str(row.get("id")))
        task, status, reason = check_row(row, certificate)
        if status == "refused":
            report.refused[str(row.get("id"))] = reason
        else:
            counts = getattr(report, status)
            counts[task] = counts.get(task, 0) + 1
    report.seconds = time.perf_counter() - started
    return report


def check_folder(folder: str | Path, rows: Sequence[Row]) -> CertificateReport:
    """:func:`check_rows` on a dataset folder's rows with its sidecar; a folder without one is
    checked all the same (every claimed proof is then refused for want of a certificate)."""
    return check_rows(rows, read_certificates(folder) or {})
