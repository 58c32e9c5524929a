"""The MaxClique instance: an undirected simple graph (``n``, ``edges``)."""

from __future__ import annotations

from typing import Literal

from npgym.graphs import GraphInstance


class MaxCliqueInstance(GraphInstance):
    """A graph with vertices ``0..n-1``; find a largest set of pairwise adjacent vertices."""

    task: Literal["MaxClique"] = "MaxClique"
