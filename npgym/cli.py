"""The ``npgym`` command line: list tasks, generate datasets, score completions."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import click
from pydantic import ValidationError
from tqdm import tqdm

from npgym.config import TIERS
from npgym.records import (
    RecordError,
    make_record,
    read_jsonl,
    record_instance,
    record_reference,
    write_jsonl,
)
from npgym.registry import env_id, get_task, list_tasks
from npgym.results import Score
from npgym.seeding import derive_seed


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="npgym")
def main() -> None:
    """npgym: NP-hard optimisation environments with verifiable rewards."""


@main.command("list")
def list_command() -> None:
    """List the registered tasks and their gymnasium ids."""
    for name in list_tasks():
        task = get_task(name)
        ids = ", ".join(env_id(name, tier) for tier in TIERS)
        click.echo(f"{name:<20} {task.category:<20} {task.sense}imise {task.objective_name}")
        click.echo(f"{'':<20} {ids}")


@main.command()
@click.argument("task_name", metavar="TASK")
@click.option("--tier", type=click.Choice(TIERS), help="Tier preset (default: medium).")
@click.option("--difficulty", type=click.FloatRange(0, 1), help="Continuous difficulty instead.")
@click.option(
    "--config", "config_json", help="Generator overrides as JSON, e.g. '{\"n_max\": 80}'."
)
@click.option("-n", "count", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--reference",
    "reference_mode",
    type=click.Choice(["exact", "heuristic", "none"]),
    default="exact",
    show_default=True,
    help="Reference to store: proven optimum, heuristic only, or none.",
)
@click.option("--time-limit", type=click.FloatRange(min=0.1), help="Seconds per exact proof.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="JSONL file.")
def generate(
    task_name: str,
    tier: str | None,
    difficulty: float | None,
    config_json: str | None,
    count: int,
    seed: int,
    reference_mode: str,
    time_limit: float | None,
    output: Path | None,
) -> None:
    """Generate COUNT instances of TASK as JSON lines (id, prompt, instance, reference...).

    Instance seeds are derived from (SEED, TASK, tier, index), so files built from different
    base seeds share no instances by construction.
    """
    task = _task_or_fail(task_name)
    if tier is not None and difficulty is not None:
        raise click.UsageError("give --tier or --difficulty, not both")
    overrides = _parse_overrides(config_json)
    try:
        task.config(tier, difficulty, overrides)
    except (ValidationError, ValueError) as error:
        raise click.BadParameter(str(error), param_hint="--config") from error
    label = tier or (f"d{difficulty:g}" if difficulty is not None else "medium")
    if difficulty is None:
        tier = tier or "medium"

    def rows() -> Iterator[dict[str, Any]]:
        for index in tqdm(range(count), desc=f"{task.name} {label}", unit="inst", disable=None):
            instance_seed = derive_seed(seed, task.name, label, index)
            instance = task.generate(instance_seed, tier, difficulty, overrides)
            reference = None
            if reference_mode != "none":
                reference = task.reference(
                    instance, exact=reference_mode == "exact", time_limit=time_limit
                )
            yield make_record(f"{task.name}-{label}-s{seed}-{index:05d}", task, instance, reference)

    with _open_output(output) as handle:
        written = write_jsonl(rows(), handle)
    if output is not None:
        click.echo(f"wrote {written} instances to {output}", err=True)


@main.command()
@click.argument("data", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--completions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL with id and completion (or completions); default: read them from DATA.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="JSONL file.")
def score(data: Path, completions: Path | None, output: Path | None) -> None:
    """Score completions against the instances in DATA and print a summary.

    Each row of DATA needs task and instance (and a reference, else one is computed). Each
    completion row names an id and holds ``completion`` (text) or ``completions`` (a list).
    """
    try:
        rows = list(read_jsonl(data))
        answers = _completions(rows if completions is None else read_jsonl(completions))
    except RecordError as error:
        raise click.ClickException(str(error)) from error
    known = {row.get("id") for row in rows}
    unknown = [identifier for identifier in answers if identifier not in known]
    if unknown:
        click.echo(f"warning: {len(unknown)} completion ids not in {data}: {unknown[:5]}", err=True)
    scores: list[Score] = []
    missing = 0

    def results() -> Iterator[dict[str, Any]]:
        nonlocal missing
        for row in tqdm(rows, desc="scoring", unit="row", disable=None):
            try:
                task, instance = record_instance(row)
                reference = record_reference(row)
            except RecordError as error:
                raise click.ClickException(str(error)) from error
            texts = answers.get(row.get("id"))
            if texts is None:
                missing += 1
                texts = [""]
            row_scores = [task.score(instance, text, reference) for text in texts]
            scores.extend(row_scores)
            yield {
                "id": row.get("id"),
                "task": task.name,
                "scores": [s.to_dict() for s in row_scores],
            }

    with _open_output(output) as handle:
        write_jsonl(results(), handle)
    if missing:
        click.echo(
            f"warning: {missing} rows had no completion; scored as format failures", err=True
        )
    click.echo(_summary(scores), err=True)


def _completions(rows: Any) -> dict[Any, list[str]]:
    """Map id -> completion texts from rows holding ``completion`` or ``completions``."""
    answers: dict[Any, list[str]] = {}
    for row in rows:
        if "completions" in row:
            texts = row["completions"]
        elif "completion" in row:
            texts = [row["completion"]]
        else:
            continue
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise RecordError(f"row {row.get('id')!r}: completions must be text")
        if row.get("id") in answers:
            raise RecordError(f"completion id {row.get('id')!r} appears twice")
        answers[row.get("id")] = texts
    return answers


def _summary(scores: list[Score]) -> str:
    if not scores:
        return "no completions scored"
    count = len(scores)
    formatted = sum(s.format_ok for s in scores) / count
    feasible = sum(s.feasible for s in scores) / count
    ratio = sum(s.optimality for s in scores) / count
    reward = sum(s.reward for s in scores) / count
    return (
        f"{count} completions: format {formatted:.1%}, success rate {feasible:.1%}, "
        f"average ratio {ratio:.4f}, mean reward {reward:.4f}"
    )


def _task_or_fail(name: str) -> Any:
    try:
        return get_task(name)
    except KeyError as error:
        raise click.BadParameter(str(error.args[0]), param_hint="TASK") from error


def _parse_overrides(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise click.BadParameter(f"not valid JSON: {error.msg}", param_hint="--config") from error
    if not isinstance(value, dict):
        raise click.BadParameter("expected a JSON object", param_hint="--config")
    return value


@contextmanager
def _open_output(path: Path | None) -> Iterator[IO[str]]:
    """Open ``path`` for writing, or use stdout when it is ``None``."""
    if path is None:
        yield sys.stdout
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        yield handle
