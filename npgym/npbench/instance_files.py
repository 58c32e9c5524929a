"""What the importers of instance libraries share: a bounded reader of text files, and the step
that certifies references and writes an npgym dataset folder.

The files come from elsewhere (TSPLIB, DIMACS), so they are hostile until read: a file is read
whole only when it is at most :data:`MAX_INSTANCE_FILE_BYTES` long, every error names the file
and the line (``FILE:LINE: reason``), and the readers in :mod:`npgym.npbench.tsplib` and
:mod:`npgym.npbench.dimacs` check every declared size against the task's caps before they
allocate anything for it. Numbers are read with :data:`INTEGER` and :data:`REAL`, not Python's
``int()`` and ``float()``, which accept ``1_000``, ``nan`` and non-ASCII digits.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from npgym.datasets import ItemResult
from npgym.instance import Instance
from npgym.npbench.build import write_dataset
from npgym.progress import Progress
from npgym.records import MAX_LINE_BYTES, make_record
from npgym.registry import get_task
from npgym.results import Reference

MAX_INSTANCE_FILE_BYTES = 64 * 2**20
"""Largest instance file (TSPLIB ``.tsp`` / ``.opt.tour``, DIMACS ``.col`` / ``.clq``) npgym
reads: 64 MiB, refused after reading this many bytes + 1. A row of a dataset holds the instance
and its prompt, which lists the same data again, and must fit in
:data:`npgym.records.MAX_LINE_BYTES` (also 64 MiB), so a larger file could not become a row."""

INTEGER = re.compile(r"[+-]?[0-9]+")
"""An integer token as the file formats write them (ASCII digits, an optional sign)."""
REAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A real-number token: decimal, optional exponent (no ``nan``, ``inf`` or ``_``)."""


class InstanceFileError(ValueError):
    """A file that is not a valid instance file; the message names the file and the line."""


def read_text_lines(path: str | Path) -> list[tuple[int, str]]:
    """``(line number, text)`` of every line of ``path``, read whole when at most
    :data:`MAX_INSTANCE_FILE_BYTES` long (a device or a FIFO is read only that far). Bytes are
    read as Latin-1: the formats are ASCII, and a comment in another encoding must not stop an
    import; tokens are checked against :data:`INTEGER` and :data:`REAL` where they matter."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_INSTANCE_FILE_BYTES + 1)
    if len(data) > MAX_INSTANCE_FILE_BYTES:
        raise InstanceFileError(
            f"{path}: larger than {MAX_INSTANCE_FILE_BYTES:,} bytes; refused after reading "
            "that much"
        )
    text = data.decode("latin-1")
    return list(enumerate(text.split("\n"), start=1))


def parse_integer(token: str, where: str, what: str) -> int:
    """``token`` as an int; :class:`InstanceFileError` at ``where`` naming ``what`` otherwise."""
    if not INTEGER.fullmatch(token) or len(token) > 30:
        raise InstanceFileError(f"{where}: {what} must be an integer, got {token[:40]!r}")
    return int(token)


def parse_real(token: str, where: str, what: str) -> float:
    """``token`` as a finite float; :class:`InstanceFileError` otherwise."""
    if not REAL.fullmatch(token) or len(token) > 100:
        raise InstanceFileError(f"{where}: {what} must be a number, got {token[:40]!r}")
    value = float(token)
    if math.isinf(value):
        raise InstanceFileError(f"{where}: {what} {token[:40]} is out of range")
    return value


def tokens(lines: Sequence[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """``(line number, token)`` of every whitespace-separated token of ``lines``."""
    for number, text in lines:
        for token in text.split():
            yield number, token


@dataclass(frozen=True)
class ImportedInstance:
    """One instance read from a file, ready to be certified.

    ``check`` (optional) compares the certified reference with what the file claims (a TSPLIB
    ``.opt.tour``) and returns the words for the summary; it raises when they contradict.
    """

    record_id: str
    instance: Instance
    description: str
    check: Callable[[Reference], str] | None = None


def check_row_size(path: str | Path, instance: Instance) -> None:
    """Refuse an instance whose dataset row (its JSON and its prompt) would be longer than
    :data:`npgym.records.MAX_LINE_BYTES`: npgym could not read the dataset back."""
    task = get_task(instance.task)
    size = len(instance.to_json()) + len(task.prompt(instance).encode())
    if size > MAX_LINE_BYTES:
        raise InstanceFileError(
            f"{path}: the instance and its prompt take {size:,} bytes, more than a dataset row "
            f"may hold ({MAX_LINE_BYTES:,})"
        )


def write_imported(
    items: Sequence[ImportedInstance],
    out_dir: str | Path,
    source: dict[str, list[str]],
    time_limit: float | None = None,
    progress: bool = False,
) -> str:
    """Certify every item's reference, write the dataset folder ``out_dir``; return one summary
    line per item. Every file has been read (and refused if malformed) before this starts."""
    counts = Counter(item.record_id for item in items)
    repeated = sorted(record_id for record_id, count in counts.items() if count > 1)
    if repeated:
        raise InstanceFileError(f"two files give the same instance id: {', '.join(repeated)}")
    results: list[ItemResult] = []
    lines = []
    with Progress(len(items), "import", enabled=progress) as bar:
        for item in items:
            started = time.perf_counter()
            task = get_task(item.instance.task)
            reference = task.reference(item.instance, time_limit=time_limit)
            if reference.proven_optimal:
                verdict = f"reference {reference.objective} (proven optimal)"
            else:
                verdict = (
                    f"reference {reference.objective} (not proven: bound {reference.bound}, "
                    f"gap {reference.gap:.2%})"
                    if reference.gap is not None
                    else f"reference {reference.objective} (not proven, no bound)"
                )
            checked = f", {item.check(reference)}" if item.check is not None else ""
            record = make_record(item.record_id, task, item.instance, reference)
            fingerprint = item.instance.fingerprint()
            results.append(ItemResult(record, fingerprint, 0.0, 0.0, reference.certificate))
            elapsed = time.perf_counter() - started
            lines.append(f"{item.description}: {verdict}{checked}, {elapsed:.1f} s")
            bar.update(done=1)
    write_dataset(Path(out_dir), results, source=dict(source))
    return "\n".join(lines)
