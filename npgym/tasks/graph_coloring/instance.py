"""The graph colouring instance: a graph and the colouring its generator planted."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from npgym.graphs import GraphInstance
from npgym.heuristics.cliques import first_non_edge
from npgym.heuristics.jit import njit
from npgym.instance import Int


class GraphColoringInstance(GraphInstance):
    """A graph on vertices ``0..n-1`` with canonical ``edges``.

    ``planted_colouring`` (optional) is the proper colouring the generator built the graph
    around, colours relabelled by first appearance. It is an upper bound on the chromatic number
    and a warm start for the solvers, not the reference: random edges may leave room for fewer
    colours. It never appears in the prompt.

    ``planted_clique`` (optional, only above the benchmark tier) is a clique the generator
    planted as a certificate: its size is a lower bound on the chromatic number, which a planted
    colouring of that many colours proves exact. It is checked here (distinct vertices, pairwise
    adjacent) and again by the reference, and left out of the JSON when absent, so instances
    without it keep their bytes. Neither field is in the prompt or the fingerprint.
    """

    task: Literal["GraphColoring"] = "GraphColoring"
    planted_colouring: tuple[Int, ...] | None = None
    planted_clique: tuple[Int, ...] | None = Field(None, exclude_if=lambda value: value is None)

    meta_fields: ClassVar[tuple[str, ...]] = ("planted_colouring", "planted_clique")

    @model_validator(mode="after")
    def _planted_is_proper(self) -> GraphColoringInstance:
        planted = self.planted_colouring
        if planted is None:
            return self
        if len(planted) != self.n:
            raise ValueError(f"planted_colouring has {len(planted)} entries, expected {self.n}")
        try:
            colors = np.fromiter(planted, dtype=np.int64, count=len(planted))
            clash = first_clash(colors, self.edge_array)
        except OverflowError:  # a colour beyond int64: compare as Python ints
            clash = next((i for i, (u, v) in enumerate(self.edges) if planted[u] == planted[v]), -1)
        if clash >= 0:
            u, v = self.edges[clash]
            raise ValueError(
                f"planted_colouring gives adjacent vertices {u} and {v} the same colour"
            )
        return self

    @model_validator(mode="after")
    def _planted_clique_is_a_clique(self) -> GraphColoringInstance:
        clique = self.planted_clique
        if clique is None:
            return self
        self.check_vertex_set(clique, "planted_clique")
        missing = first_non_edge(self.adjacency, clique)
        if missing is not None:
            raise ValueError(f"planted_clique holds {missing[0]} and {missing[1]}, not adjacent")
        return self


@njit
def first_clash(colors: np.ndarray, pairs: np.ndarray) -> int:
    """Index of the first edge whose ends share a colour, or -1."""
    for index in range(pairs.shape[0]):
        if colors[pairs[index, 0]] == colors[pairs[index, 1]]:
            return index
    return -1
