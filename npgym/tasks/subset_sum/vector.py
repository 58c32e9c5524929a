"""SubsetSum's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.subset_sum.structured.SubsetSumEpisode` with the batch first, stepped in
one numba call. Each slot decides its numbers in order; a choice is legal when the numbers still
to come can make up what remains of the target, looked up in the slot's table of the sums each
suffix reaches (bitsets of 64-bit words, as the single episode's integers, built at load).

With the objective reward, a batch of revision-2 instances is drawn in one numba call that
reproduces :func:`~npgym.tasks.subset_sum.generator.plant`'s numpy draws (:mod:`npgym.streams`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.streams import integer, permutation
from npgym.tasks.subset_sum.generator import EXCLUDED_MIN, SubsetSumConfig
from npgym.tasks.subset_sum.instance import SubsetSumInstance
from npgym.tasks.subset_sum.structured import SubsetSumEpisode
from npgym.vector import BatchedEpisode, mark_real, seeded_slot


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    n_min: int,
    n_max: int,
    size_min: int,
    size_max: int,
    value_min: int,
    value_max: int,
    core_max: int,
    parity: bool,
    decoy_max: int,
    fixer_min: int,
    numbers: np.ndarray,
    target: np.ndarray,
    number_count: np.ndarray,
) -> None:
    """Each slot's instance as revision 2 of :func:`~npgym.tasks.subset_sum.generator.plant`
    draws it from ``task.generate``'s stream for its seed: cores, the decoy (parity trap),
    numbers from the pool, clipped, then shuffled; the target is the planted cores' sum."""
    step = 2 if parity else 1
    values = np.arange(2, max(value_max, 2) + 1)
    pool = values[(values % 2 == 0) | (values >= fixer_min)] if parity else values
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        n = integer(state, n_min, n_max + 1)
        size = max(1, min(integer(state, size_min, size_max + 1), n - EXCLUDED_MIN))
        drawn = np.empty(n, np.int64)
        for i in range(size):
            drawn[i] = step * integer(state, 1, max(1, core_max // step) + 1)
        decoys = min(1, n - size) if parity else 0
        for i in range(size, size + decoys):
            drawn[i] = 2 * integer(state, 0, (decoy_max + 1) // 2) + 1
        for i in range(size + decoys, n):
            drawn[i] = pool[integer(state, 0, pool.size)]
        order = permutation(state, n)
        numbers[slot] = 0
        total = 0
        for i in range(n):
            numbers[slot, i] = min(max(drawn[order[i]], value_min), value_max)
            if order[i] < size:
                total += numbers[slot, i]
        target[slot, 0] = total
        number_count[slot] = n


@njit
def _reaches(bits: np.ndarray, total: int) -> bool:
    """Bit ``total`` of a bitset of 64-bit words (``total >= 0``)."""
    return ((bits[total >> 6] >> np.uint64(total & 63)) & np.uint64(1)) == 1


@njit
def _mask(
    slot: int,
    numbers: np.ndarray,
    remaining: np.ndarray,
    index: np.ndarray,
    action_mask: np.ndarray,
    reachable: np.ndarray,
) -> None:
    """Skip is legal when the later numbers still reach ``remaining``; take, when they reach
    ``remaining`` minus this number."""
    current = index[slot, 0]
    after = reachable[slot, current + 1]
    rest = remaining[slot, 0] - numbers[slot, current]
    action_mask[slot, 0] = _reaches(after, remaining[slot, 0])
    action_mask[slot, 1] = rest >= 0 and _reaches(after, rest)


@njit
def _restart(
    slots: np.ndarray,
    number_count: np.ndarray,
    numbers: np.ndarray,
    target: np.ndarray,
    number_mask: np.ndarray,
    taken: np.ndarray,
    remaining: np.ndarray,
    index: np.ndarray,
    action_mask: np.ndarray,
    reachable: np.ndarray,
) -> None:
    """Nothing taken yet in ``slots``, the first number to decide; fills each slot's table of
    suffix sums up to its target, from the empty suffix (sum 0) back to the whole list."""
    for slot in slots:
        n = number_count[slot]
        words = (target[slot, 0] >> 6) + 1
        reachable[slot, n, :words] = 0
        reachable[slot, n, 0] = 1
        for i in range(n - 1, -1, -1):
            word_shift = numbers[slot, i] >> 6
            bit_shift = np.uint64(numbers[slot, i] & 63)
            for word in range(words):
                bits = reachable[slot, i + 1, word]
                source = word - word_shift
                if source >= 0:
                    bits |= reachable[slot, i + 1, source] << bit_shift
                    if bit_shift and source >= 1:
                        bits |= reachable[slot, i + 1, source - 1] >> (np.uint64(64) - bit_shift)
                reachable[slot, i, word] = bits
        mark_real(number_mask[slot], n)
        taken[slot, :] = 0
        remaining[slot, 0] = target[slot, 0]
        index[slot, 0] = 0
        _mask(slot, numbers, remaining, index, action_mask, reachable)


@njit
def _step(
    slots: np.ndarray,
    actions: np.ndarray,
    number_count: np.ndarray,
    numbers: np.ndarray,
    taken: np.ndarray,
    remaining: np.ndarray,
    index: np.ndarray,
    action_mask: np.ndarray,
    reachable: np.ndarray,
    finished: np.ndarray,
) -> None:
    """Skip or take the next number of each slot in ``slots``; flag finished subsets."""
    for slot in slots:
        action = actions[slot]
        current = index[slot, 0]
        if action == 1:
            taken[slot, current] = 1
            remaining[slot, 0] -= numbers[slot, current]
        index[slot, 0] = current + 1
        if current + 1 == number_count[slot]:
            finished[slot] = True
        else:
            _mask(slot, numbers, remaining, index, action_mask, reachable)


class SubsetSumBatch(BatchedEpisode):
    """B subsets built number by number, always able to reach the target."""

    episode = SubsetSumEpisode

    static_keys = ("numbers", "target", "number_mask")

    restart_kernel = staticmethod(_restart)
    step_kernel = staticmethod(_step)
    draw_kernel = staticmethod(_draw_into)

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        size = limits["n"]
        self.number_count = np.zeros(batch_size, np.int64)
        self.reachable = np.zeros((batch_size, size + 1, 1), np.uint64)
        """``[b, i]``: bit s set when some subset of slot b's numbers from i on sums to s; as
        many words as the largest target loaded needs (widened by :meth:`restart`)."""

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, SubsetSumInstance)
        numbers = instance.number_array
        return {"numbers": numbers, "target": instance.target, "number_count": len(numbers)}

    def restart(self, slots: np.ndarray) -> None:
        """Fresh episodes on the instances now in ``slots``, the table widened to their
        targets first."""
        slots = np.asarray(slots, np.int64)
        words = int(self.buffers["target"][slots, 0].max(initial=0)) // 64 + 1
        if words > self.reachable.shape[2]:
            wider = np.zeros((*self.reachable.shape[:2], words), np.uint64)
            wider[:, :, : self.reachable.shape[2]] = self.reachable
            self.reachable = wider
        super().restart(slots)

    @classmethod
    def draw_parameters(cls, config: BaseModel) -> tuple[Any, ...] | None:
        assert isinstance(config, SubsetSumConfig)
        if config.revision != 2:
            return None
        decoy_max, fixer_min = config.trap() if config.parity else (1, 1)  # (1, 1): unread
        return (
            config.n_min,
            config.n_max,
            config.solution_size_min,
            config.solution_size_max,
            config.value_min,
            config.value_max,
            config.core_values(),
            config.parity,
            decoy_max,
            fixer_min,
        )

    def objectives(self) -> np.ndarray:
        return self.buffers["taken"].sum(axis=1, dtype=np.float64)

    def solution(self, slot: int) -> list[int]:
        return np.flatnonzero(self.buffers["taken"][slot]).tolist()
