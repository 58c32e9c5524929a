"""HamiltonianCycle in classic-RL form: walk a path vertex by vertex, then close a cycle.

Observation (N = the tier's largest vertex count): ``adjacency`` (N, N) int8, ``vertex_mask``
(N,) int8, ``path`` (N,) int64 the walk so far (-1 padded), ``on_path`` (N,) int8, ``current``
(1,) int64 the last vertex (-1 before the first move). Action: Discrete(N + 1); ``v < N`` walks to
vertex v (the first move picks the start), ``N`` closes: the answer is the longest cycle made of
the path's tail from an earlier neighbour of the current vertex back to it. Moves stay inside the
graph's 2-core (vertices of degree 1 lie on no cycle), where every vertex has two neighbours,
so a walk can always go on or close: a legal random walk always ends with a feasible cycle.
Closing is legal once a neighbour of the current vertex sits at least two steps back on the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from npgym.structured import Episode, flags, graph_arrays, graph_spaces, integers, padded
from npgym.tasks.hamiltonian_cycle.instance import HamiltonianCycleInstance


def two_core(adjacency: np.ndarray) -> np.ndarray:
    """Vertices left after repeatedly removing those of degree below 2."""
    alive = np.ones(len(adjacency), np.bool_)
    while True:
        degree = adjacency[:, alive].sum(axis=1)
        weak = alive & (degree < 2)
        if not weak.any():
            return alive
        alive &= ~weak


class HamiltonianCycleEpisode(Episode[HamiltonianCycleInstance]):
    """Walk inside the 2-core; close the longest cycle the walk allows."""

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        n = limits["n"]
        return {
            **graph_spaces(n),
            "path": integers(-1, n - 1, (n,)),
            "on_path": flags((n,)),
            "current": integers(-1, n - 1, (1,)),
        }

    @classmethod
    def action_count(cls, limits: Mapping[str, int]) -> int:
        return limits["n"] + 1

    def __init__(self, instance: HamiltonianCycleInstance, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        size = limits["n"]
        self.core = two_core(instance.adjacency)
        self.path: list[int] = []
        self.on_path = np.zeros(size, np.bool_)
        self.closed_from: int | None = None
        self.static = graph_arrays(instance, size)

    def observation(self) -> dict[str, np.ndarray]:
        current = self.path[-1] if self.path else -1
        return {
            **self.static,
            "path": padded(self.path, (self.limits["n"],), fill=-1),
            "on_path": self.on_path.astype(np.int8),
            "current": np.array([current], np.int64),
        }

    def close_index(self) -> int | None:
        """The earliest path position that closes a cycle of 3 or more vertices, if any."""
        if len(self.path) < 3:
            return None
        row = self.instance.adjacency[self.path[-1]]
        for index, vertex in enumerate(self.path[:-2]):
            if row[vertex]:
                return index
        return None

    def mask(self) -> np.ndarray:
        n = self.instance.n
        legal = np.zeros(self.limits["n"] + 1, np.bool_)
        if self.closed_from is not None:
            return legal
        step = self.core.copy()
        if self.path:
            step &= self.instance.adjacency[self.path[-1]]
        legal[:n] = step & ~self.on_path[:n]
        legal[-1] = self.close_index() is not None
        return legal

    def apply(self, action: int) -> bool:
        if action == self.limits["n"]:
            self.closed_from = self.close_index()
            return True
        self.path.append(action)
        self.on_path[action] = True
        return False

    def solution(self) -> list[int]:
        if self.closed_from is None:
            return list(self.path)
        cycle = self.path[self.closed_from :]
        return [*cycle, cycle[0]]

    def partial_objective(self) -> float:
        """The cycle's length once closed (the answer's objective; the vertices walked before
        the cycle are not in it), else the path's."""
        start = 0 if self.closed_from is None else self.closed_from
        return float(len(self.path) - start)

    def greedy_action(self) -> int:
        """Warnsdorff's rule: the next vertex with the fewest onward moves; close when stuck."""
        legal = self.mask()
        moves = np.flatnonzero(legal[:-1])
        if moves.size == 0:
            return self.limits["n"]
        free = self.core & ~self.on_path[: self.instance.n]
        onward = self.instance.adjacency[moves][:, free].sum(axis=1)
        return int(moves[np.argmin(onward)])
