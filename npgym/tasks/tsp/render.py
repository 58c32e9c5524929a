"""Picture of a TSP answer. With coordinates: the cities on the map, the tour's legs, missing
cities ringed in red, repeated cities red, an unclosed tour's gap dashed red. Without (a
benchmark instance is a distance matrix, not a map): the distance matrix as a heat map with
each leg marked at its two cells, a valid tour marking every row twice; missing cities' rows
outlined red, legs of repeated cities red, an unclosed tour's missing leg a red cross. No
positions are invented for cities that have none."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from npgym.render import (
    CHOSEN,
    FAINT,
    GOOD,
    MISTAKE,
    PLAIN,
    legend,
    plain_axes,
    segments,
    tally_faces,
    vertices,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.tasks.tsp.instance import TSPInstance


MATRIX_CAPTION = (
    "This instance has no coordinates, only distances: its distance matrix,\n"
    "with the tour's legs marked (a valid tour marks every row twice)."
)


def draw(figure: Figure, instance: TSPInstance, tour: np.ndarray | None, partial: bool) -> None:
    n = instance.n
    route = [] if tour is None else [int(c) for c in tour]
    inside = [c for c in route if 0 <= c < n]
    counts = Counter(inside[:-1] if len(route) > 1 and route[0] == route[-1] else inside)
    legs = [(a, b) for a, b in itertools.pairwise(route) if 0 <= a < n and 0 <= b < n]
    open_tour = len(inside) >= 2 and route[0] != route[-1]
    if instance.coordinates is None:
        gap = (inside[-1], inside[0]) if open_tour and not partial else None
        _draw_matrix(figure, instance, (tour, counts, legs), gap, partial)
        return
    axes = plain_axes(figure)
    points = np.array(instance.coordinates, dtype=np.float64)
    segments(axes, points, legs, PLAIN, 1.6, z=2)
    if open_tour and not partial:
        segments(axes, points, [(inside[-1], inside[0])], MISTAKE, 1.6, "dashed", z=2)
    face = tally_faces(n, counts, GOOD, FAINT if tour is None else "white")
    edge: list[str] = ["black"] * n
    width = [1.0] * n
    for city in range(n):
        if not counts[city] and tour is not None and not partial:
            edge[city], width[city] = MISTAKE, 3.0
    if inside:
        edge[inside[0]], width[inside[0]] = "black", 2.5
    vertices(axes, points, face, edge, width=width)
    entries = [("tour leg", PLAIN, "line"), ("visited once", GOOD, "dot")]
    if tour is not None and not partial:
        if any(counts[c] == 0 for c in range(n)):
            entries.append(("missing city (red ring)", "white", "dot"))
        if any(counts[c] > 1 for c in range(n)):
            entries.append(("visited twice", MISTAKE, "dot"))
        if open_tour:
            entries.append(("tour not closed", MISTAKE, "dashed"))
    legend(axes, entries)
    axes.autoscale_view()


def _draw_matrix(
    figure: Figure,
    instance: TSPInstance,
    answer: tuple[np.ndarray | None, Counter[int], list[tuple[int, int]]],
    gap: tuple[int, int] | None,
    partial: bool,
) -> None:
    """The distance matrix as a heat map, each leg ``(a, b)`` a dot at cells ``(a, b)`` and
    ``(b, a)``; ``answer`` is the tour, how often it visits each city, and its legs; ``gap``
    the leg an unclosed tour lacks."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    tour, counts, legs = answer
    n = instance.n
    axes = figure.add_subplot(1, 1, 1)
    image = axes.imshow(instance.matrix, cmap="Greys", interpolation="nearest")
    colorbar = figure.colorbar(image, ax=axes, fraction=0.04, pad=0.02)
    colorbar.set_label("distance", fontsize=7)
    colorbar.ax.tick_params(labelsize=6)
    twice = {city for city, count in counts.items() if count > 1}
    for color in (CHOSEN, MISTAKE):
        cells = [
            cell
            for a, b in legs
            if a != b and ((a in twice or b in twice) == (color == MISTAKE))
            for cell in ((b, a), (a, b))
        ]
        if cells:
            columns, rows = zip(*cells, strict=True)
            axes.scatter(columns, rows, s=14, c=color, edgecolors="black", linewidths=0.4)
    if gap is not None:
        axes.scatter([gap[0], gap[1]], [gap[1], gap[0]], s=40, c=MISTAKE, marker="x")
    missing = [city for city in range(n) if tour is not None and not partial and not counts[city]]
    for city in missing:
        axes.add_patch(
            Rectangle((-0.5, city - 0.5), n, 1, fill=False, edgecolor=MISTAKE, linewidth=1.2)
        )
    step = 1 if n <= 30 else 5
    axes.set_xticks(range(0, n, step))
    axes.set_yticks(range(0, n, step))
    axes.tick_params(labelsize=6)
    axes.set_xlabel("city", fontsize=7)
    axes.set_ylabel("city", fontsize=7)
    entries = [Line2D([], [], marker="o", ls="", mfc=CHOSEN, color="black", label="tour leg")]
    if twice:
        entries.append(
            Line2D(
                [],
                [],
                marker="o",
                ls="",
                mfc=MISTAKE,
                color="black",
                label="leg of a city visited twice",
            )
        )
    if missing:
        entries.append(Line2D([], [], color=MISTAKE, label="missing city (row outlined)"))
    if gap is not None:
        entries.append(Line2D([], [], marker="x", ls="", color=MISTAKE, label="tour not closed"))
    axes.legend(
        handles=entries,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.1),
        ncol=len(entries),
        fontsize=7,
        frameon=False,
    )
    axes.set_title(MATRIX_CAPTION, fontsize=7)
