"""Dataset rows: one JSON object per instance, the same shape in every file npgym writes.

Columns: ``id``, ``task``, ``tier``, ``seed``, ``difficulty``, ``prompt``, ``instance`` (the
instance's JSON as a string: tasks have different fields, which do not fit one Arrow struct
column), ``reference`` (the :class:`Reference` as a JSON string) and, for filtering without
parsing, ``reference_objective``, ``proven_optimal`` and ``reference_method``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, NamedTuple, TypedDict

from typing_extensions import NotRequired

from npgym.instance import Instance
from npgym.registry import get_task
from npgym.results import Reference
from npgym.task import Task

ROW_SCHEMA_VERSION = 1
"""Version of the row layout below; manifests record it (rows stay lean: no per-row copy)."""


class RecordError(ValueError):
    """A row or file that is not in npgym's record format; the message says where and why."""


class Row(TypedDict):
    """One dataset row, as every npgym file stores it (schema :data:`ROW_SCHEMA_VERSION`)."""

    id: str
    task: str
    tier: str | None
    seed: int | None
    difficulty: float | None
    prompt: str
    instance: str
    """The instance's JSON (tasks have different fields, which fit no single Arrow struct)."""
    reference: NotRequired[str]
    """The :class:`Reference` as JSON; this and the next three only when a reference exists."""
    reference_objective: NotRequired[int | float | None]
    proven_optimal: NotRequired[bool]
    reference_method: NotRequired[str]


class LoadedRow(NamedTuple):
    """A row's task, instance and reference (``None`` when the row has none), decoded."""

    task: Task
    instance: Instance
    reference: Reference | None


def make_record(record_id: str, task: Task, instance: Instance, reference: Reference | None) -> Row:
    """The row for ``instance`` (and its reference, when there is one)."""
    row: Row = {
        "id": record_id,
        "task": task.name,
        "tier": instance.tier,
        "seed": instance.seed,
        "difficulty": instance.difficulty,
        "prompt": task.prompt(instance),
        "instance": instance.to_json(),
    }
    if reference is not None:
        row |= {
            "reference": reference.model_dump_json(),
            "reference_objective": reference.objective,
            "proven_optimal": reference.proven_optimal,
            "reference_method": reference.method,
        }
    return row


def load_row(row: Mapping[str, Any]) -> LoadedRow:
    """Decode a row's task, instance and reference: the one row loader of npgym.

    ``instance`` and ``reference`` may be JSON strings (as files store them) or objects.
    Decoding is cached on the JSON text, since trainers score the same rows again and again.
    Raises :class:`RecordError` naming the row.
    """
    where = f"row {row.get('id', '?')!r}"
    try:
        data = row["instance"]
        task = get_task(row["task"])
        text = data if isinstance(data, str) else json.dumps(data)
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError(f"{where}: bad task or instance: {error}") from error
    reference = row.get("reference")
    if reference is not None and not isinstance(reference, str):
        reference = json.dumps(reference)
    return _decode(task.name, text, reference or None, where)


def load_solved_row(row: Mapping[str, Any]) -> tuple[Task, Instance, Reference]:
    """:func:`load_row`, with the task's (memoised) reference when the row has none."""
    task, instance, reference = load_row(row)
    return task, instance, reference or task.reference(instance)


def _decode(task_name: str, instance: str, reference: str | None, where: str) -> LoadedRow:
    try:
        return _decode_cached(task_name, instance, reference)
    except _BadInstanceError as error:
        raise RecordError(f"{where}: bad task or instance: {error.__cause__}") from error
    except ValueError as error:
        raise RecordError(f"{where}: bad reference: {error}") from error


class _BadInstanceError(ValueError):
    """Internal: tells instance errors from reference errors inside the cached decoder."""


@lru_cache(maxsize=4096)
def _decode_cached(task_name: str, instance: str, reference: str | None) -> LoadedRow:
    task = get_task(task_name)
    try:
        decoded = task.from_json(instance)
    except ValueError as error:
        raise _BadInstanceError from error
    solved = None if reference is None else Reference.model_validate_json(reference)
    return LoadedRow(task, decoded, solved)


def record_instance(row: Mapping[str, Any]) -> tuple[Task, Instance]:
    """The task and instance of a row (see :func:`load_row`)."""
    loaded = load_row({**row, "reference": None})
    return loaded.task, loaded.instance


def record_reference(row: Mapping[str, Any]) -> Reference | None:
    """The row's reference, or ``None`` when it has none (see :func:`load_row`)."""
    return load_row(row).reference


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of a JSON-lines file; a malformed line raises :class:`RecordError` naming it."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise RecordError(f"{path}:{number}: not valid JSON ({error.msg})") from error
            if not isinstance(row, dict):
                raise RecordError(f"{path}:{number}: expected a JSON object per line")
            yield row


def complete_lines(path: str | Path) -> list[str]:
    """Lines of an append-only JSON-lines file, dropping a last line cut short by a crash.

    The cut line is also removed from the file, so the next append starts on a fresh line.
    """
    data = Path(path).read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    if len(complete) != len(data):
        Path(path).write_bytes(complete)
    return complete.decode("utf-8").splitlines()


def write_jsonl(rows: Iterable[Mapping[str, Any]], handle: IO[str]) -> int:
    """Write rows as compact JSON lines; return how many were written."""
    count = 0
    for row in rows:
        handle.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
        count += 1
    return count
