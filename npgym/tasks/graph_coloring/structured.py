"""GraphColoring in classic-RL form: colour vertices 0, 1, 2... in order, one per step.

Observation (N = the tier's largest vertex count): ``adjacency`` (N, N) int8, ``vertex_mask``
(N,) int8, ``colours`` (N,) int64 colour of each vertex so far (-1 uncoloured), ``vertex`` (1,)
int64 the vertex to colour next. Action: Discrete(N), a colour; legal when no coloured neighbour
has it and it is at most one more than the largest colour used (colours stay 0, 1, 2... with
no gaps, which removes relabelled duplicates). A legal colour always exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from npgym.structured import Episode, graph_arrays, graph_spaces, integers
from npgym.tasks.graph_coloring.instance import GraphColoringInstance


class GraphColoringEpisode(Episode[GraphColoringInstance]):
    """Give each vertex in turn a colour its coloured neighbours do not have."""

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        n = limits["n"]
        return {
            **graph_spaces(n),
            "colours": integers(-1, n - 1, (n,)),
            "vertex": integers(0, n, (1,)),
        }

    def __init__(self, instance: GraphColoringInstance, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        size = limits["n"]
        self.colors = np.full(size, -1, np.int64)
        self.vertex = 0
        self.static = graph_arrays(instance, size)

    def observation(self) -> dict[str, np.ndarray]:
        return {
            **self.static,
            "colours": self.colors.copy(),
            "vertex": np.array([self.vertex], np.int64),
        }

    def mask(self) -> np.ndarray:
        legal = np.zeros(self.limits["n"], np.bool_)
        if self.vertex >= self.instance.n:
            return legal
        legal[: int(self.colors.max()) + 2] = True
        neighbours = self.instance.adjacency[self.vertex]
        taken = self.colors[: self.instance.n][neighbours]
        legal[taken[taken >= 0]] = False
        return legal

    def apply(self, action: int) -> bool:
        self.colors[self.vertex] = action
        self.vertex += 1
        return self.vertex == self.instance.n

    def solution(self) -> list[int]:
        return self.colors[: self.vertex].tolist()

    def partial_objective(self) -> float:
        return float(self.colors.max() + 1)

    def greedy_action(self) -> int:
        """The smallest legal colour (first fit)."""
        return int(np.argmax(self.mask()))
