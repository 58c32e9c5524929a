"""Picture of a GraphColoring answer: the graph on a circle, each vertex filled with its colour
(and labelled with it), the edges whose ends share a colour thick red, and vertices the answer
leaves uncoloured ringed red."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from npgym.render import FAINT, MISTAKE, graph_axes, legend, segments

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.tasks.graph_coloring.instance import GraphColoringInstance


def draw(
    figure: Figure, instance: GraphColoringInstance, colors: np.ndarray | None, partial: bool
) -> None:
    from matplotlib import colormaps

    axes, points = graph_axes(figure, instance)
    n = instance.n
    given = [] if colors is None else [int(c) for c in colors[:n]]
    labels = {color: index for index, color in enumerate(dict.fromkeys(given))}
    palette = colormaps["tab20"]
    clashes = [
        (u, v)
        for u, v in instance.edges
        if u < len(given) and v < len(given) and given[u] == given[v]
    ]
    segments(axes, points, clashes, MISTAKE, 3.0, z=2)
    face: list[Any] = []
    edge: list[str] = []
    width: list[float] = []
    for vertex in range(n):
        if vertex < len(given):
            face.append(palette(labels[given[vertex]] % 20))
            edge.append("black")
            width.append(1.0)
        else:
            face.append("white")
            missing = colors is not None and not partial
            edge.append(MISTAKE if missing else "black")
            width.append(3.0 if missing else 1.0)
    axes.scatter(
        points[:, 0], points[:, 1], s=220, c=face, edgecolors=edge, linewidths=width, zorder=3
    )
    font = 7 if n <= 30 else 5
    for vertex, (x, y) in enumerate(points):
        text = f"{vertex}:{given[vertex]}" if vertex < len(given) else str(vertex)
        axes.text(x, y, text, ha="center", va="center", fontsize=font, zorder=4)
    entries = [("edge", FAINT, "line")]
    if clashes:
        entries.append(("same colour at both ends", MISTAKE, "line"))
    if colors is not None and not partial and len(given) < n:
        entries.append(("no colour given (red ring)", "white", "dot"))
    legend(axes, entries)
    axes.set_title(f"{len(labels)} colours used; labels are vertex:colour", fontsize=8)
    axes.autoscale_view()
