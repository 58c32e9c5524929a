"""Report pictures: plain bars by default, the log-shortfall view for near-perfect agents.

:func:`plot_report` draws ``report.png``: per task and overall, Success Rate and Average Ratio
on a 0-1 axis with each value written on its bar (``style="bars"``, the default), or how far
they fall short of 1 on a log scale (``style="shortfall"``: 0.99 and 0.999 look different; a
perfect score is marked as such). A second panel shows SR and AR per tier, only when the report
has several tiers. :func:`plot_compare` draws several reports side by side (grouped bars, one
colour per model), SR above and AR below. :func:`tier_metrics` gives the per-tier figures from
the rows and completions (scoring is cheap: references come from the rows).
:func:`write_gallery` draws the worst and the best answer of each task (:mod:`npgym.render`)
and returns the markdown that shows them. ``evaluate.evaluate`` puts the per-tier figures in
every report and ``report.write_report`` draws ``report.png`` and, when asked, the gallery.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from npgym.npbench.evaluate import Completions, by_tier, reported_ks, score_rows
from npgym.outputs import check_output_folder, open_binary_output
from npgym.records import record_instance, record_reference
from npgym.results import Score
from npgym.task import Task

if TYPE_CHECKING:
    from matplotlib.axes import Axes

PlotStyle = Literal["bars", "shortfall"]
PLOT_STYLES: tuple[PlotStyle, ...] = ("bars", "shortfall")
GAP_FLOOR = 1e-3
"""Shortfall view: gaps below this (scores above 0.999) are drawn at this height, as perfect."""
METRICS = (("success_rate", "Success Rate"), ("average_ratio", "Average Ratio"))


def tier_metrics(rows: Iterable[Mapping[str, Any]], completions: Completions) -> dict[str, Any]:
    """Metrics per tier (``row["tier"]``; ``"custom"`` when a row has none), tiers in order.

    As in ``evaluate``: an instance without completions is not scored but counted as missing.
    """
    scored = score_rows(rows, completions)
    return {
        tier: asdict(metrics)
        for tier, metrics in by_tier(scored.rows, reported_ks(scored.rows)).items()
    }


def plot_report(report: Mapping[str, Any], path: str | Path, style: PlotStyle = "bars") -> Path:
    """Write ``report`` (an ``evaluate`` report) as a PNG: SR and AR per task and overall, and
    per tier in a second panel when the report's ``tiers`` section holds several tiers.

    A task with missing answers says how many under its name; a group without any scored
    instance (every answer missing) gets no bar and the label "no answers"."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _check_style(style)
    names, groups = _groups(report)
    tiers = report.get("tiers") or {}
    panels = 2 if len(tiers) > 1 else 1
    height = 4.8 + (2.8 if panels == 2 else 0.0)
    figure = Figure(figsize=(max(7.0, 0.9 * len(names) + 2.5), height), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.subplots(panels, 1, squeeze=False, height_ratios=(3, 2)[:panels])[:, 0]
    series = [(label, [_rate(group[key]) for group in groups]) for key, label in METRICS]
    _bars(axes[0], names, series, style)
    axes[0].set_title(
        f"{report.get('dataset') or 'NP-Bench'}, {report['source']}: Success Rate and "
        "Average Ratio per task "
        f"({_explain(style)})",
        fontsize=10,
    )
    if panels == 2:
        labels = list(tiers)
        per_tier = [(label, [_rate(tiers[t][key]) for t in labels]) for key, label in METRICS]
        _bars(axes[1], labels, per_tier, style)
        axes[1].set_title("Success Rate and Average Ratio per tier", fontsize=10)
    figure.tight_layout()
    target = Path(path)
    with open_binary_output(target, in_folder=True) as handle:
        figure.savefig(handle, format="png")
    return target


def plot_compare(
    reports: Sequence[Mapping[str, Any]], path: str | Path, style: PlotStyle = "bars"
) -> Path:
    """Write several reports side by side as a PNG: Success Rate per task and overall above,
    Average Ratio below, one bar (and colour) per report, named by its ``source``.

    Tasks are the union of the reports' tasks, in the registry's order (:func:`registry_order`,
    as in ``report.png``); a task that a report lacks
    gets no bar and the label "no answers"."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _check_style(style)
    if len(reports) < 2:
        raise ValueError(f"comparing needs at least two reports, got {len(reports)}")
    tasks = registry_order(name for report in reports for name in report["tasks"])
    names = [*tasks, "overall"]
    width_per_group = 0.9 + 0.35 * (len(reports) - 2)
    figure = Figure(figsize=(max(7.0, width_per_group * len(names) + 3.0), 9.0), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.subplots(2, 1)
    for axis, (key, label) in zip(axes, METRICS, strict=True):
        series = [
            (
                str(report["source"]),
                [_rate((report["tasks"].get(name) or {}).get(key)) for name in tasks]
                + [_rate(report["overall"][key])],
            )
            for report in reports
        ]
        _bars(axis, names, series, style)
        axis.set_title(f"{label} per task, model by model ({_explain(style)})", fontsize=10)
    figure.tight_layout()
    target = Path(path)
    with open_binary_output(target, in_folder=True) as handle:
        figure.savefig(handle, format="png")
    return target


def registry_order(names: Iterable[str]) -> list[str]:
    """Task names without repeats in the registry's order (as ``report.png`` and the report's
    tables have them), the names the registry does not list (task families) after them in
    first-seen order. A report.json holds its tasks sorted by name, so order is restored."""
    from npgym.registry import list_tasks

    rank = {name: index for index, name in enumerate(list_tasks())}
    unique = list(dict.fromkeys(names))
    return sorted(unique, key=lambda name: (rank.get(name, len(rank)), unique.index(name)))


def _check_style(style: str) -> None:
    if style not in PLOT_STYLES:
        raise ValueError(f"unknown plot style {style!r}: use one of {', '.join(PLOT_STYLES)}")


def _explain(style: PlotStyle) -> str:
    if style == "bars":
        return "higher is better, 1 is perfect"
    return f"shortfall from 1, log scale: lower is better; bars at {GAP_FLOOR:g} are perfect"


def _groups(report: Mapping[str, Any]) -> tuple[list[str], list[Mapping[str, Any]]]:
    """The bar groups of a report, per task (in the registry's order) then overall, with
    missing answers in the names."""
    tasks = registry_order(report["tasks"])
    groups = [*(report["tasks"][name] for name in tasks), report["overall"]]
    names = [
        name + (f"\n({group['missing']} missing)" if group.get("missing") else "")
        for name, group in zip([*tasks, "overall"], groups, strict=True)
    ]
    return names, groups


def _bars(
    axis: Axes, names: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], style: str
) -> None:
    """Grouped bars, one group per name and one bar per series, each value written on its bar.

    ``bars``: the value on a 0-1 axis. ``shortfall``: ``1 - value`` on a log axis, floored at
    :data:`GAP_FLOOR`. A NaN value (nothing scored) gets no bar and the label "no answers"."""
    width = 0.8 / len(series)
    crowded = len(series) > 2
    for number, (label, values) in enumerate(series):
        spots = [index + (number - (len(series) - 1) / 2) * width for index in range(len(names))]
        if style == "bars":
            heights = [0.0 if math.isnan(v) else v for v in values]
        else:
            heights = [GAP_FLOOR if math.isnan(v) else max(1.0 - v, GAP_FLOOR) for v in values]
        axis.bar(spots, heights, width * 0.95, label=label)
        for spot, value, height in zip(spots, values, heights, strict=True):
            text = "no answers" if math.isnan(value) else _value(value, style)
            top = height * 1.12 if style == "shortfall" else height + 0.01
            vertical = crowded or text == "no answers" or style == "shortfall"
            axis.text(
                spot,
                top,
                text,
                ha="center",
                va="bottom",
                fontsize=7,
                rotation=90 if vertical else 0,
            )
    axis.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    if style == "bars":
        axis.set_ylim(0.0, 1.18)
        axis.set_yticks([0.0, 0.25, 0.5, 0.75, 1.0])
        axis.axhline(1.0, color="grey", lw=0.6, ls=":")
    else:
        axis.set_yscale("log")
        axis.set_ylim(GAP_FLOOR * 0.8, 5.0)
        axis.set_ylabel("shortfall from 1 (log scale)", fontsize=8)
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _value(value: float, style: str) -> str:
    """A rate as written on its bar: three decimals, as in report.md, for every metric."""
    text = f"{value:.3f}"
    return text + " (perfect)" if style == "shortfall" and value >= 1.0 else text


def _rate(value: float | None) -> float:
    """A report rate as a float; NaN (drawn as "no answers") where the report has ``None``."""
    return math.nan if value is None else float(value)


def write_gallery(
    rows: Iterable[Mapping[str, Any]], completions: Completions, folder: str | Path
) -> str:
    """Draw each task's worst and best answer (lowest and highest reward, first in row order
    on a tie) into ``folder/gallery/`` and return a markdown section showing them. When every
    answer of a task scored the same, one picture (``<task>-all.png``) says so instead.

    Only given answers are drawn: a row without completions is missing, not an answer."""
    from npgym.render import draw_answer, save_png

    picked: dict[str, list[tuple[float, str, Task[Any, Any], Any, Any, str, Score]]] = {}
    for row in rows:
        texts = completions.texts.get(str(row["id"]))
        if texts is None:
            continue
        task, instance = record_instance(row)
        reference = record_reference(row) or task.reference(instance)
        for text in texts:
            score = task.score(instance, text, reference)
            entry = (score.reward, str(row["id"]), task, instance, reference, text, score)
            best_and_worst = picked.setdefault(task.name, [entry, entry])
            if score.reward < best_and_worst[0][0]:
                best_and_worst[0] = entry
            if score.reward > best_and_worst[1][0]:
                best_and_worst[1] = entry
    out = check_output_folder(Path(folder) / "gallery")
    out.mkdir(parents=True, exist_ok=True)
    lines = ["## Gallery: worst and best answer per task", ""]
    for name, pair in picked.items():
        # Worst and best start as the first answer and move only on a strictly lower or
        # higher reward: the same entry means every answer scored the same.
        same = pair[0] is pair[1]
        labels = ("every answer",) if same else ("worst", "best")
        cells, images = [], []
        for label, (reward, row_id, task, instance, reference, text, score) in zip(
            labels, pair, strict=False
        ):
            path = out / f"{name}-{'all' if same else label}.png"
            save_png(draw_answer(task, instance, text, reference), path, in_folder=True)
            why = f": {score.reason}" if score.reason else ""
            head = (
                f"every answer scored the same, reward {reward:.3f}{why}; the first, `{row_id}`"
                if same
                else f"{label}: `{row_id}`, reward {reward:.3f}{why}"
            )
            cells.append(head.replace("|", "/"))
            images.append(f"![{name} {label}](gallery/{path.name})")
        lines += [f"### {name}", "", f"| {' | '.join(cells)} |", "|---" * len(cells) + "|"]
        lines += [f"| {' | '.join(images)} |", ""]
    return "\n".join(lines)
