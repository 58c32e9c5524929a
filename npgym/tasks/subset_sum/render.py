"""Picture of a SubsetSum answer: the numbers as bars, the chosen ones orange (repeated red);
below, the chosen numbers stacked against the target: the excess red, a shortfall hatched red."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from npgym.render import CHOSEN, FAINT, MISTAKE, stack_against, two_panels, valid_ids

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.tasks.subset_sum.instance import SubsetSumInstance


def draw(
    figure: Figure, instance: SubsetSumInstance, indices: np.ndarray | None, partial: bool
) -> None:
    numbers_axes, sum_axes = two_panels(figure, (3, 1), 0.45)
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
    total = stack_against(sum_axes, [instance.numbers[index] for index in ids], target, "target")
    if total < target and not partial:
        sum_axes.barh(0, target - total, left=total, color="white", edgecolor=MISTAKE, hatch="//")
    wrong = total != target and not partial
    sum_axes.set_title(
        f"sum {total} / target {target}" + (f" (off by {total - target:+d})" if wrong else ""),
        fontsize=8,
        color=MISTAKE if wrong else "black",
    )
