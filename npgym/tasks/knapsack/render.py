"""Picture of a Knapsack answer: every item as a point (weight, value), the chosen ones orange;
below, the chosen weights stacked against the capacity, the part over it red."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from npgym.render import CHOSEN, FAINT, MISTAKE, stack_against, two_panels, valid_ids

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.tasks.knapsack.instance import KnapsackInstance


def draw(
    figure: Figure, instance: KnapsackInstance, items: np.ndarray | None, partial: bool
) -> None:
    scatter, bar = two_panels(figure, (3, 1), 0.45)
    weights, values = instance.weight_array, instance.value_array
    ids = [] if items is None else valid_ids(items, instance.n)
    counts = Counter(ids)
    chosen = np.zeros(instance.n, np.bool_)
    chosen[list(counts)] = True
    repeated = [item for item, count in counts.items() if count > 1]
    scatter.scatter(weights[~chosen], values[~chosen], c=FAINT, edgecolors="grey", s=30)
    scatter.scatter(weights[chosen], values[chosen], c=CHOSEN, edgecolors="black", s=45)
    if repeated:
        scatter.scatter(weights[repeated], values[repeated], c=MISTAKE, edgecolors="black", s=60)
    for item in np.flatnonzero(chosen):
        scatter.annotate(
            str(item),
            (weights[item], values[item]),
            fontsize=6,
            xytext=(3, 3),
            textcoords="offset points",
        )
    scatter.set_xlabel("weight", fontsize=8)
    scatter.set_ylabel("value", fontsize=8)
    scatter.set_title(
        f"{int(chosen.sum())} of {instance.n} items chosen (orange)"
        + (f"; listed twice (red): {repeated}" if repeated else ""),
        fontsize=8,
        color=MISTAKE if repeated else "black",
    )
    scatter.tick_params(labelsize=7)
    capacity = int(instance.capacity)
    load = stack_against(bar, [int(weights[item]) for item in ids], capacity, "capacity")
    over = load > capacity
    bar.set_title(
        f"total weight {load} / capacity {capacity}"
        + (f": {load - capacity} over (red)" if over else ""),
        fontsize=8,
        color=MISTAKE if over else "black",
    )
