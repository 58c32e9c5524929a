"""The TSP instance: a symmetric integer distance matrix, with coordinates when Euclidean."""

from __future__ import annotations

from itertools import chain
from typing import ClassVar, Literal

import numpy as np
from pydantic import model_validator

from npgym.heuristics.jit import njit
from npgym.instance import Instance, Int, derived, read_only

MAX_CITIES = 2000
MAX_DISTANCE = 10**9


class TSPInstance(Instance):
    """``distances[i][j]`` is the distance between cities i and j (symmetric, zero diagonal).

    ``coordinates`` (integer points) is present for Euclidean instances, whose distances are the
    Euclidean distances rounded to the nearest integer.
    """

    task: Literal["TSP"] = "TSP"
    distances: tuple[tuple[Int, ...], ...]
    coordinates: tuple[tuple[Int, Int], ...] | None = None

    canonical_fields: ClassVar[tuple[str, ...]] = ("distances",)

    @model_validator(mode="after")
    def _valid_matrix(self) -> TSPInstance:
        n = len(self.distances)
        if not 3 <= n <= MAX_CITIES:
            raise ValueError(f"a TSP instance needs 3 to {MAX_CITIES} cities, got {n}")
        if set(map(len, self.distances)) != {n}:
            raise ValueError(f"distances must be a {n} x {n} matrix")
        matrix = _as_array(self.distances)
        problem = matrix_problem(matrix, MAX_DISTANCE)
        if problem:
            raise ValueError(_MATRIX_PROBLEMS[problem])
        if self.coordinates is not None and len(self.coordinates) != n:
            raise ValueError(f"coordinates must list {n} points")
        self.cached("matrix", lambda: matrix)  # validated once: scoring reuses it
        return self

    @property
    def n(self) -> int:
        """Number of cities."""
        return len(self.distances)

    @derived
    def matrix(self) -> np.ndarray:
        """The distances as a read-only int64 array (built once per instance)."""
        return _as_array(self.distances)


_OUT_OF_RANGE, _ASYMMETRIC, _NONZERO_DIAGONAL = 1, 2, 3
_MATRIX_PROBLEMS = {
    _OUT_OF_RANGE: f"distances must lie in 0..{MAX_DISTANCE}",
    _ASYMMETRIC: "distances must be symmetric",
    _NONZERO_DIAGONAL: "distances from a city to itself must be 0",
}


@njit
def matrix_problem(matrix: np.ndarray, max_distance: int) -> int:
    """What is wrong with a square distance matrix, in the order the errors are reported (a
    distance outside ``0..max_distance`` anywhere, then asymmetry, then a nonzero diagonal), or
    0; one pass (numba)."""
    asymmetric = nonzero_diagonal = False
    for row in range(matrix.shape[0]):
        for column in range(matrix.shape[1]):
            distance = matrix[row, column]
            if distance < 0 or distance > max_distance:
                return _OUT_OF_RANGE
            asymmetric |= distance != matrix[column, row]
        nonzero_diagonal |= matrix[row, row] != 0
    if asymmetric:
        return _ASYMMETRIC
    return _NONZERO_DIAGONAL if nonzero_diagonal else 0


def _as_array(rows: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """The square matrix ``rows`` as a read-only int64 array, read in one pass."""
    try:
        flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=len(rows) ** 2)
    except OverflowError as error:
        raise ValueError(f"distances must lie in 0..{MAX_DISTANCE}") from error
    return read_only(flat.reshape(len(rows), len(rows)))
