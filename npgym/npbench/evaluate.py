"""Evaluate completions on a built dataset: NP-Bench metrics, reports, plots, comparisons.

Metrics (TASKS.md, "Metrics"), over every sample of every instance:

- Success Rate: share of feasible answers (each sample counts; with k samples this is not
  pass@k, the published mislabelling).
- Average Ratio: mean clipped optimality ratio, infeasible answers scored 0.
- optimal rate, format rate and mean reward alongside.
- With k samples per instance: pass@k (unbiased estimator of the chance that at least one of
  k samples is feasible) and best-ratio@k (unbiased estimator of the expected best ratio among
  k samples), both averaged over instances.

Results are given per task, per NP-Bench category and overall (all samples pooled).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import npgym
from npgym.records import record_instance, record_reference
from npgym.registry import get_task
from npgym.results import Score

CATEGORIES = (
    "graph clustering",
    "resource scheduling",
    "graph partitioning",
    "subset selection",
    "path planning",
)


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
    line, a row without id or text, or an id given twice is an error naming the line.
    """
    raw = Path(path).read_text(encoding="utf-8")
    lines = raw.split("\n")
    rows, warnings = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"{path}:{number}", json.loads(line)))
        except json.JSONDecodeError as error:
            if number == len(lines) and not raw.endswith("\n"):
                warnings.append(f"{path}:{number}: truncated last line ignored")
                continue
            raise CompletionsError(f"{path}:{number}: not valid JSON ({error.msg})") from error
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


@dataclass
class Metrics:
    """Aggregated figures for a group of instances (a task, a category, everything)."""

    instances: int
    samples: int
    success_rate: float
    average_ratio: float
    optimal_rate: float
    format_rate: float
    mean_reward: float
    pass_at_k: dict[str, float]
    best_ratio_at_k: dict[str, float]


def summarize(groups: list[list[Score]], ks: Sequence[int] = ()) -> Metrics:
    """Metrics of instances given as their samples' scores (pass@k for each k in ``ks``)."""
    scores = [score for group in groups for score in group]
    count = len(scores) or 1

    def mean(values: Iterable[float]) -> float:
        return round(sum(values) / count, 6)

    def over_instances(values: Iterable[float]) -> float:
        return round(sum(values) / (len(groups) or 1), 6)

    return Metrics(
        instances=len(groups),
        samples=len(scores),
        success_rate=mean(s.feasible for s in scores),
        average_ratio=mean(s.optimality for s in scores),
        optimal_rate=mean(s.optimality >= 1.0 for s in scores),
        format_rate=mean(s.format_ok for s in scores),
        mean_reward=mean(s.reward for s in scores),
        pass_at_k={
            str(k): over_instances(pass_at_k(len(g), sum(s.feasible for s in g), k) for g in groups)
            for k in ks
        },
        best_ratio_at_k={
            str(k): over_instances(best_ratio_at_k([s.optimality for s in g], k) for g in groups)
            for k in ks
        },
    )


def _ks(samples: int) -> list[int]:
    """The k of pass@k to report: powers of two up to the samples per instance, and that."""
    if samples < 2:
        return []
    return sorted({*(2**p for p in range(samples.bit_length()) if 2**p <= samples), samples})


def evaluate(
    rows: Iterable[dict[str, Any]], completions: Completions, source: str = ""
) -> dict[str, Any]:
    """Score every completion of every row and aggregate; returns the report as a dict.

    Instances without completions count as format failures (each of their k samples); ids
    that match no instance are listed in the report's ``problems``.
    """
    rows = list(rows)
    known = {str(row["id"]) for row in rows}
    samples = max((len(texts) for texts in completions.texts.values()), default=1)
    if len({len(texts) for texts in completions.texts.values()}) > 1:
        completions.warnings.append("instances have different numbers of samples")
    missing: list[str] = []
    per_task: dict[str, list[list[Score]]] = defaultdict(list)
    for row in rows:
        task, instance = record_instance(row)
        reference = record_reference(row) or task.reference(instance)
        texts = completions.texts.get(str(row["id"]))
        if texts is None:
            missing.append(str(row["id"]))
            texts = [""] * samples
        per_task[task.name].append([task.score(instance, text, reference) for text in texts])
    ks = _ks(min((len(group) for groups in per_task.values() for group in groups), default=1))
    by_category: dict[str, list[list[Score]]] = defaultdict(list)
    for task_name, groups in per_task.items():
        by_category[get_task(task_name).category] += groups
    unknown = sorted(identifier for identifier in completions.texts if identifier not in known)
    return {
        "npgym_version": npgym.__version__,
        "source": source,
        "samples_per_instance": samples,
        "tasks": {
            name: {"category": get_task(name).category, **asdict(summarize(groups, ks))}
            for name, groups in per_task.items()
        },
        "categories": {
            name: asdict(summarize(by_category[name], ks))
            for name in CATEGORIES
            if name in by_category
        },
        "overall": asdict(summarize([g for groups in per_task.values() for g in groups], ks)),
        "problems": {
            "missing_completions": missing,
            "unknown_ids": unknown,
            "warnings": completions.warnings,
        },
    }


_COLUMNS = [
    ("success_rate", "Success Rate"),
    ("average_ratio", "Average Ratio"),
    ("optimal_rate", "Optimal"),
    ("format_rate", "Format"),
]


def markdown(report: dict[str, Any]) -> str:
    """The report as markdown tables: per task, per category, overall, then problems."""
    ks = list(report["overall"]["pass_at_k"])
    header = ["", "n", *(title for _, title in _COLUMNS)]
    header += [f"pass@{k}" for k in ks] + [f"best-ratio@{k}" for k in ks]

    def line(name: str, metrics: dict[str, Any]) -> str:
        cells = [name, str(metrics["instances"])]
        cells += [f"{metrics[key]:.3f}" for key, _ in _COLUMNS]
        cells += [f"{metrics['pass_at_k'][k]:.3f}" for k in ks]
        cells += [f"{metrics['best_ratio_at_k'][k]:.3f}" for k in ks]
        return "| " + " | ".join(cells) + " |"

    def table(title: str, groups: dict[str, Any]) -> list[str]:
        head = ["| " + " | ".join([title, *header[1:]]) + " |", "|" + "---|" * len(header)]
        return head + [line(name, metrics) for name, metrics in groups.items()]

    parts = [
        f"# NP-Bench evaluation: {report['source']}",
        "",
        f"{report['samples_per_instance']} sample(s) per instance.",
        "",
        *table("task", report["tasks"]),
        "",
        *table("category", report["categories"]),
        "",
        *table("overall", {"all tasks": report["overall"]}),
    ]
    problems = report["problems"]
    notes = [f"- {warning}" for warning in problems["warnings"]]
    if problems["missing_completions"]:
        count = len(problems["missing_completions"])
        notes.append(f"- {count} instances had no completion (scored as format failures)")
    if problems["unknown_ids"]:
        unknown = problems["unknown_ids"]
        notes.append(
            f"- {len(unknown)} completion ids match no instance: {', '.join(unknown[:10])}"
        )
    if notes:
        parts += ["", "## Problems", "", *notes]
    return "\n".join(parts) + "\n"


def plot(report: dict[str, Any], path: str | Path) -> None:
    """Bar chart of Success Rate and Average Ratio per task, and overall (``npgym[plot]``)."""
    try:
        import matplotlib
    except ImportError as error:
        raise ImportError("plotting needs matplotlib: pip install 'npgym[plot]'") from error

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [*report["tasks"], "overall"]
    groups = [*report["tasks"].values(), report["overall"]]
    positions = range(len(names))
    figure, axes = plt.subplots(figsize=(max(6.0, 0.9 * len(names) + 2), 4.0))
    width = 0.38
    for offset, (key, title) in zip((-width / 2, width / 2), _COLUMNS[:2], strict=False):
        axes.bar([p + offset for p in positions], [g[key] for g in groups], width, label=title)
    axes.set_xticks(list(positions), names, rotation=30, ha="right")
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("score")
    axes.set_title(f"NP-Bench: {report['source']}")
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def write_report(report: dict[str, Any], folder: str | Path) -> list[Path]:
    """Write ``report.json``, ``report.md`` and ``report.png`` into ``folder``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.json", out / "report.md", out / "report.png"]
    paths[0].write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    paths[1].write_text(markdown(report))
    plot(report, paths[2])
    return paths


def compare(first: dict[str, Any], second: dict[str, Any]) -> str:
    """Two reports side by side (markdown): Success Rate and Average Ratio with differences."""
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
        for key in ("success_rate", "average_ratio"):
            left = a[key] if a else None
            right = b[key] if b else None
            delta = f"{right - left:+.3f}" if left is not None and right is not None else "-"
            cells += [_fmt(left), _fmt(right), delta]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
