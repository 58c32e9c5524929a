"""Knapsack's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.knapsack.structured.KnapsackEpisode` with the batch first, stepped in one
numba call. Each slot decides its items in order; taking is legal when the item fits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.task import Task
from npgym.tasks.knapsack.generator import KnapsackConfig, plant
from npgym.tasks.knapsack.instance import KnapsackInstance
from npgym.tasks.knapsack.structured import KnapsackEpisode
from npgym.vector import BatchedEpisode


class KnapsackBatch(BatchedEpisode):
    """B selections built item by item."""

    episode = KnapsackEpisode

    static_keys = ("weights", "values", "capacity", "item_mask")

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        size = limits["n"]
        self.buffers = {
            "weights": np.zeros((batch_size, size), np.int64),
            "values": np.zeros((batch_size, size), np.int64),
            "capacity": np.zeros((batch_size, 1), np.int64),
            "item_mask": np.zeros((batch_size, size), np.int8),
            "taken": np.zeros((batch_size, size), np.int8),
            "remaining": np.zeros((batch_size, 1), np.int64),
            "item": np.zeros((batch_size, 1), np.int64),
            "action_mask": np.zeros((batch_size, 2), np.int8),
        }
        self.item_count = np.zeros(batch_size, np.int64)
        self.value = np.zeros(batch_size, np.int64)

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, KnapsackInstance)
        return {
            "weights": instance.weight_array,
            "values": instance.value_array,
            "capacity": instance.capacity,
        }

    @classmethod
    def draw(cls, task: Task[Any, Any], rng: np.random.Generator, config: BaseModel) -> Any:
        """The generator's items, without building (and validating) the instance."""
        assert isinstance(config, KnapsackConfig)
        drawn = plant(rng, config)
        return {"weights": drawn.weights, "values": drawn.values, "capacity": drawn.capacity}

    def load(self, slots: np.ndarray, arrays: Sequence[dict[str, Any]]) -> None:
        buffers = self.buffers
        for slot, drawn in zip(slots, arrays, strict=True):
            n = len(drawn["weights"])
            for key in ("weights", "values"):
                buffers[key][slot] = 0
                buffers[key][slot, :n] = drawn[key]
            buffers["capacity"][slot, 0] = drawn["capacity"]
            self.item_count[slot] = n
        _restart(
            np.asarray(slots, np.int64),
            self.item_count,
            buffers["weights"],
            buffers["capacity"],
            buffers["item_mask"],
            buffers["taken"],
            buffers["remaining"],
            buffers["item"],
            buffers["action_mask"],
            self.value,
        )

    def step(self, actions: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        finished = np.zeros(self.batch_size, np.bool_)
        illegal = np.zeros(self.batch_size, np.bool_)
        buffers = self.buffers
        _step(
            actions,
            active,
            self.item_count,
            buffers["weights"],
            buffers["values"],
            buffers["taken"],
            buffers["remaining"],
            buffers["item"],
            buffers["action_mask"],
            self.value,
            finished,
            illegal,
        )
        return finished, illegal

    def objectives(self) -> np.ndarray:
        return self.value.astype(np.float64)

    def solution(self, slot: int) -> list[int]:
        return np.flatnonzero(self.buffers["taken"][slot]).tolist()


@njit
def _restart(
    slots: np.ndarray,
    item_count: np.ndarray,
    weights: np.ndarray,
    capacity: np.ndarray,
    item_mask: np.ndarray,
    taken: np.ndarray,
    remaining: np.ndarray,
    item: np.ndarray,
    action_mask: np.ndarray,
    value: np.ndarray,
) -> None:
    """Nothing taken yet in ``slots``, the first item to decide."""
    for slot in slots:
        for index in range(item_mask.shape[1]):
            item_mask[slot, index] = index < item_count[slot]
            taken[slot, index] = 0
        remaining[slot, 0] = capacity[slot, 0]
        item[slot, 0] = 0
        value[slot] = 0
        action_mask[slot, 0] = 1
        action_mask[slot, 1] = weights[slot, 0] <= capacity[slot, 0]


@njit
def _step(
    actions: np.ndarray,
    active: np.ndarray,
    item_count: np.ndarray,
    weights: np.ndarray,
    values: np.ndarray,
    taken: np.ndarray,
    remaining: np.ndarray,
    item: np.ndarray,
    action_mask: np.ndarray,
    value: np.ndarray,
    finished: np.ndarray,
    illegal: np.ndarray,
) -> None:
    """Skip or take every active slot's next item; flag finished selections and illegal moves."""
    for slot in range(actions.shape[0]):
        if not active[slot]:
            continue
        action = actions[slot]
        if action < 0 or action > 1 or action_mask[slot, action] == 0:
            illegal[slot] = True
            action_mask[slot, :] = 0
            continue
        current = item[slot, 0]
        if action == 1:
            taken[slot, current] = 1
            remaining[slot, 0] -= weights[slot, current]
            value[slot] += values[slot, current]
        item[slot, 0] = current + 1
        if current + 1 == item_count[slot]:
            finished[slot] = True
            action_mask[slot, :] = 0
        else:
            action_mask[slot, 0] = 1
            action_mask[slot, 1] = weights[slot, current + 1] <= remaining[slot, 0]
