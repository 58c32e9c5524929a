"""Picture of a MaxClique (or MaxIndependentSet) answer: the graph on a circle, the chosen
vertices orange, and in red the pairs that break the rule (a missing edge between two chosen
vertices for a clique, dashed; an edge between two chosen vertices for an independent set)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np

from npgym.render import (
    CHOSEN,
    FAINT,
    GOOD,
    MISTAKE,
    graph_axes,
    legend,
    segments,
    tally_faces,
    valid_ids,
    vertices,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.graphs import GraphInstance


def draw_vertex_set(
    figure: Figure, instance: GraphInstance, chosen: np.ndarray | None, clique: bool
) -> None:
    """The graph and the chosen set; ``clique`` says which rule the set must keep."""
    axes, points = graph_axes(figure, instance)
    ids = [] if chosen is None else valid_ids(chosen, instance.n)
    counts = Counter(ids)
    picked = sorted(counts)
    adjacency = instance.adjacency
    inner = [(u, v) for u, v in combinations(picked, 2) if adjacency[u, v]]
    broken = [(u, v) for u, v in combinations(picked, 2) if adjacency[u, v] != clique]
    if clique:
        segments(axes, points, inner, GOOD, 2.0, z=2)
        segments(axes, points, broken, MISTAKE, 2.0, "dashed", z=2)
    else:
        segments(axes, points, broken, MISTAKE, 2.4, z=2)
    vertices(axes, points, tally_faces(instance.n, counts, CHOSEN))
    entries = [("edge", FAINT, "line"), ("chosen", CHOSEN, "dot")]
    if clique:
        entries.append(("edge inside the clique", GOOD, "line"))
        if broken:
            entries.append(("missing edge: not a clique", MISTAKE, "dashed"))
    elif broken:
        entries.append(("edge between chosen vertices", MISTAKE, "line"))
    if any(count > 1 for count in counts.values()):
        entries.append(("listed twice", MISTAKE, "dot"))
    legend(axes, entries)
    axes.autoscale_view()


def draw(figure: Figure, instance: GraphInstance, chosen: np.ndarray | None, partial: bool) -> None:
    draw_vertex_set(figure, instance, chosen, clique=True)
