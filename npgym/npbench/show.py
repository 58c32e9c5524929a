"""``npgym show``: draw an instance from any file npgym writes, with an answer or its reference.

Reads an instance JSON file, a JSON-lines file of rows (``npgym generate``, an export) or a built
dataset folder (``npgym bench build``), so it sits above NP-Bench; the drawing itself is
:mod:`npgym.render`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from npgym.instance import Instance
from npgym.npbench.build import BuildError, read_dataset
from npgym.render import draw_answer, save_png
from npgym.results import Reference
from npgym.task import Task


class SourceError(ValueError):
    """An instance file, row or answer that ``npgym show`` cannot use; the message says why."""


def load_source(
    path: str | Path, row_id: str | None = None
) -> tuple[Task[Any, Any], Instance, Reference | None, str | None]:
    """The task, instance, reference (if stored) and row id in ``path``.

    ``path`` is an instance JSON file (``Instance.to_json``), a JSON-lines file of rows from
    ``npgym generate`` or an export, or a built dataset folder (``npgym bench build``). Rows are
    chosen by ``row_id``; without one the file must hold a single row, or the first is taken.
    """
    import json

    from npgym.records import RecordError, read_jsonl, record_instance, record_reference
    from npgym.registry import get_task

    source = Path(path)
    try:
        if source.is_dir():
            try:
                rows: list[Any] = list(read_dataset(source))
            except BuildError as error:
                raise SourceError(str(error)) from error
        else:
            text = source.read_text(encoding="utf-8")
            try:
                whole = json.loads(text)
            except json.JSONDecodeError:
                whole = None
            if isinstance(whole, dict) and "instance" not in whole:
                if row_id is not None:
                    raise SourceError(f"{source} holds one instance, not rows; drop --row")
                task = get_task(str(whole.get("task")))
                return task, task.from_json(text), None, None
            rows = [whole] if isinstance(whole, dict) else list(read_jsonl(source))
        if not rows:
            raise SourceError(f"{source} holds no rows")
        if row_id is None:
            row = rows[0]
        else:
            matches = [row for row in rows if str(row.get("id")) == str(row_id)]
            if not matches:
                raise SourceError(f"no row with id {row_id!r} in {source}")
            row = matches[0]
        task, instance = record_instance(row)
        return task, instance, record_reference(row), row.get("id")
    except (OSError, KeyError, RecordError) as error:
        raise SourceError(f"cannot read an instance from {source}: {error}") from error
    except ValueError as error:
        if isinstance(error, SourceError):
            raise
        raise SourceError(f"{source} is not a valid instance: {error}") from error


def show(
    path: str | Path,
    output: str | Path,
    answer: str | None = None,
    *,
    row_id: str | None = None,
    reference_answer: bool = False,
) -> Path:
    """Draw the instance in ``path`` with ``answer`` (a completion, or just the bracketed value)
    or, with ``reference_answer``, its reference solution, and save it as a PNG."""
    task, instance, reference, _ = load_source(path, row_id)
    if reference_answer:
        if answer is not None:
            raise SourceError("give an answer or ask for the reference, not both")
        reference = reference or task.reference(instance)
        answer = task.format_answer(reference.solution)
    elif answer is not None and "answer" not in answer.lower() and "\\boxed" not in answer:
        answer = "Answer: " + answer
    image = draw_answer(task, instance, answer, reference)
    return save_png(image, output)
