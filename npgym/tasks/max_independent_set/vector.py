"""MaxIndependentSet's structured episodes over a batch: MaxClique's
(:mod:`npgym.tasks.max_clique.vector`) on the complement graph's pairs."""

from __future__ import annotations

import numpy as np

from npgym.heuristics.cliques import complement
from npgym.tasks.max_clique.vector import VertexSetBatch
from npgym.tasks.max_independent_set.structured import MaxIndependentSetEpisode


class MaxIndependentSetBatch(VertexSetBatch):
    """Independent sets: every added vertex adjacent to no selected one."""

    episode = MaxIndependentSetEpisode

    @classmethod
    def compatible(cls, adjacency: np.ndarray) -> np.ndarray:
        """Pairs that are no edge (the complement graph, as the instance's
        ``complement_adjacency``)."""
        return complement(adjacency)
