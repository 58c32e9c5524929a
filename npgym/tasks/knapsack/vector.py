"""Knapsack's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.knapsack.structured.KnapsackEpisode` with the batch first, stepped in one
numba call. Each slot decides its items in order; taking is legal when the item fits.

With the objective reward, a batch of instances is drawn in one numba call that reproduces
:func:`~npgym.tasks.knapsack.generator.plant`'s numpy draws (revision 2, the published tiers';
:mod:`npgym.streams`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.streams import integer, permutation, uniform
from npgym.task import Task
from npgym.tasks.knapsack.generator import KnapsackConfig, plant
from npgym.tasks.knapsack.instance import KnapsackInstance
from npgym.tasks.knapsack.structured import KnapsackEpisode
from npgym.vector import BatchedEpisode, mark_real, seeded_slot


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    counts: tuple[int, int, int, int],
    weight_bounds: tuple[int, int, int, int],
    band: tuple[float, float],
    filler: tuple[float, float, float],
    shares: tuple[float, float],
    capacity_factor: tuple[float, float],
    weights: np.ndarray,
    values: np.ndarray,
    capacity: np.ndarray,
    item_count: np.ndarray,
) -> None:
    """Each slot's items as :func:`~npgym.tasks.knapsack.generator.plant` draws them (revision
    2) from ``task.generate``'s stream for its seed, every float formed in the generator's
    order so it is the same double: ``counts`` are items and planted min/max, ``weight_bounds``
    the lightest weight, the planted items' top, the decoys' bottom and the heaviest weight,
    ``band`` the planted and decoy ratio band, ``filler`` ``ratio_min`` and the filler shares,
    ``shares`` the decoy share and the correlation."""
    items_min, items_max, planted_min, planted_max = counts
    weight_min, lightest_top, heavy_bottom, weight_max = weight_bounds
    low, high = band
    ratio_min, filler_min, filler_max = filler
    decoy_item_share, correlation = shares
    factor_min, factor_max = capacity_factor
    lightest, heaviest = 1.0 / weight_min, 1.0 / weight_max
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        n = integer(state, items_min, items_max + 1)
        k = min(n, integer(state, planted_min, planted_max + 1))
        decoy = np.empty(n, np.bool_)
        for item in range(n):
            below = uniform(state) < decoy_item_share
            decoy[item] = item >= k and below
        light = np.empty(n, np.int64)
        for item in range(n):
            light[item] = integer(state, weight_min, lightest_top + 1)
        heavy = np.empty(n, np.int64)
        for item in range(n):
            heavy[item] = integer(state, heavy_bottom, weight_max + 1)
        drawn = np.empty(n, np.int64)
        for item in range(n):
            any_weight = integer(state, weight_min, weight_max + 1)
            drawn[item] = light[item] if item < k else heavy[item] if decoy[item] else any_weight
        attractive = np.empty(n)
        for item in range(n):
            correlated = high
            if lightest != heaviest:
                correlated = low + (high - low) * (1.0 / drawn[item] - heaviest) / (
                    lightest - heaviest
                )
            spread = low + (high - low) * uniform(state)
            attractive[item] = correlation * correlated + (1.0 - correlation) * spread
        drawn_values = np.empty(n, np.int64)
        planted_weight = 0
        for item in range(n):
            lesser = ratio_min * (filler_min + (filler_max - filler_min) * uniform(state))
            ratio = attractive[item] if item < k or decoy[item] else lesser
            drawn_values[item] = np.int64(np.floor(drawn[item] * ratio + 0.5))
            if item < k:
                planted_weight += drawn[item]
        factor = factor_min + (factor_max - factor_min) * uniform(state)
        capacity[slot, 0] = np.int64(np.floor(planted_weight * factor + 0.5))
        order = permutation(state, n)
        weights[slot] = 0
        values[slot] = 0
        for item in range(n):
            weights[slot, item] = drawn[order[item]]
            values[slot, item] = drawn_values[order[item]]
        item_count[slot] = n


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
        mark_real(item_mask[slot], item_count[slot])
        taken[slot, :] = 0
        remaining[slot, 0] = capacity[slot, 0]
        item[slot, 0] = 0
        value[slot] = 0
        action_mask[slot, 0] = 1
        action_mask[slot, 1] = weights[slot, 0] <= capacity[slot, 0]


@njit
def _step(
    slots: np.ndarray,
    actions: np.ndarray,
    item_count: np.ndarray,
    weights: np.ndarray,
    values: np.ndarray,
    taken: np.ndarray,
    remaining: np.ndarray,
    item: np.ndarray,
    action_mask: np.ndarray,
    value: np.ndarray,
    finished: np.ndarray,
) -> None:
    """Skip or take the next item of each slot in ``slots``; flag finished selections."""
    for slot in slots:
        action = actions[slot]
        current = item[slot, 0]
        if action == 1:
            taken[slot, current] = 1
            remaining[slot, 0] -= weights[slot, current]
            value[slot] += values[slot, current]
        item[slot, 0] = current + 1
        if current + 1 == item_count[slot]:
            finished[slot] = True
        else:
            action_mask[slot, 0] = 1
            action_mask[slot, 1] = weights[slot, current + 1] <= remaining[slot, 0]


class KnapsackBatch(BatchedEpisode):
    """B selections built item by item."""

    episode = KnapsackEpisode

    static_keys = ("weights", "values", "capacity", "item_mask")

    restart_kernel = staticmethod(_restart)
    step_kernel = staticmethod(_step)
    draw_kernel = staticmethod(_draw_into)

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        self.item_count = np.zeros(batch_size, np.int64)
        self.value = np.zeros(batch_size, np.int64)

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, KnapsackInstance)
        weights = instance.weight_array
        return {
            "weights": weights,
            "values": instance.value_array,
            "capacity": instance.capacity,
            "item_count": len(weights),
        }

    @classmethod
    def draw(cls, task: Task[Any, Any], rng: np.random.Generator, config: BaseModel) -> Any:
        """The generator's items, without building (and validating) the instance."""
        assert isinstance(config, KnapsackConfig)
        drawn = plant(rng, config)
        return {
            "weights": drawn.weights,
            "values": drawn.values,
            "capacity": drawn.capacity,
            "item_count": len(drawn.weights),
        }

    @classmethod
    def draw_parameters(cls, config: BaseModel) -> tuple[Any, ...] | None:
        """Revision 2 only (every tier and difficulty uses it); its bounds and ratio band as
        ``_plant_revision_2`` computes them."""
        assert isinstance(config, KnapsackConfig)
        if config.revision != 2:
            return None
        span = config.weight_max - config.weight_min
        lightest_top = config.weight_min + math.floor(config.planted_weight_share * span + 0.5)
        heavy_bottom = config.weight_max - math.floor(config.decoy_weight_share * span + 0.5)
        margin = (1.0 - config.ratio_width) / 2 * (config.ratio_max - config.ratio_min)
        return (
            (config.items_min, config.items_max, config.planted_min, config.planted_max),
            (config.weight_min, lightest_top, heavy_bottom, config.weight_max),
            (config.ratio_min + margin, config.ratio_max - margin),
            (config.ratio_min, config.filler_ratio_min, config.filler_ratio_max),
            (config.decoy_item_share, config.correlation),
            (config.capacity_factor_min, config.capacity_factor_max),
        )

    def objectives(self) -> np.ndarray:
        return self.value.astype(np.float64)

    def solution(self, slot: int) -> list[int]:
        return np.flatnonzero(self.buffers["taken"][slot]).tolist()
