"""Export built datasets in the shapes that Hugging Face datasets, verl and TRL read.

- ``jsonl`` / ``parquet``: npgym's rows as they are (instance and reference as JSON strings,
  since tasks have different fields that do not fit one Arrow struct column).
- ``verl``: RL parquet with ``data_source`` (the gym id), ``prompt`` (chat list), ``ability``,
  ``reward_model {style: "rule", ground_truth: reference objective}`` and ``extra_info {index,
  id, task, tier, instance, reference}`` for ``npgym.integrations.verl.compute_score``.
- ``trl``: conversational ``prompt`` plus the columns the npgym TRL reward functions read
  (``task``, ``instance``, ``reference``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from npgym.integrations.verl import TOOL_NAME, tools_kwargs
from npgym.records import write_jsonl
from npgym.registry import env_id, get_task

if TYPE_CHECKING:
    import pyarrow as pa

ExportFormat = Literal["jsonl", "parquet", "verl", "trl"]
FORMATS: tuple[str, ...] = ("jsonl", "parquet", "verl", "trl")
ABILITY = "combinatorial_optimization"


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


def chat(prompt: str) -> list[dict[str, str]]:
    """A prompt as a one-message chat (the conversational format of TRL and verl)."""
    return [{"role": "user", "content": prompt}]


def data_source(row: dict[str, Any]) -> str:
    """The gym id of a row's task and tier (``npgym/<Task>`` when it has no tier)."""
    tier = row.get("tier")
    return env_id(row["task"], tier) if tier else f"npgym/{row['task']}"


def verl_row(
    row: dict[str, Any], index: int, split: str, multi_turn: bool = False
) -> dict[str, Any]:
    """One row in verl's RL dataset layout (with tool arguments for multi-turn repair)."""
    converted = {
        "data_source": data_source(row),
        "prompt": chat(row["prompt"]),
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": row.get("reference_objective")},
        "extra_info": {
            "index": index,
            "id": row["id"],
            "split": split,
            "task": row["task"],
            "tier": row.get("tier"),
            "category": get_task(row["task"]).category,
            "instance": row["instance"],
            "reference": row.get("reference"),
        },
    }
    if multi_turn:
        converted["agent_name"] = "tool_agent"
        converted["extra_info"] |= {"need_tools_kwargs": True, "tools_kwargs": tools_kwargs(row)}
    return converted


def trl_row(row: dict[str, Any]) -> dict[str, Any]:
    """One row for TRL's GRPOTrainer: chat prompt plus what the reward functions need."""
    return {
        "prompt": chat(row["prompt"]),
        "id": row["id"],
        "task": row["task"],
        "tier": row.get("tier"),
        "instance": row["instance"],
        "reference": row.get("reference"),
        "reference_objective": row.get("reference_objective"),
    }


def export_rows(
    rows: Iterable[dict[str, Any]],
    fmt: ExportFormat,
    output: str | Path,
    split: str = "test",
    multi_turn: bool = False,
) -> int:
    """Write ``rows`` to ``output`` in ``fmt``; return how many rows were written.

    ``trl`` writes JSON lines when ``output`` ends in ``.jsonl``, parquet otherwise;
    ``multi_turn`` (verl) adds the tool arguments of :mod:`npgym.integrations.verl_tool`.
    """
    rows = list(rows)
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "verl":
        converted = [verl_row(row, index, split, multi_turn) for index, row in enumerate(rows)]
        _write_parquet(converted, path, _verl_schema(rows, multi_turn))
    elif fmt == "trl":
        converted = [trl_row(row) for row in rows]
        if path.suffix == ".jsonl":
            _write_jsonl(converted, path)
        else:
            _write_parquet(converted, path, _trl_schema(rows))
    elif fmt == "parquet":
        _write_parquet(rows, path, _record_schema(rows))
    elif fmt == "jsonl":
        _write_jsonl(rows, path)
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return len(rows)


def _write_jsonl(rows: list[dict[str, Any]], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl(rows, handle)


def _write_parquet(rows: list[dict[str, Any]], path: Path, schema: pa.Schema) -> None:
    pa = _pyarrow()
    pa.parquet.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _objective_type(rows: list[dict[str, Any]]) -> pa.DataType:
    """int64 when every reference objective is an integer (all npgym tasks), else float64."""
    pa = _pyarrow()
    values = [row.get("reference_objective") for row in rows]
    if all(value is None or isinstance(value, int) for value in values):
        return pa.int64()
    return pa.float64()


def _record_schema(rows: list[dict[str, Any]]) -> pa.Schema:
    pa = _pyarrow()
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
        ]
    )


def _verl_schema(rows: list[dict[str, Any]], multi_turn: bool) -> pa.Schema:
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


def _trl_schema(rows: list[dict[str, Any]]) -> pa.Schema:
    pa = _pyarrow()
    return pa.schema(
        [
            ("prompt", _chat_type()),
            ("id", pa.string()),
            ("task", pa.string()),
            ("tier", pa.string()),
            ("instance", pa.string()),
            ("reference", pa.string()),
            ("reference_objective", _objective_type(rows)),
        ]
    )
