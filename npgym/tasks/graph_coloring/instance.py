"""The graph colouring instance: a graph and the colouring its generator planted."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import model_validator

from npgym.graphs import GraphInstance
from npgym.instance import Int


class GraphColoringInstance(GraphInstance):
    """A graph on vertices ``0..n-1`` with canonical ``edges``.

    ``planted_colouring`` (optional) is the proper colouring the generator built the graph
    around, colours relabelled by first appearance. It is an upper bound on the chromatic number
    and a warm start for the solvers, not the reference: random edges may leave room for fewer
    colours. It never appears in the prompt.
    """

    task: Literal["GraphColoring"] = "GraphColoring"
    planted_colouring: tuple[Int, ...] | None = None

    meta_fields: ClassVar[tuple[str, ...]] = ("planted_colouring",)

    @model_validator(mode="after")
    def _planted_is_proper(self) -> GraphColoringInstance:
        planted = self.planted_colouring
        if planted is None:
            return self
        if len(planted) != self.n:
            raise ValueError(f"planted_colouring has {len(planted)} entries, expected {self.n}")
        try:
            colours = np.fromiter(planted, dtype=np.int64, count=len(planted))
        except OverflowError:  # a colour beyond int64: compare as Python ints
            colours = np.array(planted, dtype=object)
        pairs = self.edge_array
        clashes = np.flatnonzero(colours[pairs[:, 0]] == colours[pairs[:, 1]])
        if clashes.size:
            u, v = pairs[clashes[0]].tolist()
            raise ValueError(
                f"planted_colouring gives adjacent vertices {u} and {v} the same colour"
            )
        return self
