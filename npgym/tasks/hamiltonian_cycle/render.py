"""Picture of a HamiltonianCycle answer: the graph on a circle, the cycle's steps thick blue,
a step along a non-edge dashed red, a repeated vertex red, an unclosed cycle's gap dashed red,
vertices off the cycle white."""

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
    graph_axes,
    legend,
    segments,
    tally_faces,
    vertices,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.tasks.hamiltonian_cycle.instance import HamiltonianCycleInstance


def draw(
    figure: Figure, instance: HamiltonianCycleInstance, cycle: np.ndarray | None, partial: bool
) -> None:
    axes, points = graph_axes(figure, instance)
    n = instance.n
    walk = [] if cycle is None else [int(v) for v in cycle if 0 <= v < n]
    closed = len(walk) >= 2 and walk[0] == walk[-1]
    counts = Counter(walk[:-1] if closed else walk)
    steps = list(itertools.pairwise(walk))
    adjacency = instance.adjacency
    good = [(u, v) for u, v in steps if adjacency[u, v]]
    bad = [(u, v) for u, v in steps if not adjacency[u, v]]
    segments(axes, points, good, PLAIN, 2.4, z=2)
    segments(axes, points, bad, MISTAKE, 2.4, "dashed", z=2)
    if len(walk) >= 2 and not closed and not partial:
        segments(axes, points, [(walk[-1], walk[0])], MISTAKE, 1.6, "dashed", z=2)
    vertices(axes, points, tally_faces(n, counts, GOOD))
    entries = [
        ("edge", FAINT, "line"),
        ("cycle step", PLAIN, "line"),
        ("on the cycle", GOOD, "dot"),
    ]
    if bad:
        entries.append(("step along a non-edge", MISTAKE, "dashed"))
    if any(count > 1 for count in counts.values()):
        entries.append(("visited twice", MISTAKE, "dot"))
    if len(walk) >= 2 and not closed and not partial:
        entries.append(("cycle not closed", MISTAKE, "dashed"))
    legend(axes, entries)
    axes.set_title(f"{len(counts)} of {n} vertices on the cycle (white: left out)", fontsize=8)
    axes.autoscale_view()
