"""The ``npgym`` command line: list tasks, generate datasets, score completions."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click
from pydantic import ValidationError

from npgym.config import MAX_DIFFICULTY, TIERS, validation_summary
from npgym.datasets import (
    BENCH_TASKS,
    BENCH_VERSION,
    MAX_TIME_LIMIT,
    Backend,
    DatasetError,
    DatasetSpec,
    ReferenceMode,
    Split,
    make_rows,
)
from npgym.integrations.serving import (
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MESSAGE_TIMEOUT_S,
    DEFAULT_WORKERS,
    MAX_TIMEOUT_S,
    MAX_WORKERS,
)
from npgym.progress import Progress
from npgym.records import RecordError, read_jsonl, write_jsonl
from npgym.registry import env_id, get_task, list_tasks
from npgym.reward import DEFAULT_PRESET, PRESETS

if TYPE_CHECKING:
    from npgym.npbench.agents import Agent
    from npgym.npbench.export import ExportFormat

_TIME_LIMIT = click.FloatRange(min=0.1, max=MAX_TIME_LIMIT)
"""Work budget of one exact proof, in nominal seconds (at most a day)."""


EXPECTED_ERRORS = (OSError, ValueError, DatasetError, RecursionError)
"""What a command's work can fail with on bad input or a bad machine (a full disk, a read-only
folder, a malformed file or value, a dataset that cannot be made): said in one line. Anything
else is a bug and keeps its traceback."""


class _Commands(click.Group):
    """The command group: an expected error becomes ``npgym: error: ...`` and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EXPECTED_ERRORS as error:
            raise click.ClickException(_one_line(error)) from error


def _one_line(error: BaseException) -> str:
    """The error's message on one line, naming the file for an OSError."""
    if isinstance(error, OSError) and error.strerror:
        where = f": {error.filename}" if error.filename else ""
        return f"{error.strerror}{where}"
    if isinstance(error, RecursionError):
        return "input nested too deeply to read"
    if isinstance(error, ValidationError):
        return validation_summary(error)
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 2000 else text[:1997] + "..."


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="npgym")
def main() -> None:
    """npgym: NP-hard optimisation environments with verifiable rewards."""


@main.command("list")
def list_command() -> None:
    """List the registered tasks, then the task families, and their gymnasium ids."""
    from npgym.families import family_env_names

    for name in (*list_tasks(), *family_env_names()):
        task = get_task(name)
        ids = ", ".join(env_id(name, tier) for tier in TIERS)
        click.echo(f"{name:<20} {task.category:<20} {task.sense}imise {task.objective_name}")
        click.echo(f"{'':<20} {ids}")


@main.command()
@click.argument("task_name", metavar="TASK")
@click.option("--tier", type=click.Choice(TIERS), help="Tier preset (default: medium).")
@click.option(
    "--difficulty", type=click.FloatRange(0, MAX_DIFFICULTY), help="Continuous difficulty instead."
)
@click.option(
    "--overrides",
    "--config",
    "overrides_json",
    help="Generator config overrides as JSON, e.g. '{\"n_max\": 80}'.",
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
@click.option("--time-limit", type=_TIME_LIMIT, help="Seconds per exact proof.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="JSONL file.")
def generate(
    task_name: str,
    tier: str | None,
    difficulty: float | None,
    overrides_json: str | None,
    count: int,
    seed: int,
    reference_mode: ReferenceMode,
    time_limit: float | None,
    workers: int,
    output: Path | None,
) -> None:
    """Generate COUNT instances of TASK as JSON lines (id, prompt, instance, reference...).

    Instance seeds are derived from (SEED, TASK, tier, index), so files built from different
    base seeds share no instances by construction; the instances are distinct, and one that
    is also in NP-Bench is redrawn.
    """
    task = _task_or_fail(task_name)
    if tier is not None and difficulty is not None:
        raise click.UsageError("give --tier or --difficulty, not both")
    try:
        spec = DatasetSpec(
            split="generate",
            tasks=(task.name,),
            count=count,
            mix=None if difficulty is not None else {tier or "medium": 1.0},
            difficulty=difficulty,
            overrides=_parse_overrides(overrides_json),
            seed=seed,
            reference=reference_mode,
            time_limit=time_limit,
        )
        rows = make_rows(spec, workers=workers)
        label = tier or (f"d{difficulty:g}" if difficulty is not None else "medium")
        with (
            Progress(count, f"{task.name} {label}") as meter,
            _open_output(output) as handle,
        ):
            written = write_jsonl((result.record for result in meter.track(rows)), handle)
    except ValidationError as error:
        raise click.BadParameter(validation_summary(error), param_hint="--overrides") from error
    except DatasetError as error:
        raise click.ClickException(str(error)) from error
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
    from npgym.npbench.evaluate import (
        CompletionsError,
        collect_completions,
        read_completions,
        score_rows,
        summarize,
    )

    try:
        rows = list(read_jsonl(data))
        if completions is None:
            inline = ((f"{data} row {row.get('id')!r}", row) for row in rows)
            found = collect_completions(inline, skip_rows_without_text=True)
        else:
            found = read_completions(completions)
        scored = score_rows(rows, found, progress=True)
    except (RecordError, CompletionsError) as error:
        raise click.ClickException(str(error)) from error
    for warning in found.warnings:
        click.echo(f"warning: {warning}", err=True)
    if scored.unknown:
        click.echo(
            f"warning: {len(scored.unknown)} completion ids not in {data}: {scored.unknown[:5]}",
            err=True,
        )
    with _open_output(output) as handle:
        write_jsonl(
            (
                {"id": row.id, "task": row.task, "scores": [s.to_dict() for s in row.scores]}
                for row in scored.rows
            ),
            handle,
        )
    if scored.missing:
        click.echo(
            f"warning: {len(scored.missing)} rows had no completion; not scored (empty scores)",
            err=True,
        )
    scores = [score for row in scored.rows for score in row.scores]
    if scores:
        overall = summarize([row.scores for row in scored.rows])
        click.echo(
            f"{len(scores)} completions (averaged per instance): format "
            f"{overall.format_rate:.1%}, success rate {overall.success_rate:.1%}, "
            f"average ratio {overall.average_ratio:.4f}, mean reward {overall.mean_reward:.4f}",
            err=True,
        )


@main.group()
def bench() -> None:
    """Build NP-Bench (or a training set) with certified references."""


@bench.command("build")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option(
    "--n",
    "count",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Instances per task.",
)
@click.option(
    "--tasks",
    help="Comma-separated task names (default: the bench version's ten; plug-ins when named).",
)
@click.option("--tier", type=click.Choice(TIERS), help="One tier (default: benchmark).")
@click.option("--mix", help="Tier mix for training sets, e.g. easy:5,medium:4,hard:1.")
@click.option(
    "--split",
    type=click.Choice(["bench", "train"]),
    default="bench",
    show_default=True,
    help="Seed stream; a train build may not contain benchmark instances.",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--reference",
    "reference_mode",
    type=click.Choice(["exact", "heuristic", "none"]),
    default="exact",
    show_default=True,
)
@click.option("--time-limit", type=_TIME_LIMIT, help="Seconds per exact proof.")
@click.option("--workers", type=click.IntRange(min=1), help="Processes (default: all cores).")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option("--ray-address", help="Ray cluster address (default: start a local Ray).")
@click.option(
    "--exclude",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Built dataset whose instances must not appear (repeatable).",
)
@click.option("--drop-overlap", is_flag=True, help="Leave overlapping instances out instead.")
@click.option(
    "--variants",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Optimum-keeping variants to add per instance (after the overlap check).",
)
@click.option(
    "--allow-unproven",
    is_flag=True,
    help="Exit 0 even if an exact reference could not be proven optimal (it is kept, marked).",
)
@click.option(
    "--bench-version",
    type=click.IntRange(min=1, max=BENCH_VERSION),
    default=BENCH_VERSION,
    show_default=True,
    help="NP-Bench version whose generators draw (1 rebuilds the first release byte for byte).",
)
def bench_build(
    output: Path,
    count: int,
    tasks: str | None,
    tier: str | None,
    mix: str | None,
    split: Split,
    seed: int,
    reference_mode: ReferenceMode,
    time_limit: float | None,
    workers: int | None,
    backend: Backend,
    ray_address: str | None,
    exclude: tuple[Path, ...],
    drop_overlap: bool,
    variants: int,
    allow_unproven: bool,
    bench_version: int,
) -> None:
    """Build instances with references into OUTPUT (resumes an interrupted build; a finished
    one is verified and left as it is)."""
    from npgym.npbench.build import BuildSpec, build

    if tier and mix:
        raise click.UsageError("give --tier or --mix, not both")
    try:
        spec = BuildSpec(
            split=split,
            tasks=tuple(tasks.split(",")) if tasks else BENCH_TASKS[bench_version],
            count=count,
            mix=_parse_mix(mix) if mix else {tier or "benchmark": 1.0},
            seed=seed,
            reference=reference_mode,
            time_limit=time_limit,
            bench_version=bench_version,
        )
        summary = build(
            spec,
            output,
            workers=workers,
            backend=backend,
            ray_address=ray_address,
            exclude=exclude,
            drop_overlap=drop_overlap,
            variants=variants,
        )
    except ValidationError as error:
        raise click.ClickException(validation_summary(error)) from error
    except (KeyError, DatasetError) as error:
        raise click.ClickException(str(error)) from error
    if summary.already_built:
        click.echo(f"{output} already holds this build, verified: nothing to do", err=True)
        _fail_on_unproven(output, spec, allow_unproven)
        return
    click.echo(
        f"built {summary.computed} instances ({summary.resumed} resumed) in "
        f"{summary.wall_seconds:.1f} s; generation {summary.generation_seconds:.1f} s, "
        f"references {summary.reference_seconds:.1f} s (summed over workers)",
        err=True,
    )
    for name, task in summary.manifest["tasks"].items():
        click.echo(
            f"  {name:<20} {task['count']:>5} instances, "
            f"{task['proven_optimal']:.0%} proven optimal",
            err=True,
        )
    _fail_on_unproven(output, spec, allow_unproven)


def _fail_on_unproven(folder: Path, spec: DatasetSpec, allow: bool) -> None:
    """Exit non-zero when an exact build kept references that are not proven optimal.

    They stay in the files, marked (``proven_optimal: false``, ``method: heuristic``, their bound
    and gap), but a benchmark whose "optimum" is not one must not pass for a finished build.
    """
    if allow or spec.reference != "exact":
        return
    from npgym.npbench.build import read_dataset

    unproven = [
        row["id"] for row in read_dataset(folder, verify=False) if not row.get("proven_optimal")
    ]
    if unproven:
        raise click.ClickException(
            f"{len(unproven)} references are not proven optimal (first: "
            f"{', '.join(unproven[:5])}); they are kept with their bound and gap. Raise "
            "--time-limit, or pass --allow-unproven to accept them"
        )


@main.command("export")
@click.argument("dataset", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["jsonl", "parquet", "verl", "trl"]), required=True
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--split-name", default="test", show_default=True, help="verl extra_info.split.")
@click.option("--multi-turn", is_flag=True, help="verl: tool-agent rows for multi-turn repair.")
@click.option(
    "--plain", is_flag=True, help="trl: plain-text prompts for base models (no chat template)."
)
@click.option("--no-verify", is_flag=True, help="Skip checking DATASET against its manifest.")
def export_command(
    dataset: Path,
    fmt: ExportFormat,
    output: Path,
    split_name: str,
    multi_turn: bool,
    plain: bool,
    no_verify: bool,
) -> None:
    """Export a built DATASET folder as one file for datasets, verl or TRL (checked against
    its manifest first, unless --no-verify)."""
    from npgym.npbench.build import BuildError, dataset_files, read_dataset, verify_dataset
    from npgym.npbench.export import export_rows

    if output.resolve() in {path.resolve() for path in dataset_files(dataset)}:
        raise click.BadParameter(
            f"{output} is one of the dataset's own files; write the export elsewhere",
            param_hint="-o",
        )
    try:
        rows = (
            read_dataset(dataset, verify=False)
            if no_verify
            else verify_dataset(dataset, progress=True)
        )
        written = export_rows(
            rows,
            fmt,
            output,
            split=split_name,
            multi_turn=multi_turn,
            progress=True,
            conversational=not plain,
        )
    except (BuildError, RecordError, ValueError) as error:
        raise click.ClickException(str(error)) from error
    click.echo(f"wrote {written} rows to {output}", err=True)


@main.command("show")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("--answer", help="A completion or just the answer, e.g. '[0, 2, 1, 0]'.")
@click.option("--reference", "reference_answer", is_flag=True, help="Draw the reference instead.")
@click.option("--row", "row_id", help="Row id, for a JSONL file or a built dataset folder.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
def show_command(
    source: Path, answer: str | None, reference_answer: bool, row_id: str | None, output: Path
) -> None:
    """Draw the instance in SOURCE and an answer to it as a PNG, the mistake marked in red.

    SOURCE is an instance JSON file, a JSONL file of rows (npgym generate) or a built dataset
    folder (npgym bench build).
    """
    from npgym.npbench.show import SourceError, show

    try:
        written = show(source, output, answer, row_id=row_id, reference_answer=reference_answer)
    except SourceError as error:
        raise click.ClickException(str(error)) from error
    click.echo(f"wrote {written}", err=True)


@main.group("import")
def import_group() -> None:
    """Import instances published elsewhere, with npgym-certified references."""


@import_group.command("np-engine")
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--time-limit", type=_TIME_LIMIT, help="Seconds per exact proof.")
def import_np_engine(files: tuple[Path, ...], output: Path, time_limit: float | None) -> None:
    """Read NP-ENGINE question FILES, certify references, write an npgym dataset folder."""
    from npgym.npbench.importers import NPEngineFormatError, import_np_engine_files

    try:
        summary = import_np_engine_files(files, output, time_limit=time_limit, progress=True)
    except NPEngineFormatError as error:
        raise click.ClickException(str(error)) from error
    click.echo(summary, err=True)


@main.command("eval")
@click.argument(
    "dataset", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--completions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL rows: id and completion (or completions, k samples).",
)
@click.option(
    "--agent",
    type=click.Choice(["random", "greedy", "heuristic"]),
    help="Built-in baseline instead of a model.",
)
@click.option("--endpoint", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1.")
@click.option("--model", help="Model name at the endpoint.")
@click.option(
    "--samples",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Completions per instance (agents and endpoints).",
)
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=600,
    show_default=True,
    help="Seconds per request.",
)
@click.option("--max-retries", type=click.IntRange(min=0), default=4, show_default=True)
@click.option("--system-prompt", help="System message sent before each problem.")
@click.option("--temperature", type=float, default=0.6, show_default=True)
@click.option("--top-p", type=click.FloatRange(0, 1), help="Nucleus sampling.")
@click.option("--max-tokens", type=click.IntRange(min=1), help="Completion token limit.")
@click.option("--seed", "sampling_seed", type=int, help="Sampling seed sent to the server.")
@click.option(
    "--extra-body",
    help="Extra request fields as JSON (vLLM / SGLang options), e.g. '{\"top_k\": 20}'.",
)
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Exit 0 even when some instances got no answer (they are reported as missing).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Report folder (default: <dataset>/eval-<source>).",
)
@click.option("--no-verify", is_flag=True, help="Skip checking DATASET against its manifest.")
@click.option(
    "--deep",
    is_flag=True,
    help="Also solve every reference again and compare (about 14 CPU-s for NP-Bench).",
)
@click.option(
    "--reward",
    "reward_preset",
    type=click.Choice(sorted(PRESETS)),
    default=DEFAULT_PRESET,
    show_default=True,
    help="Reward preset for the mean reward (Success Rate and Average Ratio use np-engine).",
)
@click.option(
    "--compare",
    nargs=2,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Show two report.json files side by side instead.",
)
def eval_command(
    dataset: Path | None,
    completions: Path | None,
    agent: Agent | None,
    endpoint: str | None,
    model: str | None,
    samples: int,
    concurrency: int,
    timeout: float,
    max_retries: int,
    system_prompt: str | None,
    temperature: float,
    top_p: float | None,
    max_tokens: int | None,
    sampling_seed: int | None,
    extra_body: str | None,
    allow_missing: bool,
    output: Path | None,
    reward_preset: str,
    no_verify: bool,
    deep: bool,
    compare: tuple[Path, Path] | None,
) -> None:
    """Score completions on a built DATASET: Success Rate and Average Ratio per task, category
    and overall; writes report.json, report.md and report.png."""
    from npgym.npbench import client as sampler
    from npgym.npbench import evaluate as evaluation
    from npgym.npbench.build import BuildError, load_manifest, read_dataset

    if compare:
        click.echo(evaluation.compare(*(evaluation.read_report(path) for path in compare)))
        return
    sources = [s for s in (completions, agent, endpoint) if s is not None]
    if dataset is None or len(sources) != 1:
        raise click.UsageError("give DATASET and one of --completions, --agent or --endpoint")
    if endpoint and not model:
        raise click.UsageError("--endpoint needs --model")
    try:
        rows = list(read_dataset(dataset, verify=not no_verify))
        verification = _certify(dataset, rows, no_verify=no_verify, deep=deep)
        source = str(completions.name if completions else agent or model)
        folder = output or dataset / f"eval-{_slug(source)}"
        if completions is not None:
            texts = evaluation.read_completions(completions)
        elif agent is not None:
            from npgym.npbench.agents import agent_completions

            texts = agent_completions(rows, agent, samples=samples)
            _save_completions(texts.texts, folder / "completions.jsonl")
        else:
            options = sampler.SamplingOptions(
                model=str(model),
                samples=samples,
                system_prompt=system_prompt,
                temperature=temperature,
                top_p=top_p,
                max_tokens=max_tokens,
                seed=sampling_seed,
                extra_body=_parse_json_object(extra_body, "--extra-body"),
                concurrency=concurrency,
                timeout=timeout,
                max_retries=max_retries,
            )
            sampler.check_endpoint(str(endpoint), str(model))
            sampled = folder / "completions.jsonl"
            run = sampler.sample_endpoint(rows, sampled, endpoint=str(endpoint), options=options)
            click.echo(
                f"sampled {run.written} instances ({run.skipped} already done, {run.topped_up} "
                f"topped up, {len(run.failed)} failed after retries; {run.requests} requests, "
                f"{run.retries} retries)",
                err=True,
            )
            for identifier, reason in list(run.failed.items())[:5]:
                click.echo(f"  missing {identifier}: {reason}", err=True)
            texts = evaluation.read_completions(sampled)
        report = evaluation.evaluate(
            rows,
            texts,
            source=source,
            reward=reward_preset,
            bench_version=load_manifest(dataset).get("bench_version"),
            verification=verification,
        )
    except (BuildError, RecordError, evaluation.CompletionsError) as error:
        raise click.ClickException(str(error)) from error
    except (sampler.EndpointError, sampler.CompletionsFileError) as error:
        raise click.ClickException(str(error)) from error
    for warning in texts.warnings:
        click.echo(f"warning: {warning}", err=True)
    from npgym.npbench.report import write_report

    paths = write_report(report, folder, rows, texts)
    click.echo(evaluation.markdown(report))
    click.echo(f"report: {', '.join(str(p) for p in paths)}", err=True)
    missing = report["problems"]["missing_completions"]
    if missing and not allow_missing:
        raise click.ClickException(
            f"{len(missing)} instances have no answer (first: {', '.join(missing[:5])}); rerun "
            "to retry them, or pass --allow-missing to accept the report as it is"
        )


def _certify(dataset: Path, rows: list[Any], *, no_verify: bool, deep: bool) -> str:
    """Check ``rows`` beyond their manifest (see :mod:`npgym.npbench.certify`); say which checks
    ran, for the report."""
    from npgym.npbench import certify
    from npgym.npbench.build import load_manifest

    if no_verify:
        return "none (--no-verify)"
    checks = ["manifest"]
    regenerated = certify.regenerate(dataset, rows)
    if regenerated:
        checks.append(f"{regenerated} instances regenerated from the recorded spec")
    if deep:
        time_limit = (load_manifest(dataset).get("spec") or {}).get("time_limit")
        proven = certify.prove_again(rows, time_limit=time_limit, progress=True)
        checks.append(f"{proven} references solved again (--deep)")
    elif not regenerated:
        checks.append("no seeds to regenerate from: pass --deep to solve the references again")
    return "; ".join(checks)


def _parse_mix(text: str) -> dict[str, float]:
    mix: dict[str, float] = {}
    for part in text.split(","):
        tier, _, weight = part.partition(":")
        try:
            value = float(weight) if weight else 1.0
        except ValueError as error:
            raise click.BadParameter(f"bad weight in {part!r}", param_hint="--mix") from error
        if not math.isfinite(value):
            raise click.BadParameter(f"weight in {part!r} is not finite", param_hint="--mix")
        mix[tier.strip()] = value
    return mix


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:60] or "run"


def _save_completions(texts: dict[str, list[str]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl(({"id": key, "completions": value} for key, value in texts.items()), handle)


def _task_or_fail(name: str) -> Any:
    try:
        return get_task(name)
    except KeyError as error:
        raise click.BadParameter(str(error.args[0]), param_hint="TASK") from error


def _parse_overrides(text: str | None) -> dict[str, Any] | None:
    return _parse_json_object(text, "--overrides")


def _parse_json_object(text: str | None, option: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise click.BadParameter(f"not valid JSON: {error.msg}", param_hint=option) from error
    if not isinstance(value, dict):
        raise click.BadParameter("expected a JSON object", param_hint=option)
    return value


@contextmanager
def _open_output(path: Path | None) -> Iterator[IO[str]]:
    """Open ``path`` for writing, or use stdout when it is ``None``.

    The text goes to a temporary file beside ``path`` that replaces it only once complete, so a
    failed write (a full disk, an error halfway) leaves what was there before untouched.
    """
    if path is None:
        yield sys.stdout
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


@main.command("serve")
@click.argument("env_id", metavar="ENV_ID")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option(
    "--max-sessions", type=click.IntRange(min=1), default=DEFAULT_MAX_SESSIONS, show_default=True
)
@click.option("--max-attempts", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--heuristic-reference", is_flag=True, help="Skip optimality proofs (faster).")
@click.option(
    "--workers",
    type=click.IntRange(0, MAX_WORKERS),
    default=DEFAULT_WORKERS,
    show_default=True,
    help="Processes that build resets' references (0: in the server process).",
)
@click.option(
    "--idle-timeout",
    type=click.FloatRange(0, MAX_TIMEOUT_S, min_open=True),
    default=DEFAULT_IDLE_TIMEOUT_S,
    show_default=True,
    help="Seconds without a message before a session is closed and its slot freed.",
)
@click.option(
    "--message-timeout",
    type=click.FloatRange(0, MAX_TIMEOUT_S, min_open=True),
    default=DEFAULT_MESSAGE_TIMEOUT_S,
    show_default=True,
    help="Seconds the server may take to answer a message before it closes the session.",
)
def serve_command(
    env_id: str,
    host: str,
    port: int,
    max_sessions: int,
    max_attempts: int,
    heuristic_reference: bool,
    workers: int,
    idle_timeout: float,
    message_timeout: float,
) -> None:
    """Serve ENV_ID (e.g. npgym/TSP-hard) as an OpenEnv environment server."""
    try:
        from npgym.integrations.openenv import create_server_app
    except ImportError as error:
        raise click.ClickException(
            f"the OpenEnv server needs: pip install 'npgym[openenv]' ({error})"
        ) from error
    import gymnasium
    import uvicorn

    try:
        app = create_server_app(
            env_id,
            max_sessions,
            workers=workers,
            idle_timeout_s=idle_timeout,
            message_timeout_s=message_timeout,
            max_attempts=max_attempts,
            exact_reference=not heuristic_reference,
        )
    except gymnasium.error.Error as error:
        raise click.BadParameter(str(error), param_hint="ENV_ID") from error
    click.echo(
        f"serving {env_id} on ws://{host}:{port}/ws ({max_sessions} sessions at most, "
        f"{workers} reference workers, {idle_timeout:g} s idle timeout)"
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
