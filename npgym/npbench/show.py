"""``npgym show``: draw an instance from any file npgym writes, with an answer or its reference.

Reads an instance JSON file, a JSON-lines file of rows (``npgym generate``, an export) or a built
dataset folder (``npgym bench build``), so it sits above NP-Bench; the drawing itself is
:mod:`npgym.render`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from npgym.instance import Instance
from npgym.npbench.build import BuildError, dataset_files, read_dataset
from npgym.outputs import output_target, refuse_overwriting
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
            whole, text = _whole_document(source)
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


def _whole_document(source: Path) -> tuple[Any, bytes]:
    """The JSON document that a regular file of at most ``MAX_JSON_FILE_BYTES`` holds whole
    (an instance file), and its bytes; ``None`` for anything else (JSON lines, a larger file,
    a FIFO or a device: those are read line by line, each line bounded)."""
    from npgym.answer import loads_json
    from npgym.records import MAX_JSON_FILE_BYTES

    if not source.is_file() or source.stat().st_size > MAX_JSON_FILE_BYTES:
        return None, b""
    with open(source, "rb") as handle:
        data = handle.read(MAX_JSON_FILE_BYTES + 1)
    try:
        return loads_json(data), data
    except ValueError:
        return None, data


def show(
    path: str | Path,
    output: str | Path,
    answer: str | None = None,
    *,
    row_id: str | None = None,
    reference_answer: bool = False,
) -> Path:
    """Draw the instance in ``path`` with ``answer`` (a completion, or just the bracketed value)
    or, with ``reference_answer``, its reference solution, and save it as a PNG.

    ``output`` is written by :mod:`npgym.outputs`' rules, and never over ``path`` itself or, for a
    dataset folder, one of its own files."""
    source, target = Path(path), Path(output)
    output_target(target)
    inputs = dataset_files(source) if source.is_dir() else [source]
    refuse_overwriting(target, inputs, "the source's own")
    task, instance, reference, _ = load_source(source, row_id)
    if reference_answer:
        if answer is not None:
            raise SourceError("give an answer or ask for the reference, not both")
        reference = reference or task.reference(instance)
        answer = task.format_answer(reference.solution)
    elif answer is not None and "answer" not in answer.lower() and "\\boxed" not in answer:
        answer = "Answer: " + answer
    image = draw_answer(task, instance, answer, reference)
    return save_png(image, target)
