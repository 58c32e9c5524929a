"""Picture of a TSP answer: cities (their coordinates, or a 2-D embedding of the distances),
the tour's legs, missing cities ringed in red, repeated cities red, an unclosed tour's gap
dashed red."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from npgym.render import (
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


def city_points(instance: TSPInstance) -> np.ndarray:
    """The coordinates, or classical multidimensional scaling of the distance matrix."""
    if instance.coordinates is not None:
        return np.array(instance.coordinates, dtype=np.float64)
    squared = instance.matrix.astype(np.float64) ** 2
    n = instance.n
    centring = np.eye(n) - 1.0 / n
    gram = -0.5 * centring @ squared @ centring
    values, vectors = np.linalg.eigh(gram)
    top = np.argsort(values)[::-1][:2]
    return vectors[:, top] * np.sqrt(np.maximum(values[top], 0.0))


def draw(figure: Figure, instance: TSPInstance, tour: np.ndarray | None, partial: bool) -> None:
    axes = plain_axes(figure)
    points = city_points(instance)
    n = instance.n
    route = [] if tour is None else [int(c) for c in tour]
    inside = [c for c in route if 0 <= c < n]
    counts = Counter(inside[:-1] if len(route) > 1 and route[0] == route[-1] else inside)
    legs = [(a, b) for a, b in itertools.pairwise(route) if 0 <= a < n and 0 <= b < n]
    segments(axes, points, legs, PLAIN, 1.6, z=2)
    open_tour = len(inside) >= 2 and route[0] != route[-1]
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
