"""The MaxIndependentSet instance: an undirected simple graph (``n``, ``edges``), and above the
benchmark tier the clique cover its generator planted."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from npgym.graphs import GraphInstance
from npgym.heuristics.cliques import complement
from npgym.instance import NonNegInt, derived, read_only


class MaxIndependentSetInstance(GraphInstance):
    """A graph with vertices ``0..n-1``; find a largest set of pairwise non-adjacent vertices.

    ``planted_cover`` (optional, metadata) is the certificate the generator plants above the
    benchmark tier: groups of vertices, each meant to be a clique, together all the vertices
    once, the first vertex of each group one of a planted independent set. If it holds, no
    independent set has more vertices than there are groups, so the planted set is maximum. It
    is checked by the reference (:func:`npgym.tasks.max_independent_set.task.cover_certificate`),
    never trusted as read, never in the prompt, and left out of the JSON when absent, so
    instances without one keep their bytes.
    """

    task: Literal["MaxIndependentSet"] = "MaxIndependentSet"
    planted_cover: tuple[tuple[NonNegInt, ...], ...] | None = Field(
        None, exclude_if=lambda value: value is None
    )

    meta_fields: ClassVar[tuple[str, ...]] = ("planted_cover",)

    @derived
    def complement_adjacency(self) -> np.ndarray:
        """Read-only adjacency matrix of the complement graph, whose cliques are this graph's
        independent sets (built once per instance)."""
        return read_only(complement(self.adjacency))
