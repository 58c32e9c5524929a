"""The SetCover instance: a universe ``0..universe_size-1`` and a list of subsets of it."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field, Strict, field_validator, model_validator

from npgym.instance import Instance, Int, derived, read_only

MAX_UNIVERSE = 2000
MAX_SUBSETS = 2000


class SetCoverInstance(Instance):
    """``subsets[j]`` lists the elements of subset j, sorted and without repeats (the validator
    sorts them). The subsets need not cover the universe: then the answer is ``Impossible``."""

    task: Literal["SetCover"] = "SetCover"
    universe_size: Annotated[int, Strict(), Field(ge=1, le=MAX_UNIVERSE)]
    subsets: tuple[tuple[Int, ...], ...]

    canonical_fields: ClassVar[tuple[str, ...]] = ("universe_size", "subsets")

    @field_validator("subsets", mode="after")
    @classmethod
    def _sorted_subsets(cls, subsets: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
        if not 1 <= len(subsets) <= MAX_SUBSETS:
            raise ValueError(f"a SetCover instance needs 1 to {MAX_SUBSETS} subsets")
        ordered = tuple(tuple(sorted(subset)) for subset in subsets)
        for index, subset in enumerate(ordered):
            for position in range(1, len(subset)):
                if subset[position] == subset[position - 1]:
                    raise ValueError(f"subset {index} lists element {subset[position]} twice")
        return ordered

    @model_validator(mode="after")
    def _elements_in_universe(self) -> SetCoverInstance:
        for index, subset in enumerate(self.subsets):
            if subset and (subset[0] < 0 or subset[-1] >= self.universe_size):
                outside = subset[0] if subset[0] < 0 else subset[-1]
                raise ValueError(
                    f"subset {index} holds element {outside}, outside 0..{self.universe_size - 1}"
                )
        return self

    @derived
    def membership(self) -> np.ndarray:
        """Read-only boolean matrix: ``membership[j, e]`` when subset j holds element e."""
        matrix = np.zeros((len(self.subsets), self.universe_size), dtype=np.bool_)
        for index, subset in enumerate(self.subsets):
            matrix[index, list(subset)] = True
        return read_only(matrix)

    @derived
    def offsets(self) -> np.ndarray:
        """Subset j's elements are ``elements[offsets[j]:offsets[j + 1]]`` (read-only int64)."""
        return read_only(np.cumsum([0, *map(len, self.subsets)], dtype=np.int64))

    @derived
    def elements(self) -> np.ndarray:
        """Every subset's elements, concatenated in subset order (read-only int64)."""
        return read_only(np.array([e for subset in self.subsets for e in subset], dtype=np.int64))
