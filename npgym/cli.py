"""The ``npgym`` command line: parse arguments, nothing else.

Each command builds its options model and calls one function of :mod:`npgym.commands`, which
does the work (and serves Python callers the same way).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, get_args

import click
from pydantic import ValidationError

from npgym.commands import (
    MAX_REQUEST_TIMEOUT_S,
    MAX_RETRIES,
    MAX_SAMPLES,
    MAX_VARIANTS,
    BuildOptions,
    DimacsImportOptions,
    DimacsTask,
    EvalOptions,
    ExportOptions,
    GenerateOptions,
    ImportOptions,
    OptionsError,
    ScoreOptions,
    ServeOptions,
    ShowOptions,
    VerifyCertificatesOptions,
    parse_options,
    run_build,
    run_eval,
    run_export,
    run_generate,
    run_import_dimacs,
    run_import_np_engine,
    run_import_tsplib,
    run_list,
    run_score,
    run_serve,
    run_show,
    run_verify_certificates,
)
from npgym.config import MAX_DIFFICULTY, TIERS, validation_summary
from npgym.datasets import BENCH_VERSION, MAX_TIME_LIMIT, DatasetError
from npgym.integrations.serving import (
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MESSAGE_TIMEOUT_S,
    DEFAULT_WORKERS,
    MAX_TIMEOUT_S,
    MAX_WORKERS,
    TOKEN_ENV,
)
from npgym.reward import DEFAULT_PRESET, PRESETS


class _Float(click.types.FloatParamType):
    """A float option: NaN and infinities are refused as not numbers (click and pydantic would
    let NaN through a range check, or call it out of range)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number.", param, ctx)
        if math.isinf(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


class _FloatRange(click.FloatRange):
    """:class:`_Float` within a range (shown in ``--help``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return super().convert(_Float().convert(value, param, ctx), param, ctx)


class _Output(click.Path):
    """An output path. ``''`` is refused (a path library reads it as the current folder); what
    the path names is checked by :mod:`npgym.outputs` when the command writes."""

    def __init__(self, *, folder: bool) -> None:
        super().__init__(file_okay=not folder, dir_okay=folder, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value == "":
            self.fail("the output path is empty.", param, ctx)
        return super().convert(value, param, ctx)


_TIME_LIMIT = _FloatRange(min=0.1, max=MAX_TIME_LIMIT)
"""Work budget of one exact proof, in nominal seconds (at most a day)."""

DOCS = "docs"
"""Where the documentation lives: the ``docs/`` folder of the npgym repository, markdown that
``mkdocs serve`` (``pip install -e ".[docs]"``) turns into a site; no hosted copy is known."""


def _docs(page: str) -> str:
    """A command's help epilog: the page of :data:`DOCS` that explains the command."""
    return f"Docs: {DOCS}/{page} in the npgym repository (browse them as a site: mkdocs serve)."


EXPECTED_ERRORS = (OSError, ValueError, DatasetError, RecursionError)
"""What a command's work can fail with on bad input or a bad machine (a full disk, a read-only
folder, a malformed file or value, a dataset that cannot be made): said in one line. Anything
else is a bug and keeps its traceback."""


class _Commands(click.Group):
    """The command group: options that do not fit are a usage error (exit status 2); an
    expected error becomes ``npgym: error: ...`` and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OptionsError as error:
            raise click.UsageError(_one_line(error), ctx) from error
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


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=_docs("index.md"),
)
@click.version_option(package_name="npgym")
def main() -> None:
    """npgym: NP-hard optimisation environments with verifiable rewards."""


@main.command("list", epilog=_docs("tasks.md"))
def list_command() -> None:
    """List the registered tasks, then the task families, and their gymnasium ids."""
    run_list()


@main.command(epilog=_docs("quickstart.md"))
@click.argument("task_name", metavar="TASK")
@click.option("--tier", type=click.Choice(TIERS), help="Tier preset (default: medium).")
@click.option(
    "--difficulty", type=_FloatRange(0, MAX_DIFFICULTY), help="Continuous difficulty instead."
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
@click.option("-o", "--output", type=_Output(folder=False), help="JSONL file.")
def generate(**values: Any) -> None:
    """Generate COUNT instances of TASK as JSON lines (id, prompt, instance, reference...).

    Instance seeds are derived from (SEED, TASK, tier, index), so files built from different
    base seeds share no instances by construction; the instances are distinct, and one that
    is also in NP-Bench is redrawn.
    """
    run_generate(parse_options(GenerateOptions, values))


@main.command(epilog=_docs("reward.md"))
@click.argument("data", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--completions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL with id and completion (or completions); default: read them from DATA.",
)
@click.option("-o", "--output", type=_Output(folder=False), help="JSONL file.")
def score(**values: Any) -> None:
    """Score completions against the instances in DATA and print a summary.

    Each row of DATA needs task and instance (and a reference, else one is computed). Each
    completion row names an id and holds ``completion`` (text) or ``completions`` (a list).
    """
    run_score(parse_options(ScoreOptions, values))


@main.group(epilog=_docs("evaluate.md"))
def bench() -> None:
    """Build NP-Bench (or a training set) with certified references."""


@bench.command("build", epilog=_docs("evaluate.md"))
@click.option("-o", "--output", type=_Output(folder=True), required=True)
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
    type=click.IntRange(0, MAX_VARIANTS),
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
def bench_build(**values: Any) -> None:
    """Build instances with references into OUTPUT (resumes an interrupted build; a finished
    one is verified and left as it is)."""
    run_build(parse_options(BuildOptions, values))


@main.command("export", epilog=_docs("evaluate.md"))
@click.argument("dataset", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["jsonl", "parquet", "verl", "trl"]), required=True
)
@click.option("-o", "--output", type=_Output(folder=False), required=True)
@click.option("--split-name", default="test", show_default=True, help="verl extra_info.split.")
@click.option("--multi-turn", is_flag=True, help="verl: tool-agent rows for multi-turn repair.")
@click.option(
    "--plain", is_flag=True, help="trl: plain-text prompts for base models (no chat template)."
)
@click.option("--no-verify", is_flag=True, help="Skip checking DATASET against its manifest.")
def export_command(**values: Any) -> None:
    """Export a built DATASET folder as one file for datasets, verl or TRL (checked against
    its manifest first, unless --no-verify)."""
    run_export(parse_options(ExportOptions, values))


@main.command("verify-certificates", epilog=_docs("certificates.md"))
@click.argument("dataset", type=click.Path(exists=True, path_type=Path))
def verify_certificates_command(**values: Any) -> None:
    """Check every reference of DATASET against its certificate, with npgym's independent
    checker: a reference marked proven must be proven by its certificate, a stated bound backed
    by one. DATASET is a built folder or an exported .jsonl / .parquet file (npgym export, any
    format). Exits 1 naming the references that are not."""
    run_verify_certificates(parse_options(VerifyCertificatesOptions, values))


@main.command("show", epilog=_docs("structured.md"))
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("--answer", help="A completion or just the answer, e.g. '[0, 2, 1, 0]'.")
@click.option("--reference", "reference_answer", is_flag=True, help="Draw the reference instead.")
@click.option("--row", "row_id", help="Row id, for a JSONL file or a built dataset folder.")
@click.option("-o", "--output", type=_Output(folder=False), required=True)
def show_command(**values: Any) -> None:
    """Draw the instance in SOURCE and an answer to it as a PNG, the mistake marked in red.

    SOURCE is an instance JSON file, a JSONL file of rows (npgym generate) or a built dataset
    folder (npgym bench build).
    """
    run_show(parse_options(ShowOptions, values))


@main.group("import", epilog=_docs("evaluate.md"))
def import_group() -> None:
    """Import instances published elsewhere, with npgym-certified references."""


@import_group.command("np-engine", epilog=_docs("evaluate.md"))
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("-o", "--output", type=_Output(folder=True), required=True)
@click.option("--time-limit", type=_TIME_LIMIT, help="Seconds per exact proof.")
def import_np_engine(**values: Any) -> None:
    """Read NP-ENGINE question FILES, certify references, write an npgym dataset folder."""
    run_import_np_engine(parse_options(ImportOptions, values))


@import_group.command("tsplib", epilog=_docs("instance-files.md"))
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("-o", "--output", type=_Output(folder=True), required=True)
@click.option("--time-limit", type=_TIME_LIMIT, help="Seconds per exact proof.")
def import_tsplib(**values: Any) -> None:
    """Read TSPLIB .tsp FILES (TYPE: TSP) as TSP instances, certify references, write an npgym
    dataset folder. A NAME.opt.tour given (or beside NAME.tsp) is checked against the
    reference."""
    run_import_tsplib(parse_options(ImportOptions, values))


@import_group.command("dimacs", epilog=_docs("instance-files.md"))
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--task",
    type=click.Choice(get_args(DimacsTask)),
    required=True,
    help="The task the graphs become.",
)
@click.option("-o", "--output", type=_Output(folder=True), required=True)
@click.option("--time-limit", type=_TIME_LIMIT, help="Seconds per exact proof.")
def import_dimacs(**values: Any) -> None:
    """Read DIMACS graph FILES (.col, .clq: 'p edge N M', 'e U V') as instances of --task,
    certify references, write an npgym dataset folder."""
    run_import_dimacs(parse_options(DimacsImportOptions, values))


@main.command("eval", epilog=_docs("evaluate.md"))
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
    type=click.IntRange(1, MAX_SAMPLES),
    default=1,
    show_default=True,
    help="Completions per instance (agents and endpoints).",
)
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
@click.option(
    "--timeout",
    type=_FloatRange(1, MAX_REQUEST_TIMEOUT_S),
    default=600,
    show_default=True,
    help="Seconds per request.",
)
@click.option("--max-retries", type=click.IntRange(0, MAX_RETRIES), default=4, show_default=True)
@click.option("--system-prompt", help="System message sent before each problem.")
@click.option("--temperature", type=_Float(), default=0.6, show_default=True)
@click.option("--top-p", type=_FloatRange(0, 1), help="Nucleus sampling.")
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
    type=_Output(folder=True),
    help="Report folder (default: <dataset>/eval-<source>).",
)
@click.option("--no-verify", is_flag=True, help="Skip checking DATASET against its manifest.")
@click.option(
    "--deep",
    is_flag=True,
    help="Also solve every reference again and compare (NP-Bench with --agent heuristic: "
    "about 24 CPU-s in all, against 10 without --deep).",
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
    help="Show two report.json files side by side instead (and draw them into "
    "<output>/compare.png, default ./compare.png).",
)
@click.option(
    "--gallery/--no-gallery",
    default=True,
    show_default=True,
    help="Draw each task's worst and best answer into report.md (most of a fast eval's time).",
)
@click.option(
    "--plot-style",
    type=click.Choice(["bars", "shortfall"]),
    default="bars",
    show_default=True,
    help="report.png: SR and AR on a 0-1 axis, or their shortfall from 1 on a log scale "
    "(tells 0.99 from 0.999, for near-perfect agents).",
)
def eval_command(**values: Any) -> None:
    """Score completions on a built DATASET: Success Rate and Average Ratio per task, category
    and overall; writes report.json, report.md and report.png."""
    run_eval(parse_options(EvalOptions, values))


@main.command("serve", epilog=_docs("integrations.md"))
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
    type=_FloatRange(0, MAX_TIMEOUT_S, min_open=True),
    default=DEFAULT_IDLE_TIMEOUT_S,
    show_default=True,
    help="Seconds without a message before a session is closed and its slot freed.",
)
@click.option(
    "--message-timeout",
    type=_FloatRange(0, MAX_TIMEOUT_S, min_open=True),
    default=DEFAULT_MESSAGE_TIMEOUT_S,
    show_default=True,
    help="Seconds the server may take to answer a message before it closes the session.",
)
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    show_envvar=True,
    help="Secret every client must send (Authorization: Bearer TOKEN, or ?token= on a "
    "WebSocket). Required when --host is not a loopback address.",
)
def serve_command(**values: Any) -> None:
    """Serve ENV_ID (e.g. npgym/TSP-hard) as an OpenEnv environment server."""
    run_serve(parse_options(ServeOptions, values))
