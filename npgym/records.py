"""Dataset rows: one JSON object per instance, the same shape in every file npgym writes.

Columns: ``id``, ``task``, ``tier``, ``seed``, ``difficulty``, ``prompt``, ``instance`` (the
instance's JSON as a string: tasks have different fields, which do not fit one Arrow struct
column), ``reference`` (the :class:`Reference` as a JSON string) and, for filtering without
parsing, ``reference_objective``, ``proven_optimal`` and ``reference_method``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from npgym.instance import Instance
from npgym.registry import get_task
from npgym.results import Reference
from npgym.task import Task


class RecordError(ValueError):
    """A row or file that is not in npgym's record format; the message says where and why."""


def make_record(
    record_id: str, task: Task, instance: Instance, reference: Reference | None
) -> dict[str, Any]:
    """The row for ``instance`` (and its reference, when there is one)."""
    row: dict[str, Any] = {
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


def record_instance(row: dict[str, Any]) -> tuple[Task, Instance]:
    """The task and instance of a row (``instance`` as a JSON string or an object)."""
    try:
        task = get_task(row["task"])
        data = row["instance"]
        text = data if isinstance(data, str) else json.dumps(data)
        return task, task.from_json(text)
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError(f"row {row.get('id', '?')!r}: bad task or instance: {error}") from error


def record_reference(row: dict[str, Any]) -> Reference | None:
    """The row's reference, or ``None`` when it has none."""
    data = row.get("reference")
    if data is None:
        return None
    try:
        if isinstance(data, str):
            return Reference.model_validate_json(data)
        return Reference.model_validate(data)
    except ValueError as error:
        raise RecordError(f"row {row.get('id', '?')!r}: bad reference: {error}") from error


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


def write_jsonl(rows: Iterable[dict[str, Any]], handle: IO[str]) -> int:
    """Write rows as compact JSON lines; return how many were written."""
    count = 0
    for row in rows:
        handle.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
        count += 1
    return count
