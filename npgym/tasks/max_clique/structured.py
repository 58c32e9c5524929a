"""MaxClique in classic-RL form: add one vertex at a time, or stop.

Observation (N = the tier's largest vertex count): ``adjacency`` (N, N) int8, ``vertex_mask``
(N,) int8 real vertices, ``selected`` (N,) int8 the set so far. Action: Discrete(N + 1); ``v < N``
adds vertex v (legal when it is adjacent to every selected vertex), ``N`` stops (legal once a
vertex is selected). The episode also ends when no vertex can be added (a maximal clique).
:class:`VertexSetEpisode` serves MaxIndependentSet too, with "non-adjacent" for "adjacent".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np
from gymnasium import spaces

from npgym.graphs import GraphInstance
from npgym.structured import Episode, flags, graph_arrays, graph_spaces
from npgym.tasks.max_clique.instance import MaxCliqueInstance

GraphT = TypeVar("GraphT", bound=GraphInstance)


class VertexSetEpisode(Episode[GraphT]):
    """Grow a vertex set whose members are pairwise compatible (:meth:`compatible`)."""

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        n = limits["n"]
        return {**graph_spaces(n), "selected": flags((n,))}

    @classmethod
    def action_count(cls, limits: Mapping[str, int]) -> int:
        return limits["n"] + 1

    def compatible(self) -> np.ndarray:
        """``[u, v]`` True when u and v may both be in the set."""
        return self.instance.adjacency

    def __init__(self, instance: GraphT, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        size = limits["n"]
        self.selected = np.zeros(size, np.bool_)
        self.candidates = np.zeros(size, np.bool_)
        self.candidates[: instance.n] = True
        self.static = graph_arrays(instance, size)

    def observation(self) -> dict[str, np.ndarray]:
        return {**self.static, "selected": self.selected.astype(np.int8)}

    def mask(self) -> np.ndarray:
        return np.append(self.candidates, self.selected.any())

    def apply(self, action: int) -> bool:
        if action == self.limits["n"]:
            return True
        self.selected[action] = True
        self.candidates[: self.instance.n] &= self.compatible()[action]
        self.candidates[action] = False
        return not self.candidates.any()

    def solution(self) -> list[int]:
        return np.flatnonzero(self.selected).tolist()

    def partial_objective(self) -> float:
        return float(self.selected.sum())

    def greedy_action(self) -> int:
        """The candidate that keeps the most candidates (stop when there is none)."""
        if not self.candidates.any():
            return self.limits["n"]
        n = self.instance.n
        kept = (self.compatible() & self.candidates[:n]).sum(axis=1)
        kept[~self.candidates[:n]] = -1
        return int(np.argmax(kept))


class MaxCliqueEpisode(VertexSetEpisode[MaxCliqueInstance]):
    """A clique: every added vertex adjacent to all selected ones."""
