"""SubsetSum in classic-RL form: for numbers 0, 1, 2... in order, skip (action 0) or take (1).

Observation (N = the tier's largest count): ``numbers`` (N,) int64, ``target`` (1,) int64,
``number_mask`` (N,) int8, ``taken`` (N,) int8, ``remaining`` (1,) int64 target minus the taken
sum, ``index`` (1,) int64 the number to decide next. Action: Discrete(2); a choice is legal when
the numbers still to come can make up what remains of the target (a reachability table over the
suffixes), so every finished subset sums to the target.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from npgym.structured import ElementwiseEpisode, first_n, flags, integers, padded
from npgym.tasks.subset_sum.instance import MAX_VALUE, SubsetSumInstance


class SubsetSumEpisode(ElementwiseEpisode[SubsetSumInstance]):
    """Decide each number in turn, never losing the way to the target."""

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        n = limits["n"]
        return {
            "numbers": integers(0, MAX_VALUE, (n,)),
            "target": integers(0, MAX_VALUE, (1,)),
            "number_mask": flags((n,)),
            "taken": flags((n,)),
            "remaining": integers(0, MAX_VALUE, (1,)),
            "index": integers(0, n, (1,)),
        }

    def __init__(self, instance: SubsetSumInstance, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        size = limits["n"]
        self.taken = np.zeros(size, np.int8)
        self.remaining = instance.target
        # reachable[i] bit s: some subset of numbers[i:] sums to s (bits above target dropped)
        keep = (1 << (instance.target + 1)) - 1
        self.reachable = [1] * (instance.n + 1)
        for i in range(instance.n - 1, -1, -1):
            after = self.reachable[i + 1]
            self.reachable[i] = (after | (after << instance.numbers[i])) & keep
        self.static = {
            "numbers": padded(instance.number_array, (size,)),
            "target": np.array([instance.target], np.int64),
            "number_mask": first_n(instance.n, size),
        }

    def observation(self) -> dict[str, np.ndarray]:
        return {
            **self.static,
            "taken": self.taken.copy(),
            "remaining": np.array([self.remaining], np.int64),
            "index": np.array([self.position], np.int64),
        }

    def legal(self) -> np.ndarray:
        after = self.reachable[self.position + 1]
        rest = self.remaining - self.instance.numbers[self.position]
        return np.array([bool(after >> self.remaining & 1), rest >= 0 and bool(after >> rest & 1)])

    def decide(self, action: int) -> None:
        if action:
            self.taken[self.position] = 1
            self.remaining -= self.instance.numbers[self.position]

    def solution(self) -> list[int]:
        return np.flatnonzero(self.taken).tolist()

    def partial_objective(self) -> float:
        return float(self.taken.sum())

    def greedy_action(self) -> int:
        """Take the number whenever the target stays reachable."""
        return int(self.mask()[1])
