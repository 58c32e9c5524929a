"""TSP generator config, the published tiers, and the generator itself.

Two metrics:

- ``euclidean`` (default for the easy, medium and hard tiers): distinct integer points in
  ``[0, grid]^2``; distances are Euclidean distances rounded to the nearest integer. The geometry
  gives a model something to reason with (nearby cities, crossing edges), which makes it the
  better training signal.
- ``uniform`` (the benchmark tier, as in the published NP-Bench): every pair's distance drawn
  uniformly from ``distance_min..distance_max``; no geometry, not metric.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from npgym.config import GeneratorConfig, range_growth
from npgym.tasks.tsp.instance import MAX_CITIES, MAX_DISTANCE


class TSPConfig(GeneratorConfig):
    """How TSP instances are drawn: number of cities, metric and value ranges."""

    growth: ClassVar[Mapping[str, float]] = range_growth(n=1.0)

    n_min: int = Field(ge=3, le=MAX_CITIES)
    n_max: int = Field(ge=3, le=MAX_CITIES)
    metric: Literal["euclidean", "uniform"] = "euclidean"
    grid: int = Field(100, ge=1, le=10**6, description="euclidean: coordinates lie in 0..grid")
    distance_min: int = Field(10, ge=0, le=MAX_DISTANCE, description="uniform: least distance")
    distance_max: int = Field(100, ge=0, le=MAX_DISTANCE, description="uniform: largest distance")

    @model_validator(mode="after")
    def _room_for_points(self) -> TSPConfig:
        if self.metric == "euclidean" and (self.grid + 1) ** 2 < self.n_max:
            raise ValueError(f"grid {self.grid} has fewer than n_max={self.n_max} points")
        return self


TIERS: dict[str, TSPConfig] = {
    "easy": TSPConfig(n_min=10, n_max=20),
    "medium": TSPConfig(n_min=20, n_max=30),
    "hard": TSPConfig(n_min=35, n_max=45),
    "benchmark": TSPConfig(n_min=45, n_max=55, metric="uniform"),
}


def build(rng: np.random.Generator, config: TSPConfig) -> dict[str, Any]:
    """Draw the cities and their distance matrix."""
    matrix, points = draw_arrays(rng, config)
    return {
        "distances": tuple(tuple(int(d) for d in row) for row in matrix.tolist()),
        "coordinates": None if points is None else tuple((int(x), int(y)) for x, y in points),
    }


def draw_arrays(
    rng: np.random.Generator, config: TSPConfig
) -> tuple[np.ndarray, np.ndarray | None]:
    """The distance matrix and (Euclidean) the points that :func:`build` draws, as arrays: the
    batched env draws through it and skips building an instance."""
    n = int(rng.integers(config.n_min, config.n_max + 1))
    if config.metric == "euclidean":
        side = config.grid + 1
        cells = rng.choice(side * side, size=n, replace=False)
        points = np.stack([cells // side, cells % side], axis=1).astype(np.int64)
        offsets = points[:, None, :] - points[None, :, :]
        matrix = np.rint(np.sqrt((offsets**2).sum(axis=2))).astype(np.int64)
        return matrix, points
    draws = rng.integers(config.distance_min, config.distance_max + 1, size=(n, n))
    upper = np.triu(draws, k=1)
    return (upper + upper.T).astype(np.int64), None
