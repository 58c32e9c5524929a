"""Picture of a MaxCut answer: the graph on a circle, the answer's side orange, the other side
white, the cut edges green and the uncut ones grey; a vertex that does not exist or is listed
twice is red."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from npgym.render import (
    CHOSEN,
    FAINT,
    GOOD,
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


def draw(figure: Figure, instance: GraphInstance, solution: Any, partial: bool) -> None:
    """The graph and the split (just the graph when ``solution`` is ``None``)."""
    axes, points = graph_axes(figure, instance)
    counts = Counter(valid_ids(solution, instance.n)) if solution is not None else Counter()
    cut = [(u, v) for u, v in instance.edges if (u in counts) != (v in counts)]
    segments(axes, points, cut, GOOD, 2.0, z=2)
    vertices(axes, points, tally_faces(instance.n, counts, CHOSEN))
    legend(
        axes,
        [
            ("answer's side", CHOSEN, "dot"),
            ("cut edge", GOOD, "line"),
            ("uncut edge", FAINT, "line"),
        ],
    )
