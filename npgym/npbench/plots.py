"""Report plots that still say something when every score is close to 1.

:func:`plot_gaps` draws, per task and overall, how far Success Rate and Average Ratio fall
short of 1 on a log scale (0.99 and 0.999 look different; a perfect score is marked as such,
with each value written on its bar), and SR and AR per tier on an axis zoomed to the data.
:func:`tier_metrics` gives the per-tier figures from the rows and completions (scoring is cheap:
references come from the rows). :func:`write_gallery` draws the worst and the best answer of
each task (:mod:`npgym.render`) and returns the markdown that shows them.
``evaluate.evaluate`` puts the per-tier figures in every report and ``report.write_report``
draws ``report.png`` with :func:`plot_gaps` and appends the gallery to ``report.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from npgym.npbench.evaluate import Completions, by_tier, reported_ks, score_rows
from npgym.records import record_instance, record_reference
from npgym.results import Score
from npgym.task import Task

GAP_FLOOR = 1e-3
"""Gaps below this (scores above 0.999) are drawn at this height and labelled as perfect."""


def tier_metrics(rows: Iterable[Mapping[str, Any]], completions: Completions) -> dict[str, Any]:
    """Metrics per tier (``row["tier"]``; ``"custom"`` when a row has none), tiers in order.

    As in ``evaluate``: an instance without completions is not scored but counted as missing.
    """
    scored = score_rows(rows, completions)
    return {
        tier: asdict(metrics)
        for tier, metrics in by_tier(scored.rows, reported_ks(scored.rows)).items()
    }


def plot_gaps(report: Mapping[str, Any], path: str | Path) -> Path:
    """Write the near-1 view of ``report`` (an ``evaluate`` report; its ``tiers`` section,
    from :func:`tier_metrics`, is used when present, else its categories) as a PNG.

    A task with missing answers says how many under its name; a group without any scored
    instance (every answer missing) gets no bar and the label "no answers"."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    groups = [*report["tasks"].values(), report["overall"]]
    names = [
        name + (f" ({group['missing']} missing)" if group.get("missing") else "")
        for name, group in zip([*report["tasks"], "overall"], groups, strict=True)
    ]
    figure = Figure(figsize=(max(7.0, 0.8 * len(names) + 2.5), 7.0), dpi=120)
    FigureCanvasAgg(figure)
    gap_axes, tier_axes = figure.subplots(2, 1, height_ratios=(3, 2))
    width = 0.38
    for offset, key, label in (
        (-width / 2, "success_rate", "SR"),
        (width / 2, "average_ratio", "AR"),
    ):
        values = [_rate(group[key]) for group in groups]
        heights = [max(1.0 - value, GAP_FLOOR) for value in values]
        spots = [index + offset for index in range(len(names))]
        gap_axes.bar(spots, heights, width, label=f"1 - {label}")
        for spot, value, height in zip(spots, values, heights, strict=True):
            text = f"{label} 1" if value >= 1.0 else f"{label} {value:.3f}"
            if math.isnan(value):
                text, height = f"{label}: no answers", GAP_FLOOR
            gap_axes.text(
                spot, height * 1.15, text, ha="center", va="bottom", fontsize=6, rotation=90
            )
    gap_axes.set_yscale("log")
    gap_axes.set_ylim(GAP_FLOOR * 0.8, 2.0)
    gap_axes.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    gap_axes.set_ylabel("shortfall from 1 (log scale)")
    gap_axes.set_title(
        f"NP-Bench: {report['source']}: lower is better; bars at {GAP_FLOOR:g} are perfect",
        fontsize=9,
    )
    gap_axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    sections = report.get("tiers") or report["categories"]
    kind = "tier" if report.get("tiers") else "category"
    labels = list(sections)
    rates: list[list[float]] = [
        [_rate(sections[name][key]) for name in labels] for key in ("success_rate", "average_ratio")
    ]
    low = min((v for row in rates for v in row if not math.isnan(v)), default=0.0)
    bottom = max(0.0, (int(low * 20) - 1) / 20)
    for offset, row, label in ((-width / 2, rates[0], "SR"), (width / 2, rates[1], "AR")):
        spots = [index + offset for index in range(len(labels))]
        tier_axes.bar(spots, row, width, label=label)
        for spot, value in zip(spots, row, strict=True):
            if math.isnan(value):
                tier_axes.text(spot, bottom, "no answers", ha="center", va="bottom", fontsize=6)
            else:
                tier_axes.text(spot, value, f"{value:.3f}", ha="center", va="bottom", fontsize=6)
    tier_axes.set_ylim(bottom, 1.0 + (1.0 - bottom) * 0.12)
    tier_axes.set_xticks(range(len(labels)), labels, fontsize=8)
    tier_axes.set_title(
        f"SR and AR per {kind}" + (f" (axis starts at {bottom:.2f})" if bottom > 0 else ""),
        fontsize=9,
    )
    tier_axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    target = Path(path)
    figure.savefig(target)
    return target


def _rate(value: float | None) -> float:
    """A report rate as a float; NaN (drawn as "no answers") where the report has ``None``."""
    return math.nan if value is None else float(value)


def write_gallery(
    rows: Iterable[Mapping[str, Any]], completions: Completions, folder: str | Path
) -> str:
    """Draw each task's worst and best answer (lowest and highest reward, first in row order
    on a tie) into ``folder/gallery/`` and return a markdown section showing them.

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
    out = Path(folder) / "gallery"
    out.mkdir(parents=True, exist_ok=True)
    lines = ["## Gallery: worst and best answer per task", ""]
    for name, pair in picked.items():
        cells, images = [], []
        for label, (reward, row_id, task, instance, reference, text, score) in zip(
            ("worst", "best"), pair, strict=True
        ):
            path = out / f"{name}-{label}.png"
            save_png(draw_answer(task, instance, text, reference), path)
            why = f": {score.reason}" if score.reason else ""
            cells.append(f"{label}: `{row_id}`, reward {reward:.3f}{why}".replace("|", "/"))
            images.append(f"![{name} {label}](gallery/{path.name})")
        lines += [f"### {name}", "", f"| {' | '.join(cells)} |", "|---|---|"]
        lines += [f"| {' | '.join(images)} |", ""]
    return "\n".join(lines)
