"""Dataset rows: one JSON object per instance, the same shape in every file npgym writes.

Columns: ``id``, ``task``, ``tier``, ``seed``, ``difficulty``, ``prompt``, ``instance`` (the
instance's JSON as a string: tasks have different fields, which do not fit one Arrow struct
column), ``reference`` (the :class:`Reference` as a JSON string) and, for filtering without
parsing, ``reference_objective``, ``proven_optimal`` and ``reference_method``.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, NamedTuple, TypedDict

from typing_extensions import NotRequired

from npgym.answer import loads_json
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
            "reference": reference.row_json(),
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


MAX_LINE_BYTES = 64 * 2**20
"""Longest line (64 MiB, its newline aside) of any file npgym reads line by line: dataset rows,
completions, journals. The largest row npgym writes is a TSP instance of the most cities a
config allows (2000: 24.1 MB, its prompt 12 MB; 1.7 MB at difficulty 2, 19 KB at the benchmark
tier); npgym's endpoint sampler never writes a longer completions row (it records the
instance as missing instead). A longer line is refused after reading at most this many bytes of
it (``/dev/zero``, a FIFO that never sends a newline), with an error naming the file and the
line; JSON decoding of a line may still take several times its size in memory."""
MAX_JSON_FILE_BYTES = MAX_LINE_BYTES
"""Largest file npgym decodes whole as one JSON document (an instance file, a report, an
imported question file); a larger one is refused after reading this many bytes."""


class Line(NamedTuple):
    """One line of a file: its number (from 1), its text without the newline, and whether a
    newline ended it (a last line without one may have been cut short by a crash)."""

    number: int
    text: str
    terminated: bool


_READ_CHUNK = 1 << 20
"""Bytes asked of the file at a time while a line is gathered."""


def _raw_lines(path: str | Path, max_bytes: int | None) -> Iterator[tuple[int, bytearray, bool]]:
    """``(number, bytes with the newline, terminated)`` of each line, holding at most
    ``max_bytes + 1`` bytes of a line (default :data:`MAX_LINE_BYTES`) whatever the file is (a
    device, a FIFO): a line is gathered in chunks of at most :data:`_READ_CHUNK` bytes."""
    max_bytes = MAX_LINE_BYTES if max_bytes is None else max_bytes
    with open(path, "rb") as handle:
        number = 0
        while True:
            line = bytearray()
            while len(line) <= max_bytes:
                piece = handle.readline(min(_READ_CHUNK, max_bytes + 1 - len(line)))
                line += piece
                if not piece or piece.endswith(b"\n"):
                    break
            if not line:
                return
            number += 1
            terminated = line.endswith(b"\n")
            if len(line) > max_bytes and not terminated:
                raise RecordError(
                    f"{path}:{number}: line longer than {max_bytes:,} bytes; refused after "
                    "reading that much (not a JSON-lines file?)"
                )
            yield number, line, terminated


def _text(path: str | Path, number: int, raw: bytearray, terminated: bool) -> str:
    """A line's bytes as text, without its newline; invalid UTF-8 raises naming the line. A
    last line without a newline that ends inside a character (cut short by a crash) loses the
    incomplete character: its JSON then fails as any cut line does."""
    body = memoryview(raw)[: len(raw) - terminated]
    try:
        text = str(body, "utf-8")
    except UnicodeDecodeError as error:
        if not terminated and error.end == len(body) and error.reason == "unexpected end of data":
            return _text(path, number, raw[: error.start], terminated)
        raise RecordError(
            f"{path}:{number}: not UTF-8 text (byte {error.start + 1} of the line)"
        ) from None
    return text[1:] if number == 1 and text.startswith("\ufeff") else text  # a BOM


def read_lines(path: str | Path, max_bytes: int | None = None) -> Iterator[Line]:
    """Lines of a UTF-8 text file, each at most ``max_bytes`` bytes (default
    :data:`MAX_LINE_BYTES`).

    Only ``\\n`` ends a line (``\\r`` before it is left for the JSON parser, which skips
    it): text written with ``ensure_ascii=False`` may hold U+2028 or U+0085 inside a string,
    which ``str.splitlines`` would cut. A line that is too long or not UTF-8 raises
    :class:`RecordError` naming the file and the line.
    """
    for number, raw, terminated in _raw_lines(path, max_bytes):
        yield Line(number, _text(path, number, raw, terminated), terminated)


def read_jsonl(path: str | Path, max_bytes: int | None = None) -> Iterator[dict[str, Any]]:
    """Rows of a JSON-lines file; a malformed line raises :class:`RecordError` naming it.

    Lines are read by :func:`read_lines` (at most ``max_bytes`` each) and decoded by
    :func:`npgym.answer.loads_json` (nested at most :data:`npgym.answer.MAX_JSON_DEPTH` deep).
    """
    for number, line, _ in read_lines(path, max_bytes):
        if not line.strip():
            continue
        yield json_row(line, f"{path}:{number}")


def json_row(line: str, where: str) -> dict[str, Any]:
    """The JSON object of one line; :class:`RecordError` naming ``where`` otherwise."""
    try:
        row = loads_json(line)
    except ValueError as error:
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        raise RecordError(f"{where}: not valid JSON ({reason})") from None
    if not isinstance(row, dict):
        raise RecordError(f"{where}: expected a JSON object per line")
    return row


def read_json_file(path: str | Path, max_bytes: int | None = None) -> Any:
    """The JSON document in ``path``, read only when at most ``max_bytes`` bytes long (default
    :data:`MAX_JSON_FILE_BYTES`) and nested at most :data:`npgym.answer.MAX_JSON_DEPTH` deep;
    :class:`RecordError` naming the file otherwise."""
    max_bytes = MAX_JSON_FILE_BYTES if max_bytes is None else max_bytes
    with open(path, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise RecordError(
            f"{path}: larger than {max_bytes:,} bytes; refused after reading that much"
        )
    try:
        return loads_json(data.removeprefix(b"\xef\xbb\xbf"))
    except UnicodeDecodeError as error:
        raise RecordError(f"{path}: not UTF-8 text (byte {error.start + 1})") from None
    except ValueError as error:
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        raise RecordError(f"{path}: not valid JSON ({reason})") from None


def complete_lines(path: str | Path, max_bytes: int | None = None) -> list[str]:
    """Lines of an append-only JSON-lines file, dropping a last line cut short by a crash.

    The cut line is also removed from the file (truncated away, so the next append starts on a
    fresh line); only a regular file is changed, never a link, a device or a FIFO. Lines are
    bounded as in :func:`read_lines`.
    """
    lines: list[str] = []
    end = 0
    for number, raw, terminated in _raw_lines(path, max_bytes):
        if not terminated:  # the last line, cut short
            _truncate_regular(path, end)
            break
        lines.append(_text(path, number, raw, terminated))
        end += len(raw)
    return lines


def _truncate_regular(path: str | Path, size: int) -> None:
    """Cut ``path`` to ``size`` bytes when it is a regular file and not a link; else raise."""
    try:
        descriptor = os.open(path, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as error:
        raise RecordError(
            f"{path}: its last line is cut short, and it cannot be fixed ({error.strerror})"
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise RecordError(f"{path}: its last line is cut short, and it is not a regular file")
        os.ftruncate(descriptor, size)
    finally:
        os.close(descriptor)


def write_jsonl(rows: Iterable[Mapping[str, Any]], handle: IO[str]) -> int:
    """Write rows as compact JSON lines; return how many were written."""
    count = 0
    for row in rows:
        handle.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
        count += 1
    return count
