"""Evaluate completions on a built dataset: NP-Bench metrics, reports, plots, comparisons.

Metrics (docs/contract.md, "Metrics"), each instance weighing the same (:data:`AVERAGING`):

- Success Rate: share of feasible answers, averaged within each instance first (with k samples
  this is not pass@k, the published mislabelling), then over instances.
- Average Ratio: mean clipped optimality ratio, infeasible answers scored 0, averaged the same
  way; so are the optimal rate, the format rate and the mean reward.
- With k samples per instance: pass@k (unbiased estimator of the chance that at least one of
  k samples is feasible) and best-ratio@k (unbiased estimator of the expected best ratio among
  k samples), both averaged over instances.
- An instance without a completion is never scored: it is left out of every metric above and
  counted as ``missing``.
- With variant rows (an ``original_id`` column, ``bench build --variants k``): ``consistency``,
  the share of originals whose verdicts (:func:`npgym.variants.verdict_label`) agree across
  their variants.

Results are given per task, per NP-Bench category, per tier and overall. Every table names the
dataset (:attr:`Report.dataset`): "NP-Bench version N" only for exactly that version's rows (see
:func:`npgym.npbench.certify.provenance`), "custom (...)" otherwise, saying what it derives from
and how many rows are missing.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast, get_args

from npgym.config import TIERS
from npgym.progress import Progress
from npgym.records import (
    RecordError,
    json_row,
    load_solved_row,
    read_json_file,
    read_lines,
)
from npgym.registry import get_task
from npgym.results import Score
from npgym.reward import DEFAULT_REWARD, RewardSpec, resolve_reward
from npgym.task import Category
from npgym.variants import consistency, verdict_label
from npgym.version import __version__

if TYPE_CHECKING:
    from npgym.npbench.certify import Provenance

REPORT_SCHEMA_VERSION = 4
"""2: per-instance averaging, ``missing`` counts, per-tier metrics, consistency; 3: the
dataset's ``bench_version``; 4: the ``dataset`` label, and ``bench_version`` only for exactly
an official version's rows."""

CATEGORIES: tuple[Category, ...] = get_args(Category)


class CompletionsError(ValueError):
    """A completions file that cannot be read; the message names the line."""


@dataclass
class Completions:
    """Completion texts per id, and what was odd about the file."""

    texts: dict[str, list[str]]
    warnings: list[str] = field(default_factory=list)


def read_completions(path: str | Path) -> Completions:
    """Rows ``{"id": ..., "completion": "..."}`` or ``{"id": ..., "completions": [...]}``.

    A last line cut short (a crash while writing) is reported and ignored; any other broken
    line, a row without id or text, or an id given twice is an error naming the line. Lines
    are bounded (:func:`npgym.records.read_lines`: at most ``MAX_LINE_BYTES`` each, UTF-8,
    JSON nested at most ``MAX_JSON_DEPTH`` deep), so a device or an endless line is refused.
    """
    rows, warnings = [], []
    for number, line, terminated in read_lines(path):
        if not line.strip():
            continue
        try:
            rows.append((f"{path}:{number}", json_row(line, f"{path}:{number}")))
        except RecordError as error:
            if not terminated and "not valid JSON" in str(error):
                warnings.append(f"{path}:{number}: truncated last line ignored")
                continue
            raise CompletionsError(str(error)) from None
    completions = collect_completions(rows)
    completions.warnings += warnings
    return completions


def collect_completions(
    rows: Iterable[tuple[str, Any]], skip_rows_without_text: bool = False
) -> Completions:
    """Completions from ``(where, row)`` pairs; ``where`` names the row in error messages.

    With ``skip_rows_without_text`` a row holding neither ``completion`` nor ``completions``
    is passed over (a data file whose rows only some carry answers) instead of refused.
    """
    completions = Completions({})
    first: dict[str, str] = {}
    for where, row in rows:
        answered = isinstance(row, dict) and ("completion" in row or "completions" in row)
        if skip_rows_without_text and not answered:
            continue
        identifier, texts = _completion_row(row, where)
        if identifier in first:
            raise CompletionsError(
                f"{where}: id {identifier!r} already given at {first[identifier]}; "
                "put several samples in one row as completions: [...]"
            )
        first[identifier] = where
        completions.texts[identifier] = texts
    return completions


def _completion_row(row: Any, where: str) -> tuple[str, list[str]]:
    if not isinstance(row, dict) or not isinstance(row.get("id"), (str, int)):
        raise CompletionsError(f"{where}: expected an object with an id")
    texts = row.get("completions", [row["completion"]] if "completion" in row else None)
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise CompletionsError(f"{where}: expected 'completion' (text) or 'completions' (texts)")
    return str(row["id"]), texts


def pass_at_k(samples: int, correct: int, k: int) -> float:
    """Unbiased pass@k: probability that k of ``samples`` draws include a correct one."""
    if samples - correct < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(samples - correct + 1, samples + 1))


def best_ratio_at_k(ratios: Sequence[float], k: int) -> float:
    """Unbiased expected maximum of k ratios drawn without replacement from ``ratios``."""
    ordered = sorted(ratios)
    total = math.comb(len(ordered), k)
    return sum(math.comb(i, k - 1) * ordered[i] for i in range(k - 1, len(ordered))) / total


AVERAGING = (
    "per instance: each instance's samples are averaged first, then every instance weighs the "
    "same (an instance with 50 samples counts as much as one with 1); instances without a "
    "completion are left out and counted as missing"
)
"""The averaging rule of every rate in a report, written into report.json and report.md."""


@dataclass
class Metrics:
    """Aggregated figures for a group of instances (a task, a category, a tier, everything).

    ``instances`` counts the instances that were scored (at least one completion) and
    ``missing`` those without any, which no rate includes. The rates are ``None`` when no
    instance was scored.
    """

    instances: int
    missing: int
    samples: int
    success_rate: float | None
    average_ratio: float | None
    optimal_rate: float | None
    format_rate: float | None
    mean_reward: float | None
    pass_at_k: dict[str, float]
    best_ratio_at_k: dict[str, float]


def summarize(groups: Sequence[Sequence[Score]], ks: Sequence[int] = ()) -> Metrics:
    """Metrics of instances given as their samples' scores (pass@k for each k in ``ks``).

    Each rate is averaged within an instance first, then over instances (:data:`AVERAGING`).
    An empty group is an instance without a completion: counted as missing, never scored.
    """
    answered = [group for group in groups if group]

    def rate(value: Callable[[Score], float]) -> float | None:
        if not answered:
            return None
        per_instance = [sum(value(s) for s in group) / len(group) for group in answered]
        return round(sum(per_instance) / len(answered), 6)

    def over_instances(values: Iterable[float]) -> float:
        return round(sum(values) / (len(answered) or 1), 6)

    return Metrics(
        instances=len(answered),
        missing=len(groups) - len(answered),
        samples=sum(len(group) for group in answered),
        success_rate=rate(lambda s: s.feasible),
        average_ratio=rate(lambda s: s.optimality),
        optimal_rate=rate(lambda s: s.optimality >= 1.0),
        format_rate=rate(lambda s: s.format_ok),
        mean_reward=rate(lambda s: s.reward),
        pass_at_k={
            str(k): over_instances(
                pass_at_k(len(g), sum(s.feasible for s in g), k) for g in answered
            )
            for k in ks
        },
        best_ratio_at_k={
            str(k): over_instances(best_ratio_at_k([s.optimality for s in g], k) for g in answered)
            for k in ks
        },
    )


def _ks(samples: int) -> list[int]:
    """The k of pass@k to report: powers of two up to the samples per instance, and that."""
    if samples < 2:
        return []
    return sorted({*(2**p for p in range(samples.bit_length()) if 2**p <= samples), samples})


@dataclass
class ScoredRow:
    """The scores of one row's completions (none when the row had no completion)."""

    id: str
    task: str
    scores: list[Score]
    tier: str = "custom"
    """The row's tier, ``"custom"`` when it has none (a difficulty or an imported row)."""
    original_id: str | None = None
    """For a variant row: the id of the instance it is a variant of."""


def reported_ks(rows: Iterable[ScoredRow]) -> list[int]:
    """The k of pass@k a report gives: up to the fewest samples of an answered instance."""
    return _ks(min((len(row.scores) for row in rows if row.scores), default=1))


@dataclass
class ScoredRows:
    """Every row's scores, and which rows had no completion or which ids matched no row."""

    rows: list[ScoredRow]
    missing: list[str]
    unknown: list[str]
    samples: int


def score_rows(
    rows: Iterable[Mapping[str, Any]],
    completions: Completions,
    progress: bool = False,
    reward: RewardSpec = None,
    tiers_checked: Collection[str] | None = None,
) -> ScoredRows:
    """Score every completion of every row against the row's reference (computed if absent).

    A row without completions is never scored: its :class:`ScoredRow` has no scores and its id
    is listed in ``missing``. Raises ``RecordError`` on a bad row. ``progress``: show progress
    (a bar on a terminal, periodic lines otherwise). ``reward`` (a preset name or weights)
    changes only each score's ``reward``: the verdicts, Success Rate and Average Ratio stay on
    the np-engine definitions. ``tiers_checked``: the ids whose tier was checked (regenerated,
    or an official row); any other row counts under tier ``"custom"`` (``None``: every row's
    tier is taken as given, for rows the caller made).
    """
    weights = resolve_reward(reward)
    rows = list(rows)
    samples = max((len(texts) for texts in completions.texts.values()), default=1)
    if len({len(texts) for texts in completions.texts.values()}) > 1:
        completions.warnings.append(
            "instances have different numbers of samples (each instance still weighs the same)"
        )
    known = {str(row.get("id")) for row in rows}
    missing: list[str] = []
    scored: list[ScoredRow] = []
    meter = Progress(len(rows), "scoring", enabled=progress)
    for row in rows:
        meter.update(done=1)
        task, instance, reference = load_solved_row(row)
        identifier = str(row.get("id"))
        texts = completions.texts.get(identifier)
        if texts is None:
            missing.append(identifier)
            texts = []
        scores = task.score_many(instance, texts, reference)
        if weights != DEFAULT_REWARD:
            scores = [
                replace(score, reward=task.score(instance, text, reference, weights).reward)
                for score, text in zip(scores, texts, strict=True)
            ]
        original = row.get("original_id")
        checked = tiers_checked is None or identifier in tiers_checked
        scored.append(
            ScoredRow(
                identifier,
                task.name,
                scores,
                str(row.get("tier") or "custom") if checked else "custom",
                None if original is None else str(original),
            )
        )
    meter.close()
    unknown = sorted(identifier for identifier in completions.texts if identifier not in known)
    return ScoredRows(scored, missing, unknown, samples)


def by_tier(rows: Iterable[ScoredRow], ks: Sequence[int] = ()) -> dict[str, Metrics]:
    """Metrics per tier (pass@k for each k in ``ks``), the standard tiers in their order first,
    then any other in name order."""
    groups: dict[str, list[list[Score]]] = defaultdict(list)
    for row in rows:
        groups[row.tier].append(row.scores)
    order = [tier for tier in TIERS if tier in groups] + sorted(set(groups) - set(TIERS))
    return {tier: summarize(groups[tier], ks) for tier in order}


def variant_groups(rows: Iterable[ScoredRow]) -> dict[str, list[ScoredRow]]:
    """The answered rows of each original that has at least two of them, by original id.

    A variant row names its original in ``original_id``; the original's own row, when the
    dataset holds it, joins its variants (whether or not it names itself).
    """
    rows = list(rows)
    originals = {row.original_id for row in rows if row.original_id is not None}
    groups: dict[str, list[ScoredRow]] = defaultdict(list)
    for row in rows:
        key = row.original_id or (row.id if row.id in originals else None)
        if key is not None and row.scores:
            groups[key].append(row)
    return {key: group for key, group in groups.items() if len(group) >= 2}


def consistency_of(group: Sequence[ScoredRow]) -> float:
    """How often the verdicts of one original's variants agree: the share of sample indices
    (up to the fewest samples among them) at which every variant gets the same verdict."""
    depth = min(len(row.scores) for row in group)
    return consistency([[verdict_label(row.scores[j]) for row in group] for j in range(depth)])


def _consistency_fields(per_original: Sequence[float]) -> dict[str, Any]:
    """The report fields for a group of originals: mean consistency and how many originals."""
    return {
        "consistency": round(sum(per_original) / len(per_original), 6),
        "variant_originals": len(per_original),
    }


class Problems(TypedDict):
    """What was wrong with the completions given to :func:`evaluate`."""

    missing_completions: list[str]
    unknown_ids: list[str]
    warnings: list[str]


class Report(TypedDict):
    """An evaluation report (``report.json``), schema :data:`REPORT_SCHEMA_VERSION`."""

    schema_version: int
    npgym_version: str
    source: str
    dataset: str
    """What the dataset is: ``"NP-Bench version N"`` only when its rows are exactly version N's,
    else ``"custom (...)"`` (see :func:`npgym.npbench.certify.provenance`)."""
    bench_version: int | None
    """N when the rows are exactly NP-Bench version N's, ``None`` otherwise (whatever the
    dataset's manifest says)."""
    verification: str
    """Which checks of the dataset ran before scoring (manifest, regeneration, --deep)."""
    averaging: str
    """The averaging rule of every rate (:data:`AVERAGING`)."""
    samples_per_instance: int
    tasks: dict[str, dict[str, Any]]
    """Per task: its ``category``, the :class:`Metrics` fields and, with variant rows,
    ``consistency`` and ``variant_originals``."""
    categories: dict[str, dict[str, Any]]
    tiers: dict[str, dict[str, Any]]
    """Per tier (``"custom"`` for rows without one): the :class:`Metrics` fields."""
    overall: dict[str, Any]
    problems: Problems


def evaluate(
    rows: Iterable[Mapping[str, Any]],
    completions: Completions,
    source: str = "",
    reward: RewardSpec = None,
    verification: str = "",
    provenance: Provenance | None = None,
    tiers_checked: Collection[str] | None = None,
) -> Report:
    """Score every completion of every row and aggregate; returns the report.

    Success Rate, Average Ratio and the other verdict metrics always use the ``"np-engine"``
    reward (NP-Bench's definition); ``reward`` (a preset name or config) sets the mean reward.
    What the dataset is (``provenance``, computed from ``rows`` by
    :func:`npgym.npbench.certify.provenance` when not given) is recorded in the report, so that
    scores on different datasets are never compared unknowingly; so is ``verification``, which
    checks of the dataset ran (see :mod:`npgym.npbench.certify`). ``tiers_checked``: see
    :func:`score_rows`.

    Instances without completions are not scored: they are counted as ``missing`` (per task,
    category, tier and overall) and listed in the report's ``problems``, as are ids that match
    no instance.
    """
    rows = list(rows)
    if provenance is None:
        from npgym.npbench.certify import provenance as provenance_of

        provenance = provenance_of(rows)
    scored = score_rows(rows, completions, reward=reward, tiers_checked=tiers_checked)
    per_task: dict[str, list[list[Score]]] = defaultdict(list)
    for row in scored.rows:
        per_task[row.task].append(row.scores)
    ks = reported_ks(scored.rows)
    by_category: dict[str, list[list[Score]]] = defaultdict(list)
    for task_name, groups in per_task.items():
        by_category[get_task(task_name).category] += groups
    tasks: dict[str, dict[str, Any]] = {
        name: {"category": get_task(name).category, **asdict(summarize(groups, ks))}
        for name, groups in per_task.items()
    }
    overall = asdict(summarize([g for groups in per_task.values() for g in groups], ks))
    agreement: dict[str, list[float]] = defaultdict(list)
    for group in variant_groups(scored.rows).values():
        agreement[group[0].task].append(consistency_of(group))
    for name, values in agreement.items():
        tasks[name] |= _consistency_fields(values)
    if agreement:
        overall |= _consistency_fields([v for values in agreement.values() for v in values])
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "npgym_version": __version__,
        "source": source,
        "dataset": provenance.label,
        "bench_version": provenance.bench_version,
        "verification": verification,
        "averaging": AVERAGING,
        "samples_per_instance": scored.samples,
        "tasks": tasks,
        "categories": {
            name: asdict(summarize(by_category[name], ks))
            for name in CATEGORIES
            if name in by_category
        },
        "tiers": {name: asdict(metrics) for name, metrics in by_tier(scored.rows, ks).items()},
        "overall": overall,
        "problems": {
            "missing_completions": scored.missing,
            "unknown_ids": scored.unknown,
            "warnings": completions.warnings,
        },
    }


_COLUMNS = [
    ("success_rate", "Success Rate"),
    ("average_ratio", "Average Ratio"),
    ("optimal_rate", "Optimal"),
    ("format_rate", "Format"),
]


def dataset_label(report: Mapping[str, Any]) -> str:
    """Which dataset a report scores (its ``dataset``): "NP-Bench version N" only for exactly
    that version's rows (:func:`npgym.npbench.certify.provenance`), else "custom (...)"."""
    label = report.get("dataset")
    return label if isinstance(label, str) else "a dataset of unknown provenance (report < 4)"


def _opening(report: Report) -> str:
    """The report's first sentences: who answered what, and the two headline numbers."""
    overall = report["overall"]
    missing = overall.get("missing", 0)
    unanswered = f" ({missing} more got no answer and are not scored)" if missing else ""
    tasks = len(report["tasks"])
    return (
        f"This report scores the answers of `{report['source']}` to {overall['instances']} "
        f"instances of {tasks} task{'s' if tasks != 1 else ''}{unanswered}, from "
        f"{dataset_label(report)}. Overall: Success Rate "
        f"{_fmt(overall['success_rate'])} (the share of feasible answers) and Average Ratio "
        f"{_fmt(overall['average_ratio'])} (the mean ratio of an answer to the reference, 1 at "
        "best); the columns are explained under the tables."
    )


def _legend(ks: Sequence[int]) -> list[str]:
    """What each column of the tables means (docs/contract.md, "Metrics")."""
    lines = [
        "## Columns",
        "",
        "- **n**: instances of the group that got an answer, and are scored; **missing**: "
        "those without any answer (a failed request), left out of every rate.",
        "- **Success Rate**: the share of answers that are feasible (readable and valid).",
        "- **Average Ratio**: the mean ratio of an answer's objective to the reference's, "
        "clipped to 1, with infeasible and unreadable answers counted as 0.",
        "- **Optimal**: the share of answers as good as the reference (ratio 1); NP-Bench "
        "references are proven optima.",
        "- **Format**: the share of answers that are readable: an `Answer:` line in the "
        "task's format, feasible or not.",
    ]
    if ks:
        lines += [
            "- **pass@k**: the estimated chance that at least one of k samples is feasible; "
            "**best-ratio@k**: the expected best ratio among k samples.",
        ]
    return lines


def markdown(report: Report) -> str:
    """The report as markdown tables: per task, category, tier, overall, then problems."""
    ks = list(report["overall"]["pass_at_k"])
    header = ["", "n", "missing", *(title for _, title in _COLUMNS)]
    header += [f"pass@{k}" for k in ks] + [f"best-ratio@{k}" for k in ks]

    def line(name: str, metrics: Mapping[str, Any]) -> str:
        cells = [name, str(metrics["instances"]), str(metrics.get("missing", 0))]
        cells += [_fmt(metrics[key]) for key, _ in _COLUMNS]
        cells += [_fmt(metrics["pass_at_k"].get(k)) for k in ks]
        cells += [_fmt(metrics["best_ratio_at_k"].get(k)) for k in ks]
        return "| " + " | ".join(cells) + " |"

    label = dataset_label(report)

    def table(title: str, groups: Mapping[str, Mapping[str, Any]]) -> list[str]:
        first = f"{title} (on {label})"  # every table names its dataset
        head = ["| " + " | ".join([first, *header[1:]]) + " |", "|" + "---|" * len(header)]
        return head + [line(name, metrics) for name, metrics in groups.items()]

    parts = [
        f"# Evaluation on {label}: {report['source']}",
        "",
        _opening(report),
        "",
        f"Dataset checks: {report.get('verification') or 'not recorded'}.",
        f"{report['samples_per_instance']} sample(s) per instance. Averaging: "
        f"{report.get('averaging', 'all samples pooled (a report from before schema 2)')}.",
        "",
        *table("task", report["tasks"]),
        "",
        *table("category", report["categories"]),
        "",
    ]
    if report.get("tiers"):
        parts += [*table("tier", report["tiers"]), ""]
    parts += table("overall", {"all tasks": report["overall"]})
    parts += ["", *_legend(ks)]
    consistent = {
        name: metrics for name, metrics in report["tasks"].items() if "consistency" in metrics
    }
    if consistent:
        parts += [
            "",
            "## Consistency across variants",
            "",
            "Share of originals whose verdicts (format error, infeasible, suboptimal, optimal) "
            "agree across all their variants.",
            "",
            f"| task (on {label}) | originals | consistency |",
            "|---|---|---|",
        ]
        for name, metrics in [*consistent.items(), ("all tasks", report["overall"])]:
            parts.append(
                f"| {name} | {metrics['variant_originals']} | {metrics['consistency']:.3f} |"
            )
    problems = report["problems"]
    notes = [f"- {warning}" for warning in problems["warnings"]]
    if problems["missing_completions"]:
        count = len(problems["missing_completions"])
        notes.append(
            f"- {count} instances had no completion (not scored; counted as missing): "
            + ", ".join(problems["missing_completions"][:10])
        )
    if problems["unknown_ids"]:
        unknown = problems["unknown_ids"]
        notes.append(
            f"- {len(unknown)} completion ids match no instance: {', '.join(unknown[:10])}"
        )
    if notes:
        parts += ["", "## Problems", "", *notes]
    return "\n".join(parts) + "\n"


def read_report(path: Path) -> Report:
    """A ``report.json`` (see :func:`npgym.npbench.report.write_report`); ``ValueError`` naming
    the file when it is not one (bad JSON, or without the tables :func:`compare` reads)."""
    try:
        report = read_json_file(path)  # bounded in size and nesting
    except ValueError as error:
        reason = str(error).removeprefix(f"{path}: ")
        raise ValueError(f"{path}: not a report.json ({reason})") from None
    tables_ok = (
        isinstance(report, dict)
        and isinstance(report.get("source"), str)
        and isinstance(report.get("tasks"), dict)
        and isinstance(report.get("overall"), dict)
        and all(
            isinstance(table, dict)
            and all(isinstance(table.get(key), (int, float)) for key in _COMPARED)
            for table in (*report["tasks"].values(), report["overall"])
        )
    )
    if not tables_ok:
        raise ValueError(f"{path}: not a report.json (no tasks and overall tables to compare)")
    return cast(Report, report)


_COMPARED = ("success_rate", "average_ratio")
"""The figures :func:`compare` puts side by side."""


def compare(first: Mapping[str, Any], second: Mapping[str, Any]) -> str:
    """Two reports side by side (markdown): Success Rate and Average Ratio with differences.

    Reports on different datasets hold different instances: the table says so first. The table
    names both datasets (their labels, :func:`dataset_label`).
    """
    versions = first.get("bench_version"), second.get("bench_version")
    labels = dataset_label(first), dataset_label(second)
    if versions[0] != versions[1] and None not in versions:
        warning = (
            f"Warning: NP-Bench versions differ ({versions[0]} vs {versions[1]}): different "
            "instances, so the deltas compare different benchmarks.\n\n"
        )
    elif labels[0] != labels[1]:
        warning = (
            f"Warning: the datasets differ ({labels[0]} vs {labels[1]}): the deltas may "
            "compare different instances.\n\n"
        )
    else:
        warning = ""
    warning += f"Datasets: {labels[0]} ({first['source']}) vs {labels[1]} ({second['source']}).\n\n"
    names = [*dict.fromkeys([*first["tasks"], *second["tasks"]])]
    rows = [(name, first["tasks"].get(name), second["tasks"].get(name)) for name in names]
    rows.append(("overall", first["overall"], second["overall"]))
    lines = [
        f"| task | SR {first['source']} | SR {second['source']} | delta "
        f"| AR {first['source']} | AR {second['source']} | delta |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, a, b in rows:
        cells = [name]
        for key in _COMPARED:
            left = a[key] if a else None
            right = b[key] if b else None
            delta = f"{right - left:+.3f}" if left is not None and right is not None else "-"
            cells += [_fmt(left), _fmt(right), delta]
        lines.append("| " + " | ".join(cells) + " |")
    return warning + "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    """A rate with three decimals; ``-`` where there is none (no scored instance)."""
    return "-" if value is None else f"{value:.3f}"
