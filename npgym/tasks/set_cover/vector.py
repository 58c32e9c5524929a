"""SetCover's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.set_cover.structured.SetCoverEpisode` with the batch first, stepped in one
numba call. Each slot picks subsets that cover something new until its universe is covered, or
answers ``Impossible`` (legal exactly when no cover exists).

Each slot counts, per subset, the uncovered elements it holds (its gain): a pick subtracts the
elements it newly covers from every subset holding them, and the subsets left legal are those
whose gain is still positive, without rescanning the membership matrix.

With the objective reward, a batch of instances is drawn in one numba call that reproduces
:func:`~npgym.tasks.set_cover.generator.build`'s numpy draws (:mod:`npgym.streams`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.streams import choice_without_replacement, integer, uniform
from npgym.tasks.set_cover.generator import PLANTED_ABOVE_UNIVERSE, SetCoverConfig
from npgym.tasks.set_cover.instance import SetCoverInstance
from npgym.tasks.set_cover.structured import SetCoverEpisode
from npgym.tasks.set_cover.task import IMPOSSIBLE
from npgym.vector import BatchedEpisode, mark_real, seeded_slot


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    universe_min: int,
    universe_max: int,
    subsets_min: int,
    subsets_max: int,
    size_factor: float,
    impossible_probability: float,
    membership: np.ndarray,
    subset_count: np.ndarray,
    universe_size: np.ndarray,
) -> None:
    """Each slot's subsets as :func:`~npgym.tasks.set_cover.generator.draw` draws them (random
    subsets, not the planted construction) from ``task.generate``'s stream for its seed, numpy's
    draws reproduced by :mod:`npgym.streams` (universes of at most 40 elements, where numpy's
    ``choice`` takes Floyd's path)."""
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        u = integer(state, universe_min, universe_max + 1)
        m = integer(state, subsets_min, subsets_max + 1)
        largest = min(u, max(2, math.floor(size_factor * u + 0.5)))
        sizes = np.empty(m, np.int64)
        for subset in range(m):
            sizes[subset] = integer(state, 2, largest + 1)
        matrix = membership[slot]
        matrix[:] = 0
        for subset in range(m):
            for element in choice_without_replacement(state, u, sizes[subset]):
                matrix[subset, element] = 1
        for element in range(u):
            if not matrix[:m, element].any():
                matrix[integer(state, 0, m), element] = 1
        if uniform(state) < impossible_probability:
            missing = integer(state, 0, u)
            matrix[:, missing] = 0
        subset_count[slot] = m
        universe_size[slot] = u


@njit
def _restart(
    slots: np.ndarray,
    subset_count: np.ndarray,
    universe_size: np.ndarray,
    membership: np.ndarray,
    subset_mask: np.ndarray,
    element_mask: np.ndarray,
    picked: np.ndarray,
    covered: np.ndarray,
    action_mask: np.ndarray,
    gains: np.ndarray,
    uncovered: np.ndarray,
    chosen: np.ndarray,
    impossible: np.ndarray,
) -> None:
    """Nothing picked yet in ``slots``: every non-empty subset legal, ``Impossible`` legal when
    some element is in no subset."""
    size = subset_mask.shape[1]
    for slot in slots:
        m = subset_count[slot]
        u = universe_size[slot]
        mark_real(subset_mask[slot], m)
        mark_real(element_mask[slot], u)
        picked[slot, :] = 0
        covered[slot, :] = 0
        for subset in range(size):
            gain = 0
            for element in range(u):
                gain += membership[slot, subset, element]
            gains[slot, subset] = gain
            action_mask[slot, subset] = gain > 0
        coverable = True
        for element in range(u):
            held = False
            for subset in range(m):
                held = held or membership[slot, subset, element] == 1
            coverable = coverable and held
        action_mask[slot, size] = not coverable
        uncovered[slot] = u
        chosen[slot] = 0
        impossible[slot] = False


@njit
def _step(
    slots: np.ndarray,
    actions: np.ndarray,
    subset_count: np.ndarray,
    universe_size: np.ndarray,
    membership: np.ndarray,
    picked: np.ndarray,
    covered: np.ndarray,
    action_mask: np.ndarray,
    gains: np.ndarray,
    uncovered: np.ndarray,
    chosen: np.ndarray,
    impossible: np.ndarray,
    finished: np.ndarray,
) -> None:
    """Pick the subset of each slot in ``slots`` (or answer ``Impossible``); flag finished
    covers."""
    size = picked.shape[1]
    for slot in slots:
        action = actions[slot]
        if action == size:
            impossible[slot] = True
            finished[slot] = True
            continue
        m = subset_count[slot]
        picked[slot, action] = 1
        chosen[slot] += 1
        for element in range(universe_size[slot]):
            if membership[slot, action, element] == 1 and covered[slot, element] == 0:
                covered[slot, element] = 1
                uncovered[slot] -= 1
                for subset in range(m):
                    gains[slot, subset] -= membership[slot, subset, element]
        if uncovered[slot] == 0:
            finished[slot] = True
        else:
            for subset in range(m):
                action_mask[slot, subset] = gains[slot, subset] > 0


class SetCoverBatch(BatchedEpisode):
    """B covers built subset by subset."""

    episode = SetCoverEpisode

    static_keys = ("membership", "subset_mask", "element_mask")

    restart_kernel = staticmethod(_restart)
    step_kernel = staticmethod(_step)
    draw_kernel = staticmethod(_draw_into)

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        m = limits["subsets"]
        self.subset_count = np.zeros(batch_size, np.int64)
        self.universe_size = np.zeros(batch_size, np.int64)
        self.gains = np.zeros((batch_size, m), np.int64)
        """How many uncovered elements each subset holds."""
        self.uncovered = np.zeros(batch_size, np.int64)
        self.chosen = np.zeros(batch_size, np.int64)
        self.impossible = np.zeros(batch_size, np.bool_)

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, SetCoverInstance)
        subsets, universe = instance.membership.shape
        return {
            "membership": instance.membership,
            "subset_count": subsets,
            "universe_size": universe,
        }

    @classmethod
    def draw_parameters(cls, config: BaseModel) -> tuple[Any, ...] | None:
        assert isinstance(config, SetCoverConfig)
        if config.universe_size_max > PLANTED_ABOVE_UNIVERSE:
            return None
        return (
            config.universe_size_min,
            config.universe_size_max,
            config.subsets_min,
            config.subsets_max,
            config.subset_size_factor,
            config.impossible_probability,
        )

    def objectives(self) -> np.ndarray:
        """Subsets picked, 0 once ``Impossible`` is answered (as the single episode)."""
        return np.where(self.impossible, 0, self.chosen).astype(np.float64)

    def solution(self, slot: int) -> list[int] | str:
        if self.impossible[slot]:
            return IMPOSSIBLE
        return np.flatnonzero(self.buffers["picked"][slot]).tolist()
