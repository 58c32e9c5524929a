"""Report plots that still say something when every score is close to 1.

:func:`plot_gaps` draws, per task and overall, how far Success Rate and Average Ratio fall
short of 1 on a log scale (0.99 and 0.999 look different; a perfect score is marked as such,
with each value written on its bar), and SR and AR per tier on an axis zoomed to the data.
:func:`tier_metrics` gives the per-tier figures from the rows and completions (scoring is cheap:
references come from the rows). :func:`write_gallery` draws the worst and the best answer of
each task (:mod:`npgym.render`) and returns the markdown that shows them. None of them is wired
into ``evaluate.write_report`` here; that module belongs to another piece of work.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from npgym.config import TIERS
from npgym.npbench.evaluate import Completions, summarize
from npgym.records import record_instance, record_reference
from npgym.results import Score
from npgym.task import Task

GAP_FLOOR = 1e-3
"""Gaps below this (scores above 0.999) are drawn at this height and labelled as perfect."""


def tier_metrics(rows: list[dict[str, Any]], completions: Completions) -> dict[str, Any]:
    """Metrics per tier (``row["tier"]``; ``"custom"`` when a row has none), tiers in order.

    An instance without completions counts as format failures, as in ``evaluate``.
    """
    samples = max((len(texts) for texts in completions.texts.values()), default=1)
    groups: dict[str, list[list[Score]]] = defaultdict(list)
    for row in rows:
        task, instance = record_instance(row)
        reference = record_reference(row) or task.reference(instance)
        texts = completions.texts.get(str(row["id"]), [""] * samples)
        groups[str(row.get("tier") or "custom")].append(
            [task.score(instance, text, reference) for text in texts]
        )
    order = [tier for tier in TIERS if tier in groups] + sorted(set(groups) - set(TIERS))
    return {tier: asdict(summarize(groups[tier])) for tier in order}


def plot_gaps(report: dict[str, Any], path: str | Path) -> Path:
    """Write the near-1 view of ``report`` (an ``evaluate`` report; its ``tiers`` section,
    from :func:`tier_metrics`, is used when present, else its categories) as a PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = [*report["tasks"], "overall"]
    groups = [*report["tasks"].values(), report["overall"]]
    figure = Figure(figsize=(max(7.0, 0.8 * len(names) + 2.5), 7.0), dpi=120)
    FigureCanvasAgg(figure)
    gap_axes, tier_axes = figure.subplots(2, 1, height_ratios=(3, 2))
    width = 0.38
    for offset, key, label in (
        (-width / 2, "success_rate", "SR"),
        (width / 2, "average_ratio", "AR"),
    ):
        values = [float(group[key]) for group in groups]
        heights = [max(1.0 - value, GAP_FLOOR) for value in values]
        spots = [index + offset for index in range(len(names))]
        gap_axes.bar(spots, heights, width, label=f"1 - {label}")
        for spot, value, height in zip(spots, values, heights, strict=True):
            text = f"{label} 1" if value >= 1.0 else f"{label} {value:.3f}"
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
        [float(sections[name][key]) for name in labels] for key in ("success_rate", "average_ratio")
    ]
    low = min((v for row in rates for v in row), default=0.0)
    bottom = max(0.0, (int(low * 20) - 1) / 20)
    for offset, row, label in ((-width / 2, rates[0], "SR"), (width / 2, rates[1], "AR")):
        spots = [index + offset for index in range(len(labels))]
        tier_axes.bar(spots, row, width, label=label)
        for spot, value in zip(spots, row, strict=True):
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


def write_gallery(rows: list[dict[str, Any]], completions: Completions, folder: str | Path) -> str:
    """Draw each task's worst and best answer (lowest and highest reward, first in row order
    on a tie) into ``folder/gallery/`` and return a markdown section showing them."""
    from npgym.render import draw_answer, save_png

    picked: dict[str, list[tuple[float, str, Task[Any, Any], Any, Any, str, Score]]] = {}
    for row in rows:
        task, instance = record_instance(row)
        reference = record_reference(row) or task.reference(instance)
        for text in completions.texts.get(str(row["id"]), [""]):
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
