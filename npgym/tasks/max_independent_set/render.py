"""Picture of a MaxIndependentSet answer: see :mod:`npgym.tasks.max_clique.render` (edges
between two chosen vertices in red)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from npgym.tasks.max_clique.render import draw_vertex_set

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from npgym.graphs import GraphInstance


def draw(figure: Figure, instance: GraphInstance, chosen: np.ndarray | None, partial: bool) -> None:
    draw_vertex_set(figure, instance, chosen, clique=False)
