"""What each ``npgym`` command does, as library functions on typed options.

:mod:`npgym.cli` only parses the command line: each command builds one options model from its
arguments and calls one ``run_*`` function here. The same functions serve Python callers
(``run_eval(EvalOptions(dataset=..., agent="greedy"))``). A function says what it did on
standard error, writes its results to standard output or ``output``, and raises ``ValueError``
(or ``OSError``) with a one-line message when its work fails; the command line turns those into
``npgym: error: ...`` and exit status 1, and an invalid options model into a usage error.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from npgym.config import MAX_DIFFICULTY, TIERS, validation_summary
from npgym.datasets import (
    BENCH_TASKS,
    BENCH_VERSION,
    MAX_TIME_LIMIT,
    Backend,
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
    TOKEN_ENV,
    check_token,
    is_loopback,
)
from npgym.outputs import check_output_folder, open_output, output_target, refuse_overwriting
from npgym.progress import Progress
from npgym.records import read_jsonl, write_jsonl
from npgym.registry import CURRICULUM_ENV_ID, ENV_NAMESPACE, env_id, get_task, list_tasks
from npgym.reward import DEFAULT_PRESET, PRESETS
from npgym.task import Task

if TYPE_CHECKING:
    from npgym.npbench.certify import Provenance

MAX_SAMPLES = 1024
"""``eval --samples``: completions per instance (pass@k up to k = 1024)."""
MAX_RETRIES = 20
"""``eval --max-retries``: retries of one request (backoff capped at 30 s: about 10 minutes)."""
MAX_REQUEST_TIMEOUT_S = 86_400.0
"""``eval --timeout``: seconds one request may take (a day)."""
MAX_VARIANTS = 100
"""``bench build --variants``: optimum-keeping variants per instance."""


def _not_empty(value: Any) -> Any:
    """Refuse an empty path, which :class:`Path` would read as the current folder."""
    if isinstance(value, str) and value == "":
        raise ValueError("the output path is empty")
    return value


OutputPath = Annotated[Path, BeforeValidator(_not_empty)]
"""An output file or folder: never ``''`` (see :mod:`npgym.outputs` for what else is checked)."""
Tier = Literal["easy", "medium", "hard", "benchmark"]
TimeLimit = Annotated[float, Field(ge=0.1, le=MAX_TIME_LIMIT, allow_inf_nan=False)]
"""Work budget of one exact proof, in nominal seconds (at most a day)."""
Agent = Literal["random", "greedy", "heuristic"]
ExportFormat = Literal["jsonl", "parquet", "verl", "trl"]


class Options(BaseModel):
    """A command's options: frozen, and no field that the command does not know."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class GenerateOptions(Options):
    """``npgym generate``: ``count`` instances of one task, as JSON lines."""

    task_name: str
    tier: Tier | None = None
    difficulty: float | None = Field(None, ge=0, le=MAX_DIFFICULTY, allow_inf_nan=False)
    overrides_json: str | None = None
    count: int = Field(100, ge=1)
    seed: int = Field(0, ge=0)
    reference_mode: ReferenceMode = "exact"
    time_limit: TimeLimit | None = None
    workers: int = Field(1, ge=1)
    output: OutputPath | None = None

    @model_validator(mode="after")
    def _tier_or_difficulty(self) -> GenerateOptions:
        if self.tier is not None and self.difficulty is not None:
            raise ValueError("give --tier or --difficulty, not both")
        _json_object(self.overrides_json, "--overrides")  # refused before any work
        return self


class ScoreOptions(Options):
    """``npgym score``: completions against the instances of a JSON-lines file."""

    data: Path
    completions: Path | None = None
    output: OutputPath | None = None


class BuildOptions(Options):
    """``npgym bench build``: instances with certified references, into a dataset folder."""

    output: OutputPath
    count: int = Field(100, ge=1)
    tasks: str | None = None
    tier: Tier | None = None
    mix: str | None = None
    split: Split = "bench"
    seed: int = Field(0, ge=0)
    reference_mode: ReferenceMode = "exact"
    time_limit: TimeLimit | None = None
    workers: int | None = Field(None, ge=1)
    backend: Backend = "local"
    ray_address: str | None = None
    exclude: tuple[Path, ...] = ()
    drop_overlap: bool = False
    variants: int = Field(0, ge=0, le=MAX_VARIANTS)
    allow_unproven: bool = False
    bench_version: int = Field(BENCH_VERSION, ge=1, le=BENCH_VERSION)

    @model_validator(mode="after")
    def _tier_or_mix(self) -> BuildOptions:
        if self.tier and self.mix:
            raise ValueError("give --tier or --mix, not both")
        return self


class ExportOptions(Options):
    """``npgym export``: a built dataset as one file for datasets, verl or TRL."""

    dataset: Path
    fmt: ExportFormat
    output: OutputPath
    split_name: str = "test"
    multi_turn: bool = False
    plain: bool = False
    no_verify: bool = False


class VerifyCertificatesOptions(Options):
    """``npgym verify-certificates``: a built dataset's certificates, checked independently."""

    dataset: Path


class ShowOptions(Options):
    """``npgym show``: an instance and an answer (or its reference) drawn as a PNG."""

    source: Path
    output: OutputPath
    answer: str | None = None
    reference_answer: bool = False
    row_id: str | None = None


class ImportOptions(Options):
    """``npgym import np-engine`` and ``npgym import tsplib``: published instance files, with
    certified references."""

    files: tuple[Path, ...] = Field(min_length=1)
    output: OutputPath
    time_limit: TimeLimit | None = None


DimacsTask = Literal["MaxClique", "MaxIndependentSet", "GraphColoring"]
"""The tasks a DIMACS graph file can be imported as."""


class DimacsImportOptions(ImportOptions):
    """``npgym import dimacs``: DIMACS graphs as instances of ``task``."""

    task: DimacsTask


class EvalOptions(Options):
    """``npgym eval``: Success Rate and Average Ratio of completions on a built dataset, from a
    completions file, a built-in agent or an OpenAI-compatible endpoint (exactly one)."""

    dataset: Path | None = None
    completions: Path | None = None
    agent: Agent | None = None
    endpoint: str | None = None
    model: str | None = None
    samples: int = Field(1, ge=1, le=MAX_SAMPLES)
    concurrency: int = Field(8, ge=1)
    timeout: float = Field(600, ge=1, le=MAX_REQUEST_TIMEOUT_S, allow_inf_nan=False)
    max_retries: int = Field(4, ge=0, le=MAX_RETRIES)
    system_prompt: str | None = None
    temperature: float = Field(0.6, allow_inf_nan=False)
    top_p: float | None = Field(None, ge=0, le=1, allow_inf_nan=False)
    max_tokens: int | None = Field(None, ge=1)
    sampling_seed: int | None = None
    extra_body: str | None = None
    allow_missing: bool = False
    output: OutputPath | None = None
    reward_preset: str = DEFAULT_PRESET
    no_verify: bool = False
    deep: bool = False
    compare: tuple[Path, Path] | None = None
    gallery: bool = True
    """Draw each task's worst and best answer into report.md (the numbers never depend on it)."""
    plot_style: Literal["bars", "shortfall"] = "bars"
    """report.png: SR and AR on a 0-1 axis, or their shortfall from 1 on a log scale."""

    @model_validator(mode="after")
    def _one_source(self) -> EvalOptions:
        if self.compare:
            return self
        _json_object(self.extra_body, "--extra-body")  # refused before the dataset is read
        sources = [s for s in (self.completions, self.agent, self.endpoint) if s is not None]
        if self.dataset is None or len(sources) != 1:
            raise ValueError("give DATASET and one of --completions, --agent or --endpoint")
        if self.endpoint and not self.model:
            raise ValueError("--endpoint needs --model")
        if self.reward_preset not in PRESETS:
            raise ValueError(f"unknown reward preset {self.reward_preset!r}")
        return self


class ServeOptions(Options):
    """``npgym serve``: one env id as an OpenEnv environment server."""

    env_id: str
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    max_sessions: int = Field(DEFAULT_MAX_SESSIONS, ge=1)
    max_attempts: int = Field(1, ge=1)
    heuristic_reference: bool = False
    workers: int = Field(DEFAULT_WORKERS, ge=0, le=MAX_WORKERS)
    idle_timeout: float = Field(DEFAULT_IDLE_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S)
    message_timeout: float = Field(DEFAULT_MESSAGE_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S)
    token: str | None = None

    @model_validator(mode="after")
    def _an_npgym_env(self) -> ServeOptions:
        if not self.env_id.startswith(f"{ENV_NAMESPACE}/"):
            raise ValueError(f"ENV_ID {self.env_id!r} is not an npgym environment (npgym/...)")
        if self.env_id == CURRICULUM_ENV_ID:
            raise ValueError(
                f"ENV_ID {self.env_id} needs a curriculum object and cannot be served: "
                "serve a task's env id (npgym/<Task>-<tier>)"
            )
        if self.token is not None:
            check_token(self.token)
        elif not is_loopback(self.host):
            raise ValueError(
                f"--host {self.host} is reachable from other machines: give --token "
                f"(or set {TOKEN_ENV}) so that only your clients can use the server"
            )
        return self


class OptionsError(ValueError):
    """Options that do not fit together or out of range: a usage error on the command line."""


def parse_options(model: type[Options], values: dict[str, Any]) -> Any:
    """``model`` built from a command's arguments; :class:`OptionsError` saying what is wrong."""
    try:
        return model(**values)
    except ValidationError as error:
        first = error.errors()[0]
        if not first["loc"] and "error" in first.get("ctx", {}):  # a rule across options
            raise OptionsError(str(first["ctx"]["error"])) from None
        raise OptionsError(validation_summary(error)) from None


def _say(message: str) -> None:
    """A progress or summary line, on standard error (standard output carries results)."""
    print(message, file=sys.stderr)


# --- the commands -----------------------------------------------------------------------------


def run_list() -> None:
    """Print the registered tasks, then the task families, and their gymnasium ids."""
    from npgym.families import family_env_names

    names = (*list_tasks(), *family_env_names())
    tasks = [get_task(name) for name in names]
    width = max(map(len, names))
    category_width = max(len(task.category) for task in tasks)
    for name, task in zip(names, tasks, strict=True):
        ids = ", ".join(env_id(name, tier) for tier in TIERS)
        goal = f"{task.sense}imise {task.objective_name}"
        print(f"{name:<{width}}  {task.category:<{category_width}}  {goal}")
        print(f"{'':<{width}}  {ids}")


def run_generate(options: GenerateOptions) -> None:
    """Write ``options.count`` instances of one task as JSON lines (id, prompt, instance,
    reference...) to ``options.output`` or standard output."""
    task = _task(options.task_name)
    if options.output is not None:
        output_target(options.output)  # refused before any work, not after
    difficulty, tier = options.difficulty, options.tier
    spec = DatasetSpec(
        split="generate",
        tasks=(task.name,),
        count=options.count,
        mix=None if difficulty is not None else {tier or "medium": 1.0},
        difficulty=difficulty,
        overrides=_json_object(options.overrides_json, "--overrides"),
        seed=options.seed,
        reference=options.reference_mode,
        time_limit=options.time_limit,
    )
    rows = make_rows(spec, workers=options.workers)
    label = tier or (f"d{difficulty:g}" if difficulty is not None else "medium")
    with (
        Progress(options.count, f"{task.name} {label}") as meter,
        open_output(options.output) as handle,
    ):
        written = write_jsonl((result.record for result in meter.track(rows)), handle)
    if options.output is not None:
        _say(f"wrote {written} instances to {options.output}")


def run_score(options: ScoreOptions) -> None:
    """Score completions against the instances of ``options.data`` and print a summary."""
    from npgym.npbench.evaluate import (
        collect_completions,
        read_completions,
        score_rows,
        summarize,
    )

    if options.output is not None:
        output_target(options.output)
        refuse_overwriting(
            options.output, [options.data, *filter(None, [options.completions])], "the input"
        )
    rows = list(read_jsonl(options.data))
    if options.completions is None:
        inline = ((f"{options.data} row {row.get('id')!r}", row) for row in rows)
        found = collect_completions(inline, skip_rows_without_text=True)
    else:
        found = read_completions(options.completions)
    scored = score_rows(rows, found, progress=True)
    for warning in found.warnings:
        _say(f"warning: {warning}")
    if scored.unknown:
        _say(
            f"warning: {len(scored.unknown)} completion ids not in {options.data}: "
            f"{scored.unknown[:5]}"
        )
    with open_output(options.output) as handle:
        write_jsonl(
            (
                {"id": row.id, "task": row.task, "scores": [s.to_dict() for s in row.scores]}
                for row in scored.rows
            ),
            handle,
        )
    if scored.missing:
        _say(f"warning: {len(scored.missing)} rows had no completion; not scored (empty scores)")
    count = sum(len(row.scores) for row in scored.rows)
    if count:
        overall = summarize([row.scores for row in scored.rows])
        _say(
            f"{count} completions (averaged per instance): format "
            f"{overall.format_rate:.1%}, success rate {overall.success_rate:.1%}, "
            f"average ratio {overall.average_ratio:.4f}, mean reward {overall.mean_reward:.4f}"
        )


def run_build(options: BuildOptions) -> None:
    """Build instances with references into ``options.output`` (resuming an interrupted build;
    a finished one is verified and left as it is). Fails when an exact build kept unproven
    references, unless ``allow_unproven``."""
    from npgym.npbench.build import BuildSpec, build

    check_output_folder(options.output)
    try:
        spec = BuildSpec(
            split=options.split,
            tasks=tuple(options.tasks.split(","))
            if options.tasks
            else BENCH_TASKS[options.bench_version],
            count=options.count,
            mix=_mix(options.mix) if options.mix else {options.tier or "benchmark": 1.0},
            seed=options.seed,
            reference=options.reference_mode,
            time_limit=options.time_limit,
            bench_version=options.bench_version,
        )
        summary = build(
            spec,
            options.output,
            workers=options.workers,
            backend=options.backend,
            ray_address=options.ray_address,
            exclude=options.exclude,
            drop_overlap=options.drop_overlap,
            variants=options.variants,
        )
    except KeyError as error:
        raise ValueError(str(error.args[0])) from error
    if summary.already_built:
        _say(f"{options.output} already holds this build, verified: nothing to do")
    else:
        _say(
            f"built {summary.computed} instances ({summary.resumed} resumed) in "
            f"{summary.wall_seconds:.1f} s; generation {summary.generation_seconds:.1f} s, "
            f"references {summary.reference_seconds:.1f} s (summed over workers)"
        )
        for name, task in summary.manifest["tasks"].items():
            _say(
                f"  {name:<20} {task['count']:>5} instances, "
                f"{task['proven_optimal']:.0%} proven optimal"
            )
    if options.reference_mode == "exact" and not options.allow_unproven:
        _fail_on_unproven(options.output)


def _fail_on_unproven(folder: Path) -> None:
    """Refuse an exact build that kept references not proven optimal.

    They stay in the files, marked (``proven_optimal: false``, ``method: heuristic``, their bound
    and gap), but a benchmark whose "optimum" is not one must not pass for a finished build.
    """
    from npgym.npbench.build import read_dataset

    unproven = [
        row["id"] for row in read_dataset(folder, verify=False) if not row.get("proven_optimal")
    ]
    if unproven:
        raise ValueError(
            f"{len(unproven)} references are not proven optimal (first: "
            f"{', '.join(unproven[:5])}); they are kept with their bound and gap. Raise "
            "--time-limit, or pass --allow-unproven to accept them"
        )


def run_export(options: ExportOptions) -> None:
    """Export a built dataset as one file (checked against its manifest first, unless
    ``no_verify``); never over one of the dataset's own files."""
    from npgym.npbench.build import dataset_files, read_dataset, verify_dataset
    from npgym.npbench.certificates import read_certificates, with_certificates
    from npgym.npbench.export import export_rows

    dataset, output = options.dataset, options.output
    output_target(output)
    refuse_overwriting(output, dataset_files(dataset), "the dataset's own")
    rows = with_certificates(
        read_dataset(dataset, verify=False)
        if options.no_verify
        else verify_dataset(dataset, progress=True),
        read_certificates(dataset),
    )
    written = export_rows(
        rows,
        options.fmt,
        output,
        split=options.split_name,
        multi_turn=options.multi_turn,
        progress=True,
        conversational=not options.plain,
    )
    _say(f"wrote {written} rows to {output}")


def run_show(options: ShowOptions) -> None:
    """Draw the instance in ``options.source`` and an answer to it as a PNG."""
    from npgym.npbench.show import show

    written = show(
        options.source,
        options.output,
        options.answer,
        row_id=options.row_id,
        reference_answer=options.reference_answer,
    )
    _say(f"wrote {written}")


def run_import_np_engine(options: ImportOptions) -> None:
    """Read NP-ENGINE question files, certify references, write an npgym dataset folder."""
    from npgym.npbench.importers import import_np_engine_files

    check_output_folder(options.output)
    summary = import_np_engine_files(
        options.files, options.output, time_limit=options.time_limit, progress=True
    )
    _say(summary)


def run_import_tsplib(options: ImportOptions) -> None:
    """Read TSPLIB ``.tsp`` files (and ``.opt.tour`` files, checked against the references),
    certify references, write an npgym dataset folder."""
    from npgym.npbench.tsplib import import_tsplib_files

    check_output_folder(options.output)
    _say(import_tsplib_files(options.files, options.output, options.time_limit, progress=True))


def run_import_dimacs(options: DimacsImportOptions) -> None:
    """Read DIMACS graph files as ``options.task`` instances, certify references, write an
    npgym dataset folder."""
    from npgym.npbench.dimacs import import_dimacs_files

    check_output_folder(options.output)
    summary = import_dimacs_files(
        options.files, options.task, options.output, options.time_limit, progress=True
    )
    _say(summary)


def run_eval(options: EvalOptions) -> None:
    """Score completions on a built dataset and write report.json, report.md and report.png;
    with ``compare``, print two reports side by side and draw them side by side in compare.png
    (in ``output``, default the current folder) instead. Fails when instances got no answer,
    unless ``allow_missing``."""
    from npgym.npbench import evaluate as evaluation
    from npgym.npbench.build import read_dataset

    if options.compare:
        from npgym.npbench.plots import plot_compare

        folder = check_output_folder(options.output or Path())
        reports = [evaluation.read_report(path) for path in options.compare]
        print(evaluation.compare(*reports))
        folder.mkdir(parents=True, exist_ok=True)
        _say(f"picture: {plot_compare(reports, folder / 'compare.png', options.plot_style)}")
        return
    assert options.dataset is not None  # EvalOptions insists on it without compare
    if options.output is not None:
        check_output_folder(options.output)  # refused before the dataset is checked, not after
    dataset = options.dataset
    rows = list(read_dataset(dataset, verify=not options.no_verify))
    verification, provenance, tiers_checked = _certify(
        dataset, rows, no_verify=options.no_verify, deep=options.deep
    )
    completions, agent = options.completions, options.agent
    source = str(completions.name if completions else agent or options.model)
    folder = check_output_folder(options.output or dataset / f"eval-{_slug(source)}")
    if completions is not None:
        texts = evaluation.read_completions(completions)
    elif agent is not None:
        from npgym.npbench.agents import agent_completions

        texts = agent_completions(rows, agent, samples=options.samples)
        _save_completions(texts.texts, folder / "completions.jsonl")
    else:
        texts = evaluation.read_completions(_sample_endpoint(options, rows, folder))
    report = evaluation.evaluate(
        rows,
        texts,
        source=source,
        reward=options.reward_preset,
        verification=verification,
        provenance=provenance,
        tiers_checked=tiers_checked,
    )
    for warning in texts.warnings:
        _say(f"warning: {warning}")
    from npgym.npbench.report import write_report

    if options.gallery:
        paths = write_report(report, folder, rows, texts, options.plot_style)
    else:
        paths = write_report(report, folder, style=options.plot_style)
    print(evaluation.markdown(report))
    _say(f"report: {', '.join(str(p) for p in paths)}")
    missing = report["problems"]["missing_completions"]
    if missing and not options.allow_missing:
        raise ValueError(
            f"{len(missing)} instances have no answer (first: {', '.join(missing[:5])}); rerun "
            "to retry them, or pass --allow-missing to accept the report as it is"
        )


def _sample_endpoint(options: EvalOptions, rows: list[Any], folder: Path) -> Path:
    """Sample completions from ``options.endpoint`` into ``folder`` (resuming); their file."""
    from npgym.npbench import client as sampler

    sampling = sampler.SamplingOptions(
        model=str(options.model),
        samples=options.samples,
        system_prompt=options.system_prompt,
        temperature=options.temperature,
        top_p=options.top_p,
        max_tokens=options.max_tokens,
        seed=options.sampling_seed,
        extra_body=_json_object(options.extra_body, "--extra-body"),
        concurrency=options.concurrency,
        timeout=options.timeout,
        max_retries=options.max_retries,
    )
    sampled = folder / "completions.jsonl"
    try:
        sampler.check_endpoint(str(options.endpoint), str(options.model))
        run = sampler.sample_endpoint(
            rows, sampled, endpoint=str(options.endpoint), options=sampling
        )
    except sampler.EndpointError as error:  # a RuntimeError: said in one line all the same
        raise ValueError(str(error)) from error
    _say(
        f"sampled {run.written} instances ({run.skipped} already done, {run.topped_up} "
        f"topped up, {len(run.failed)} failed after retries; {run.requests} requests, "
        f"{run.retries} retries)"
    )
    for identifier, reason in list(run.failed.items())[:5]:
        _say(f"  missing {identifier}: {reason}")
    return sampled


def _certify(
    dataset: Path, rows: list[Any], *, no_verify: bool, deep: bool
) -> tuple[str, Provenance, set[str]]:
    """Check ``rows`` beyond their manifest (see :mod:`npgym.npbench.certify`); say which checks
    ran, what the dataset is (compared with the official digests) and which rows' tiers were
    checked (regenerated, or official rows), for the report."""
    from npgym.npbench import certify
    from npgym.npbench.build import load_manifest

    if no_verify:
        return "none (--no-verify)", certify.UNVERIFIED, set()
    checks = ["manifest, every row's prompt and columns derived again from its instance"]
    regenerated = certify.regenerate(dataset, rows)
    if regenerated:
        checks.append(f"{len(regenerated)} instances regenerated from the recorded spec")
    provenance = certify.provenance(rows)
    checks.append(f"compared with the NP-Bench digests: {provenance.label}")
    checks.append(check_certificates(dataset, rows))
    if deep:
        time_limit = (load_manifest(dataset).get("spec") or {}).get("time_limit")
        proven = certify.prove_again(rows, time_limit=time_limit, progress=True)
        checks.append(f"{proven} references solved again (--deep)")
    elif not regenerated:
        checks.append("no seeds to regenerate from: pass --deep to solve the references again")
    return "; ".join(checks), provenance, {*regenerated, *provenance.official_ids}


def check_certificates(dataset: Path, rows: list[Any]) -> str:
    """Check every row's proof claims against the folder's certificates
    (:mod:`npgym.npbench.certificates`); raise naming the rows whose claims are not backed,
    else say what was checked."""
    from npgym.npbench.certificates import check_folder

    report = check_folder(dataset, rows)
    report.raise_if_refused()
    return report.summary()


def run_verify_certificates(options: VerifyCertificatesOptions) -> None:
    """Check every reference's certificate with the independent checker: a dataset folder's
    (after its manifest) or an exported file's (``certificate`` column); print what each task
    came to, and fail on any refusal."""
    from npgym.npbench.build import verify_dataset
    from npgym.npbench.certificates import check_folder, check_rows, exported_rows

    source = options.dataset
    if source.is_dir():
        rows: list[Any] = verify_dataset(source)
        report = check_folder(source, rows)
    else:
        rows = exported_rows(source)
        report = check_rows(rows)
    task_of = {str(row.get("id")): str(row.get("task")) for row in rows}
    refused: dict[str, int] = {}
    for identifier in report.refused:
        refused[task_of[identifier]] = refused.get(task_of[identifier], 0) + 1
    print("| task | certified | refused | nothing claimed | no checker |")
    print("|---|---|---|---|---|")
    for task in sorted(set(task_of.values())):
        print(
            f"| {task} | {report.certified.get(task, 0)} | {refused.get(task, 0)} | "
            f"{report.unclaimed.get(task, 0)} | {report.uncheckable.get(task, 0)} |"
        )
    for identifier, reason in list(report.refused.items())[:20]:
        _say(f"refused {identifier}: {reason}")
    _say(f"{report.summary()} in {report.seconds:.2f} s")
    report.raise_if_refused()


def run_serve(options: ServeOptions) -> None:
    """Serve one env id as an OpenEnv environment server (until interrupted)."""
    try:
        from npgym.integrations.openenv import create_server_app, run_server
    except ImportError as error:
        raise ValueError(
            f"the OpenEnv server needs: pip install 'npgym[openenv]' ({error})"
        ) from error
    import gymnasium

    try:
        app = create_server_app(
            options.env_id,
            options.max_sessions,
            workers=options.workers,
            idle_timeout_s=options.idle_timeout,
            message_timeout_s=options.message_timeout,
            token=options.token,
            max_attempts=options.max_attempts,
            exact_reference=not options.heuristic_reference,
        )
    except gymnasium.error.Error as error:
        raise OptionsError(f"ENV_ID: {error}") from error
    print(
        f"serving {options.env_id} on ws://{options.host}:{options.port}/ws "
        f"({options.max_sessions} sessions at most, {options.workers} reference workers, "
        f"{options.idle_timeout:g} s idle timeout, "
        f"{'token required' if options.token else 'no token'})"
    )
    run_server(app, options.host, options.port)


# --- helpers ----------------------------------------------------------------------------------


def _task(name: str) -> Task[Any, Any]:
    """The task called ``name``; an unknown name is a ``ValueError`` listing the tasks."""
    try:
        return get_task(name)
    except KeyError as error:
        raise OptionsError(str(error.args[0])) from error


def _mix(text: str) -> dict[str, float]:
    """A ``--mix`` text (``easy:5,medium:4,hard:1``) as tier weights."""
    mix: dict[str, float] = {}
    for part in text.split(","):
        tier, _, weight = part.partition(":")
        try:
            value = float(weight) if weight else 1.0
        except ValueError as error:
            raise OptionsError(f"--mix: bad weight in {part!r}") from error
        if not math.isfinite(value):
            raise OptionsError(f"--mix: weight in {part!r} is not finite")
        mix[tier.strip()] = value
    return mix


def _json_object(text: str | None, option: str) -> dict[str, Any] | None:
    """An option's JSON object (``None`` when not given)."""
    if text is None:
        return None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # lone surrogates
    except json.JSONDecodeError as error:
        raise OptionsError(f"{option}: not valid JSON: {error.msg}") from error
    except RecursionError as error:
        raise OptionsError(f"{option}: JSON nested too deeply") from error
    except UnicodeEncodeError as error:
        raise OptionsError(f"{option}: not valid text: {error.reason}") from error
    except ValueError as error:  # a constant or a number that is not finite
        raise OptionsError(f"{option}: {error}") from error
    if not isinstance(value, dict):
        raise OptionsError(f"{option}: expected a JSON object, got {type(value).__name__}")
    return value


def _no_constant(name: str) -> float:
    """``NaN``, ``Infinity`` and ``-Infinity``, which Python's JSON reader takes and JSON has
    not: refused (a server would read them as a bad request, or as nothing at all)."""
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    """A JSON number as a float, refused when it overflows to infinity (``1e999``)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:60] or "run"


def _save_completions(texts: dict[str, list[str]], path: Path) -> None:
    with open_output(path, in_folder=True) as handle:
        write_jsonl(({"id": key, "completions": value} for key, value in texts.items()), handle)
