"""Picture of a SubsetSum answer: the numbers as bars, the chosen ones orange (repeated red);
below, the chosen numbers stacked against the target: the excess red, a shortfall hatched red."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from npgym.render import CHOSEN, FAINT, MISTAKE, PLAIN, valid_ids

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.tasks.subset_sum.instance import SubsetSumInstance


def draw(
    figure: Figure, instance: SubsetSumInstance, indices: np.ndarray | None, partial: bool
) -> None:
    grid = figure.add_gridspec(2, 1, height_ratios=(3, 1), hspace=0.45)
    numbers_axes, sum_axes = figure.add_subplot(grid[0]), figure.add_subplot(grid[1])
    ids = [] if indices is None else valid_ids(indices, instance.n)
    counts = Counter(ids)
    colors = [
        MISTAKE if counts[i] > 1 else CHOSEN if counts[i] else FAINT for i in range(instance.n)
    ]
    numbers_axes.bar(range(instance.n), instance.numbers, color=colors, edgecolor="black")
    numbers_axes.set_xticks(range(instance.n))
    numbers_axes.tick_params(labelsize=6)
    numbers_axes.set_xlabel("index", fontsize=8)
    numbers_axes.set_title(f"{len(counts)} numbers chosen (orange)", fontsize=8)
    target = instance.target
    total = 0
    for index in ids:
        number = instance.numbers[index]
        fits = min(number, max(target - total, 0))
        if fits:
            sum_axes.barh(0, fits, left=total, color=PLAIN, edgecolor="white")
        if number > fits:
            sum_axes.barh(0, number - fits, left=total + fits, color=MISTAKE, edgecolor="white")
        total += number
    if total < target and not partial:
        sum_axes.barh(0, target - total, left=total, color="white", edgecolor=MISTAKE, hatch="//")
    sum_axes.axvline(target, color="black", linewidth=2)
    sum_axes.text(target, 0.45, " target", fontsize=7, va="bottom")
    wrong = total != target and not partial
    sum_axes.set_title(
        f"sum {total} / target {target}" + (f" (off by {total - target:+d})" if wrong else ""),
        fontsize=8,
        color=MISTAKE if wrong else "black",
    )
    sum_axes.set_xlim(0, max(total, target) * 1.05 + 1)
    sum_axes.set_yticks([])
    sum_axes.tick_params(labelsize=7)
