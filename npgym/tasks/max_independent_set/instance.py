"""The MaxIndependentSet instance: an undirected simple graph (``n``, ``edges``)."""

from __future__ import annotations

from typing import Literal

import numpy as np

from npgym.graphs import GraphInstance
from npgym.heuristics.cliques import complement


class MaxIndependentSetInstance(GraphInstance):
    """A graph with vertices ``0..n-1``; find a largest set of pairwise non-adjacent vertices."""

    task: Literal["MaxIndependentSet"] = "MaxIndependentSet"

    @property
    def complement_adjacency(self) -> np.ndarray:
        """Read-only adjacency matrix of the complement graph, whose cliques are this graph's
        independent sets (built once per instance)."""

        def build() -> np.ndarray:
            matrix = complement(self.adjacency)
            matrix.setflags(write=False)
            return matrix

        return self.cached("complement_adjacency", build)
