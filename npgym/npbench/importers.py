"""Read NP-ENGINE's published question files into npgym datasets with certified references.

NP-ENGINE ships question sets as ``{"big_small": ..., "questions": {"question1": {...}, ...}}``
with each instance as a dict: TSP as a nested distance dict ``{"0": {"1": 63, ...}, ...}`` (the
diagonal sometimes omitted), knapsack as ``{"capacity": W, "items": {"0": {"weight", "value"}}}``.
Importing converts each question to an npgym instance, recomputes its reference with npgym's
exact solvers (their shipped answers are not trusted) and writes an npgym dataset folder that
``npgym eval`` and ``npgym export`` read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from npgym.datasets import ItemResult
from npgym.instance import Instance
from npgym.npbench.build import write_dataset
from npgym.progress import Progress
from npgym.records import make_record, read_json_file
from npgym.registry import get_task


class NPEngineFormatError(ValueError):
    """A file that is not an NP-ENGINE question set npgym can read; the message says why."""


def _detect_task(question: dict[str, Any]) -> str:
    if "capacity" in question and "items" in question:
        return "Knapsack"
    if question and all(isinstance(row, dict) for row in question.values()):
        return "TSP"
    raise NPEngineFormatError("unrecognised question layout (expected TSP or knapsack)")


def _tsp_fields(question: dict[str, Any]) -> dict[str, Any]:
    n = len(question)
    try:
        rows = [question[str(i)] for i in range(n)]
        distances = [[0 if i == j else rows[i][str(j)] for j in range(n)] for i in range(n)]
    except KeyError as error:
        raise NPEngineFormatError(f"TSP question lacks city {error}") from error
    return {"distances": distances}


def _knapsack_fields(question: dict[str, Any]) -> dict[str, Any]:
    items = question["items"]
    try:
        ordered = [items[str(i)] for i in range(len(items))]
        return {
            "weights": [item["weight"] for item in ordered],
            "values": [item["value"] for item in ordered],
            "capacity": question["capacity"],
        }
    except (KeyError, TypeError) as error:
        raise NPEngineFormatError(f"knapsack question has a malformed item: {error}") from error


def read_np_engine(path: str | Path) -> list[tuple[str, Instance]]:
    """``(question id, instance)`` for every question in an NP-ENGINE file."""
    try:
        data = read_json_file(path)  # bounded in size and nesting
        questions = data["questions"]
    except (ValueError, KeyError, TypeError) as error:
        raise NPEngineFormatError(f"{path}: not an NP-ENGINE question file ({error})") from error
    if not isinstance(questions, dict):
        raise NPEngineFormatError(f"{path}: not an NP-ENGINE question file (no questions object)")
    instances = []
    for question_id, question in questions.items():
        if not isinstance(question, dict):
            raise NPEngineFormatError(f"{path}: {question_id} is not an object")
        task = get_task(_detect_task(question))
        fields = _tsp_fields(question) if task.name == "TSP" else _knapsack_fields(question)
        provenance = {"source": "np-engine", "file": Path(path).name, "question": question_id}
        try:
            instance = task.instance_type(task=task.name, source=provenance, **fields)
        except ValidationError as error:
            raise NPEngineFormatError(f"{path}: {question_id}: {error}") from error
        instances.append((question_id, instance))
    return instances


def import_np_engine_files(
    paths: Iterable[str | Path],
    out_dir: str | Path,
    time_limit: float | None = None,
    progress: bool = False,
) -> str:
    """Import files into an npgym dataset folder; return a one-paragraph summary.

    Every file is read (and refused if malformed) before any reference is computed; then
    ``progress`` shows the references as they are certified.
    """
    paths = list(paths)
    files = [(Path(path), read_np_engine(path)) for path in paths]
    results: list[ItemResult] = []
    lines = []
    total = sum(len(questions) for _, questions in files)
    with Progress(total, "import", enabled=progress) as bar:
        for path, questions in files:
            started = time.perf_counter()
            proven = 0
            for question_id, instance in questions:
                task = get_task(instance.task)
                reference = task.reference(instance, time_limit=time_limit)
                proven += reference.proven_optimal
                record_id = f"np-engine-{path.stem}-{question_id}"
                record = make_record(record_id, task, instance, reference)
                results.append(
                    ItemResult(record, instance.fingerprint(), 0.0, 0.0, reference.certificate)
                )
                bar.update(done=1)
            elapsed = time.perf_counter() - started
            lines.append(
                f"{path}: {len(questions)} instances, {proven} proven optimal, {elapsed:.1f} s"
            )
    sources = [str(Path(path).name) for path in paths]
    write_dataset(Path(out_dir), results, source={"np-engine": sources})
    return "\n".join(lines)
