"""MaxCut in classic-RL form: put each vertex on a side, in vertex order.

Observation (N = the tier's largest vertex count): ``adjacency`` (N, N) int8, ``vertex_mask``
(N,) int8 real vertices, ``side`` (N,) int8 (1: the answer's side, 0: the other side or not yet
placed), ``placed`` (N,) int8 the vertices placed so far. Action: Discrete(2): 1 puts the next
vertex on the answer's side, 0 on the other. The episode ends when every vertex is placed; the
answer is the list of vertices on side 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from npgym.graphs import GraphInstance
from npgym.structured import ElementwiseEpisode, flags, graph_arrays, graph_spaces


class MaxCutEpisode(ElementwiseEpisode[GraphInstance]):
    """Place the vertices one at a time; every move is legal."""

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        n = limits["n"]
        return {
            **graph_spaces(n),
            "side": flags((n,)),
            "placed": flags((n,)),
        }

    def __init__(self, instance: GraphInstance, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        size = limits["n"]
        self.side = np.zeros(size, np.int8)
        self.placed = np.zeros(size, np.int8)
        self.static = graph_arrays(instance, size)

    def observation(self) -> dict[str, np.ndarray]:
        return {**self.static, "side": self.side.copy(), "placed": self.placed.copy()}

    def legal(self) -> np.ndarray:
        return np.ones(2, np.bool_)

    def decide(self, action: int) -> None:
        self.side[self.position] = action
        self.placed[self.position] = 1

    def solution(self) -> list[int]:
        return np.flatnonzero(self.side[: self.instance.n]).tolist()

    def partial_objective(self) -> float:
        """Edges between placed vertices on different sides."""
        side, placed = self.side, self.placed
        return float(
            sum(placed[u] and placed[v] and side[u] != side[v] for u, v in self.instance.edges)
        )

    def greedy_action(self) -> int:
        """The side opposite to most of the vertex's placed neighbours (side 1 on a tie)."""
        vertex = self.position
        neighbours = np.flatnonzero(self.instance.adjacency[vertex][:vertex])
        on_one = int(self.side[neighbours].sum())
        return 0 if 2 * on_one > len(neighbours) else 1
