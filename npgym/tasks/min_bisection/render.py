"""Picture of a MinBisection answer: part A on the left, part B on the right, the cut edges red
(width by weight), vertices in both parts or in neither in the middle, red."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from npgym.render import CHOSEN, FAINT, MISTAKE, PLAIN, legend, plain_axes, valid_ids, vertices

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.tasks.min_bisection.instance import MinBisectionInstance

CUT = "#9467bd"


def _column(members: list[int], x: float, points: np.ndarray) -> None:
    """Lay ``members`` out on an arc around ``x``."""
    count = len(members)
    for rank, vertex in enumerate(members):
        angle = np.pi * (rank + 0.5) / max(count, 1) - np.pi / 2
        points[vertex] = (x + 0.35 * np.cos(angle) * np.sign(x or 1), np.sin(angle) * 1.2)


def draw(
    figure: Figure,
    instance: MinBisectionInstance,
    parts: tuple[np.ndarray, np.ndarray] | None,
    partial: bool,
) -> None:
    from matplotlib.collections import LineCollection

    axes = plain_axes(figure)
    n = instance.n
    first = [] if parts is None else valid_ids(parts[0], n)
    second = [] if parts is None else valid_ids(parts[1], n)
    counts = Counter(first) + Counter(second)
    side = np.full(n, -1)
    side[first] = 0
    side[second] = 1
    both = [v for v in range(n) if v in set(first) and v in set(second)]
    side[both] = -2
    points = np.zeros((n, 2))
    _column([v for v in range(n) if side[v] == 0], -1.0, points)
    _column([v for v in range(n) if side[v] == 1], 1.0, points)
    stray = [v for v in range(n) if side[v] < 0]
    for rank, vertex in enumerate(stray):
        points[vertex] = (0.0, 1.2 - 2.4 * (rank + 0.5) / len(stray))
    heaviest = max((w for _, _, w in instance.edges), default=1)
    inside, cut, widths = [], [], []
    for u, v, w in instance.edges:
        segment = (points[u], points[v])
        if side[u] >= 0 and side[v] >= 0 and side[u] != side[v]:
            cut.append(segment)
            widths.append(0.6 + 2.4 * w / heaviest)
        else:
            inside.append(segment)
    axes.add_collection(LineCollection(inside, colors=FAINT, linewidths=0.6, zorder=1))
    axes.add_collection(LineCollection(cut, colors=CUT, linewidths=widths, zorder=2))
    face = []
    for vertex in range(n):
        if side[vertex] == 0:
            face.append(PLAIN if counts[vertex] == 1 else MISTAKE)
        elif side[vertex] == 1:
            face.append(CHOSEN if counts[vertex] == 1 else MISTAKE)
        else:
            face.append("white" if partial else MISTAKE)
    vertices(axes, points, face, size=120)
    balance = len(set(first)), len(set(second))
    unbalanced = abs(balance[0] - balance[1]) > 1 and not partial
    axes.set_title(
        f"part A: {balance[0]} vertices, part B: {balance[1]}"
        + (" (sizes must differ by at most 1)" if unbalanced else "")
        + (
            f"; {len(stray)} in the middle are in both or neither part"
            if stray and not partial
            else ""
        ),
        fontsize=8,
        color=MISTAKE if unbalanced or (stray and not partial) else "black",
    )
    legend(
        axes,
        [
            ("part A", PLAIN, "dot"),
            ("part B", CHOSEN, "dot"),
            ("cut edge (width: weight)", CUT, "line"),
        ],
    )
    axes.autoscale_view()
