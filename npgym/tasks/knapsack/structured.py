"""Knapsack in classic-RL form: for items 0, 1, 2... in order, skip (action 0) or take (1).

Observation (N = the tier's largest item count): ``weights`` (N,) int64, ``values`` (N,) int64,
``capacity`` (1,) int64, ``item_mask`` (N,) int8, ``taken`` (N,) int8, ``remaining`` (1,) int64
capacity left, ``item`` (1,) int64 the item to decide next. Action: Discrete(2); taking is legal
when the item fits the remaining capacity, so every finished selection is feasible.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pydantic import BaseModel

from npgym.structured import ElementwiseEpisode, first_n, flags, integers, padded
from npgym.tasks.knapsack.instance import (
    MAX_CAPACITY,
    MAX_VALUE,
    MAX_WEIGHT,
    KnapsackInstance,
)


class KnapsackEpisode(ElementwiseEpisode[KnapsackInstance]):
    """Decide each item in turn; an item that does not fit cannot be taken."""

    @classmethod
    def limits_for(cls, config: BaseModel) -> dict[str, int]:
        return {"n": config.items_max}  # type: ignore[attr-defined]

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        n = limits["n"]
        return {
            "weights": integers(0, MAX_WEIGHT, (n,)),
            "values": integers(0, MAX_VALUE, (n,)),
            "capacity": integers(0, MAX_CAPACITY, (1,)),
            "item_mask": flags((n,)),
            "taken": flags((n,)),
            "remaining": integers(0, MAX_CAPACITY, (1,)),
            "item": integers(0, n, (1,)),
        }

    def __init__(self, instance: KnapsackInstance, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        size = limits["n"]
        self.taken = np.zeros(size, np.int8)
        self.remaining = instance.capacity
        self.static = {
            "weights": padded(instance.weight_array, (size,)),
            "values": padded(instance.value_array, (size,)),
            "capacity": np.array([instance.capacity], np.int64),
            "item_mask": first_n(instance.n, size),
        }

    def observation(self) -> dict[str, np.ndarray]:
        return {
            **self.static,
            "taken": self.taken.copy(),
            "remaining": np.array([self.remaining], np.int64),
            "item": np.array([self.position], np.int64),
        }

    def legal(self) -> np.ndarray:
        return np.array([True, self.instance.weights[self.position] <= self.remaining])

    def decide(self, action: int) -> None:
        if action:
            self.taken[self.position] = 1
            self.remaining -= self.instance.weights[self.position]

    def solution(self) -> list[int]:
        return np.flatnonzero(self.taken).tolist()

    def partial_objective(self) -> float:
        return float(self.instance.value_array[self.taken[: self.instance.n] == 1].sum())

    def greedy_action(self) -> int:
        """Take an item that fits when its value per weight beats the items still to come."""
        if not self.mask()[1]:
            return 0
        weights = self.instance.weight_array[self.position :]
        values = self.instance.value_array[self.position :]
        ratios = values / weights
        return int(ratios[0] >= np.median(ratios))
