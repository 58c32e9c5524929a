"""TSP in classic-RL form: the tour starts at city 0; each action is the next city.

Observation (N = the tier's largest city count): ``distances`` (N, N) int64, ``coordinates``
(N, 2) int64 (zeros for a non-Euclidean instance, ``has_coordinates`` says which), ``city_mask``
(N,) int8 real cities, ``visited`` (N,) int8, ``current`` (1,) int64 city the tour stands on,
``tour`` (N,) int64 cities so far, -1 padded. Action: Discrete(N), an unvisited real city. The
tour closes itself after the last city.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from npgym.structured import Episode, first_n, flags, integers, padded
from npgym.tasks.tsp.instance import MAX_DISTANCE, TSPInstance

COORDINATE_LIMIT = 2**31 - 1


class TSPEpisode(Episode[TSPInstance]):
    """Build a tour city by city from city 0."""

    @classmethod
    def spaces(cls, limits: Mapping[str, int]) -> dict[str, spaces.Space[Any]]:
        n = limits["n"]
        return {
            "distances": integers(0, MAX_DISTANCE, (n, n)),
            "coordinates": integers(-COORDINATE_LIMIT, COORDINATE_LIMIT, (n, 2)),
            "has_coordinates": flags((1,)),
            "city_mask": flags((n,)),
            "visited": flags((n,)),
            "current": integers(0, n - 1, (1,)),
            "tour": integers(-1, n - 1, (n,)),
        }

    def __init__(self, instance: TSPInstance, limits: Mapping[str, int]) -> None:
        super().__init__(instance, limits)
        size = limits["n"]
        self.tour = [0]
        self.visited = np.zeros(size, np.bool_)
        self.visited[0] = True
        coordinates = instance.coordinates or ()
        self.static = {
            "distances": padded(instance.matrix, (size, size)),
            "coordinates": padded(np.reshape(coordinates, (-1, 2)), (size, 2)),
            "has_coordinates": np.array([instance.coordinates is not None], np.int8),
            "city_mask": first_n(instance.n, size),
        }

    def observation(self) -> dict[str, np.ndarray]:
        size = self.limits["n"]
        return {
            **self.static,
            "visited": self.visited.astype(np.int8),
            "current": np.array([self.tour[-1]], np.int64),
            "tour": padded(self.tour, (size,), fill=-1),
        }

    def mask(self) -> np.ndarray:
        legal = ~self.visited
        legal[self.instance.n :] = False
        return legal

    def apply(self, action: int) -> bool:
        self.tour.append(action)
        self.visited[action] = True
        return len(self.tour) == self.instance.n

    def solution(self) -> list[int]:
        complete = len(self.tour) == self.instance.n
        return [*self.tour, self.tour[0]] if complete else list(self.tour)

    def partial_objective(self) -> float:
        matrix = self.instance.matrix
        length = sum(int(matrix[a, b]) for a, b in zip(self.tour, self.tour[1:], strict=False))
        if len(self.tour) == self.instance.n:
            length += int(matrix[self.tour[-1], self.tour[0]])
        return float(length)

    def greedy_action(self) -> int:
        """Nearest unvisited city."""
        row = self.instance.matrix[self.tour[-1]].astype(np.float64)
        row[~self.mask()[: self.instance.n]] = np.inf
        return int(np.argmin(row))
