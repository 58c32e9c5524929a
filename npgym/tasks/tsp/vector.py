"""TSP's structured episodes over a batch (``npgym.vector``): the observation of
:class:`~npgym.tasks.tsp.structured.TSPEpisode` with the batch first, stepped in one numba call.

Each slot holds its padded distance matrix, its city count, the tour so far and its length; a
move appends a city, adds the edge to it, and on the last city closes the tour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from npgym.heuristics.jit import njit
from npgym.instance import Instance
from npgym.streams import choice_without_replacement, floyd_applies, integer
from npgym.task import Task
from npgym.tasks.tsp.generator import TSPConfig, draw_arrays
from npgym.tasks.tsp.instance import TSPInstance
from npgym.tasks.tsp.structured import TSPEpisode
from npgym.vector import BatchedEpisode, mark_real, seeded_slot, set_symmetric


@njit
def _draw_into(
    slots: np.ndarray,
    seeds: np.ndarray,
    key: int,
    n_min: int,
    n_max: int,
    euclidean: bool,
    grid: int,
    distance_min: int,
    distance_max: int,
    distances: np.ndarray,
    coordinates: np.ndarray,
    has_coordinates: np.ndarray,
    city_count: np.ndarray,
) -> None:
    """Each slot's instance as :func:`~npgym.tasks.tsp.generator.draw_arrays` draws it from
    ``task.generate``'s stream for its seed, numpy's draws reproduced by :mod:`npgym.streams`."""
    for index in range(slots.shape[0]):
        slot, state = seeded_slot(slots, seeds, key, index)
        n = integer(state, n_min, n_max + 1)
        distances[slot] = 0
        coordinates[slot] = 0
        has_coordinates[slot, 0] = euclidean
        city_count[slot] = n
        if euclidean:
            side = grid + 1
            cells = choice_without_replacement(state, side * side, n)
            for i in range(n):
                coordinates[slot, i, 0] = cells[i] // side
                coordinates[slot, i, 1] = cells[i] % side
            for i in range(n):
                for j in range(n):
                    dx = coordinates[slot, i, 0] - coordinates[slot, j, 0]
                    dy = coordinates[slot, i, 1] - coordinates[slot, j, 1]
                    distances[slot, i, j] = np.int64(
                        np.rint(np.sqrt(np.float64(dx * dx + dy * dy)))
                    )
        else:
            for i in range(n):
                for j in range(n):
                    draw = integer(state, distance_min, distance_max + 1)
                    if j > i:
                        set_symmetric(distances[slot], i, j, draw)


@njit
def _restart(
    slots: np.ndarray,
    city_count: np.ndarray,
    city_mask: np.ndarray,
    visited: np.ndarray,
    current: np.ndarray,
    tour: np.ndarray,
    action_mask: np.ndarray,
    steps: np.ndarray,
    length: np.ndarray,
) -> None:
    """Empty tours standing on city 0 in ``slots``."""
    for slot in slots:
        mark_real(city_mask[slot], city_count[slot])
        visited[slot, :] = 0
        tour[slot, :] = -1
        action_mask[slot, :] = city_mask[slot]
        action_mask[slot, 0] = 0
        visited[slot, 0] = 1
        tour[slot, 0] = 0
        current[slot, 0] = 0
        steps[slot] = 1
        length[slot] = 0


@njit
def _step(
    slots: np.ndarray,
    actions: np.ndarray,
    city_count: np.ndarray,
    distances: np.ndarray,
    visited: np.ndarray,
    current: np.ndarray,
    tour: np.ndarray,
    action_mask: np.ndarray,
    steps: np.ndarray,
    length: np.ndarray,
    finished: np.ndarray,
) -> None:
    """Move each slot in ``slots`` to its chosen city; flag finished tours."""
    for slot in slots:
        city = actions[slot]
        here = current[slot, 0]
        length[slot] += distances[slot, here, city]
        tour[slot, steps[slot]] = city
        steps[slot] += 1
        visited[slot, city] = 1
        action_mask[slot, city] = 0
        current[slot, 0] = city
        if steps[slot] == city_count[slot]:
            length[slot] += distances[slot, city, 0]
            finished[slot] = True


class TSPBatch(BatchedEpisode):
    """B tours built city by city from city 0."""

    episode = TSPEpisode

    static_keys = ("distances", "coordinates", "has_coordinates", "city_mask")

    restart_kernel = staticmethod(_restart)
    step_kernel = staticmethod(_step)
    draw_kernel = staticmethod(_draw_into)

    def __init__(self, batch_size: int, limits: Mapping[str, int]) -> None:
        super().__init__(batch_size, limits)
        self.city_count = np.zeros(batch_size, np.int64)
        self.steps = np.zeros(batch_size, np.int64)
        self.length = np.zeros(batch_size, np.int64)

    @classmethod
    def arrays(cls, instance: Instance) -> dict[str, Any]:
        assert isinstance(instance, TSPInstance)
        coordinates = instance.coordinates
        points = None if coordinates is None else np.array(coordinates, np.int64)
        return {"distances": instance.matrix, "coordinates": points}

    @classmethod
    def draw(cls, task: Task[Any, Any], rng: np.random.Generator, config: BaseModel) -> Any:
        assert isinstance(config, TSPConfig)
        matrix, points = draw_arrays(rng, config)
        return {"distances": matrix, "coordinates": points}

    def load(self, slots: np.ndarray, arrays: Sequence[dict[str, Any]]) -> None:
        for slot, drawn in zip(slots, arrays, strict=True):
            matrix, points = drawn["distances"], drawn["coordinates"]
            self.put(slot, "distances", matrix)
            self.put(slot, "coordinates", 0 if points is None else points)
            self.put(slot, "has_coordinates", points is not None)
            self.put(slot, "city_count", matrix.shape[0])
        self.restart(slots)

    @classmethod
    def draw_parameters(cls, config: BaseModel) -> tuple[Any, ...] | None:
        assert isinstance(config, TSPConfig)
        euclidean = config.metric == "euclidean"
        if euclidean and not floyd_applies((config.grid + 1) ** 2, config.n_max):
            return None
        return (
            config.n_min,
            config.n_max,
            euclidean,
            config.grid,
            config.distance_min,
            config.distance_max,
        )

    def objectives(self) -> np.ndarray:
        return self.length.astype(np.float64)

    def solution(self, slot: int) -> list[int]:
        tour = self.buffers["tour"][slot, : self.steps[slot]].tolist()
        return [*tour, tour[0]] if self.steps[slot] == self.city_count[slot] else tour
