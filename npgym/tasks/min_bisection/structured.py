"""MinBisection in classic-RL form: put vertices 0, 1, 2... in part A (action 0) or B (1).

Observation (N = the tier's largest vertex count): ``weights`` (N, N) int64 edge weights (0: no
edge), ``vertex_mask`` (N,) int8, ``side`` (N,) int64 part of each vertex so far (-1 unplaced),
``vertex`` (1,) int64 the vertex to place next. Action: Discrete(2); a part is legal while it has
fewer than ceil(n / 2) vertices, so every finished split is balanced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from npgym.structured import ElementwiseEpisode, first_n, flags, integers, padded
from npgym.tasks.min_bisection.instance import MAX_WEIGHT, MinBisectionInstance


class MinBisectionEpisode(ElementwiseEpisode[MinBisectionInstance]):
    """Place each vertex in turn, keeping both parts within ceil(n / 2)."""

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        n = limits["n"]
        return {
            "weights": integers(0, MAX_WEIGHT, (n, n)),
            "vertex_mask": flags((n,)),
            "side": integers(-1, 1, (n,)),
            "vertex": integers(0, n, (1,)),
        }

    def __init__(self, instance: MinBisectionInstance, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        size = limits["n"]
        self.side = np.full(size, -1, np.int64)
        self.static = {
            "weights": padded(instance.weights, (size, size)),
            "vertex_mask": first_n(instance.n, size),
        }

    def observation(self) -> dict[str, np.ndarray]:
        return {
            **self.static,
            "side": self.side.copy(),
            "vertex": np.array([self.position], np.int64),
        }

    def legal(self) -> np.ndarray:
        half = (self.instance.n + 1) // 2
        return np.array([(self.side == part).sum() < half for part in (0, 1)])

    def decide(self, action: int) -> None:
        self.side[self.position] = action

    def solution(self) -> list[list[int]]:
        return [np.flatnonzero(self.side == part).tolist() for part in (0, 1)]

    def partial_objective(self) -> float:
        side = self.side[: self.instance.n]
        placed = side >= 0
        across = placed[:, None] & placed[None, :] & (side[:, None] != side[None, :])
        return float(self.instance.weights[across].sum() // 2)

    def greedy_action(self) -> int:
        """The legal part with the heavier connection to the vertex's placed neighbours (the
        smaller part on a tie)."""
        legal = self.mask()
        if legal.sum() == 1:
            return int(np.argmax(legal))
        row = self.instance.weights[self.position]
        side = self.side[: self.instance.n]
        pull = [int(row[side == part].sum()) for part in (0, 1)]
        if pull[0] == pull[1]:
            return int((side == 1).sum() < (side == 0).sum())
        return int(pull[1] > pull[0])
