"""Export built datasets in the shapes that Hugging Face datasets, verl and TRL read.

- ``jsonl`` / ``parquet``: npgym's rows as they are (instance and reference as JSON strings,
  since tasks have different fields that do not fit one Arrow struct column).
- ``verl`` / ``trl``: the trainer layouts of :mod:`npgym.trainer_rows`.

Every format carries the references' certificates as compact JSON text (``None`` for a row
without one): a ``certificate`` column (``extra_info.certificate`` for verl), joined from the
dataset folder's sidecar by ``npgym export`` (:func:`npgym.npbench.certificates.with_certificates`).

Every row's prompt is rendered again from its instance before anything is written, even with
``--no-verify``: a prompt that is not exactly the one its instance renders (edited, say, to leak
the answer into what a trainer shows the model) is refused (:func:`check_prompts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from npgym.outputs import open_binary_output, open_output, output_target
from npgym.progress import Progress
from npgym.records import RecordError, Row, load_row, write_jsonl
from npgym.trainer_rows import ABILITY, TOOL_NAME, chat, trl_row, verl_row

if TYPE_CHECKING:
    import pyarrow as pa

ExportFormat = Literal["jsonl", "parquet", "verl", "trl"]
FORMATS: tuple[str, ...] = ("jsonl", "parquet", "verl", "trl")
__all__ = [
    "ABILITY",
    "FORMATS",
    "ExportFormat",
    "chat",
    "check_prompts",
    "export_rows",
    "trl_row",
    "verl_row",
]


class LeakedPromptError(ValueError):
    """A row whose prompt is not the one its instance renders."""


def check_prompts(rows: Iterable[Row]) -> None:
    """Refuse rows whose ``prompt`` is not, byte for byte, what their task renders from their
    instance (:class:`LeakedPromptError` naming the first): a prompt reaches a model, so it is
    derived from the instance, never taken from the file."""
    for row in rows:
        try:
            task, instance, _ = load_row(row)
        except RecordError as error:
            raise ValueError(str(error)) from None
        if row.get("prompt") != task.prompt(instance):
            raise LeakedPromptError(
                f"row {row.get('id')!r}: its prompt is not the one its instance renders (edited: "
                "it may leak the answer); rebuild the dataset, nothing was written"
            )


def _pyarrow() -> ModuleType:
    """pyarrow, imported when a parquet file is written (an extra: ``npgym[parquet]``)."""
    try:
        import pyarrow
        import pyarrow.parquet  # makes pyarrow.parquet an attribute
    except ImportError as error:
        raise ImportError(
            "writing parquet needs pyarrow: pip install 'npgym[parquet]' (or export as jsonl)"
        ) from error
    return pyarrow


def _chat_type() -> pa.DataType:
    pa = _pyarrow()
    return pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))


def export_rows(
    rows: Iterable[Row],
    fmt: ExportFormat,
    output: str | Path,
    split: str = "test",
    multi_turn: bool = False,
    progress: bool = False,
    conversational: bool = True,
) -> int:
    """Write ``rows`` to ``output`` in ``fmt``; return how many rows were written.

    ``conversational=False`` (``npgym export --plain``) writes TRL prompts as plain text for base
    models without a chat template (``jsonl`` and ``parquet`` rows hold plain text anyway). verl
    always applies the tokenizer's chat template to its prompts, so verl rows stay chat rows.

    ``trl`` writes JSON lines when ``output`` ends in ``.jsonl``, parquet otherwise;
    ``multi_turn`` (verl) adds the tool arguments of :mod:`npgym.integrations.verl_tool`.
    ``progress`` shows the rows converted (a bar on a terminal, periodic lines otherwise).
    """
    if fmt == "verl" and not conversational:
        raise ValueError(
            "verl applies the tokenizer's chat template to every prompt: export verl rows as chat "
            "rows and give a base model a chat template"
        )
    rows = list(rows)
    check_prompts(rows)
    with Progress(len(rows), "export", enabled=progress) as bar:
        written = _export(rows, fmt, output, split, multi_turn, bar, conversational)
    return written


def _export(
    rows: list[Row],
    fmt: ExportFormat,
    output: str | Path,
    split: str,
    multi_turn: bool,
    bar: Progress,
    conversational: bool = True,
) -> int:
    """:func:`export_rows` once the rows are in memory; ``bar`` counts rows as they convert."""
    rows = [*bar.track(rows)] if fmt in ("jsonl", "parquet") else rows
    path = Path(output)
    output_target(path)  # refused before the rows are converted, not after
    if fmt == "verl":
        verl = [
            _verl_with_certificate(verl_row(row, index, split, multi_turn), row)
            for index, row in enumerate(bar.track(rows))
        ]
        _write_parquet(verl, path, _verl_schema(rows, multi_turn))
    elif fmt == "trl":
        trl = [
            {**trl_row(row, conversational), "certificate": row.get("certificate")}
            for row in bar.track(rows)
        ]
        if path.suffix == ".jsonl":
            _write_jsonl(trl, path)
        else:
            _write_parquet(trl, path, _trl_schema(rows, conversational))
    elif fmt == "parquet":
        _write_parquet(rows, path, _record_schema(rows))
    elif fmt == "jsonl":
        _write_jsonl(rows, path)
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return len(rows)


def _verl_with_certificate(converted: dict[str, Any], row: Row) -> dict[str, Any]:
    """A verl row with the certificate in its ``extra_info``."""
    converted["extra_info"]["certificate"] = row.get("certificate")
    return converted


def _write_jsonl(rows: Sequence[Mapping[str, Any]], path: Path) -> None:
    with open_output(path) as handle:
        write_jsonl(rows, handle)


def _write_parquet(rows: Sequence[Mapping[str, Any]], path: Path, schema: pa.Schema) -> None:
    pa = _pyarrow()
    table = pa.Table.from_pylist(list(rows), schema=schema)
    with open_binary_output(path) as handle:
        pa.parquet.write_table(table, handle)


def _objective_type(rows: list[Row]) -> pa.DataType:
    """int64 when every reference objective is an integer (all npgym tasks), else float64."""
    pa = _pyarrow()
    values = [row.get("reference_objective") for row in rows]
    if all(value is None or isinstance(value, int) for value in values):
        return pa.int64()
    return pa.float64()


def _record_schema(rows: list[Row]) -> pa.Schema:
    """npgym's row columns, plus ``original_id``, ``variant`` and ``transforms`` when the rows
    include variants (``bench build --variants``)."""
    pa = _pyarrow()
    variant_columns = [
        ("original_id", pa.string()),
        ("variant", pa.int64()),
        ("transforms", pa.list_(pa.string())),
    ]
    has_variants = any("original_id" in row for row in rows)
    return pa.schema(
        [
            ("id", pa.string()),
            ("task", pa.string()),
            ("tier", pa.string()),
            ("seed", pa.int64()),
            ("difficulty", pa.float64()),
            ("prompt", pa.string()),
            ("instance", pa.string()),
            ("reference", pa.string()),
            ("reference_objective", _objective_type(rows)),
            ("proven_optimal", pa.bool_()),
            ("reference_method", pa.string()),
            *(variant_columns if has_variants else []),
            ("certificate", pa.string()),
        ]
    )


def _verl_schema(rows: list[Row], multi_turn: bool) -> pa.Schema:
    pa = _pyarrow()
    fields = [
        ("index", pa.int64()),
        ("id", pa.string()),
        ("split", pa.string()),
        ("task", pa.string()),
        ("tier", pa.string()),
        ("category", pa.string()),
        ("instance", pa.string()),
        ("reference", pa.string()),
        ("certificate", pa.string()),
    ]
    columns = [
        ("data_source", pa.string()),
        ("prompt", _chat_type()),
        ("ability", pa.string()),
        (
            "reward_model",
            pa.struct([("style", pa.string()), ("ground_truth", _objective_type(rows))]),
        ),
    ]
    if multi_turn:
        create = pa.struct(
            [("task", pa.string()), ("instance", pa.string()), ("reference", pa.string())]
        )
        tool = pa.struct([(TOOL_NAME, pa.struct([("create_kwargs", create)]))])
        fields += [("need_tools_kwargs", pa.bool_()), ("tools_kwargs", tool)]
        columns.append(("agent_name", pa.string()))
    return pa.schema([*columns, ("extra_info", pa.struct(fields))])


def _trl_schema(rows: list[Row], conversational: bool = True) -> pa.Schema:
    pa = _pyarrow()
    return pa.schema(
        [
            ("prompt", _chat_type() if conversational else pa.string()),
            ("id", pa.string()),
            ("task", pa.string()),
            ("tier", pa.string()),
            ("instance", pa.string()),
            ("reference", pa.string()),
            ("reference_objective", _objective_type(rows)),
            ("certificate", pa.string()),
        ]
    )
