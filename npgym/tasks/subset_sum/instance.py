"""The SubsetSum instance: positive integers and a target that some subset of them reaches."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from npgym.instance import Instance, Int, field_array

MAX_NUMBERS = 500
MAX_VALUE = 100_000
"""Largest number and largest target: keeps the exact (sum, count) table under ~100 MB."""


class SubsetSumInstance(Instance):
    """``numbers[i]`` is the number at index i (1..MAX_VALUE); ``target`` (1..MAX_VALUE) is
    reached by at least one subset, so every instance has a feasible answer."""

    task: Literal["SubsetSum"] = "SubsetSum"
    numbers: tuple[Int, ...]
    target: Int

    canonical_fields: ClassVar[tuple[str, ...]] = ("numbers", "target")

    @model_validator(mode="after")
    def _valid_numbers(self) -> SubsetSumInstance:
        count = len(self.numbers)
        if not 1 <= count <= MAX_NUMBERS:
            raise ValueError(f"a SubsetSum instance needs 1 to {MAX_NUMBERS} numbers, got {count}")
        for index, number in enumerate(self.numbers):
            if not 1 <= number <= MAX_VALUE:
                raise ValueError(f"number {index} is {number}; numbers must lie in 1..{MAX_VALUE}")
        if not 1 <= self.target <= MAX_VALUE:
            raise ValueError(f"target {self.target} must lie in 1..{MAX_VALUE}")
        reachable = 1  # bit s set: some subset sums to s
        mask = (1 << (self.target + 1)) - 1
        for number in self.numbers:
            reachable = (reachable | (reachable << number)) & mask
        if not reachable >> self.target:
            raise ValueError(f"no subset of the numbers sums to the target {self.target}")
        return self

    @property
    def n(self) -> int:
        """How many numbers there are."""
        return len(self.numbers)

    number_array: ClassVar[field_array] = field_array("numbers")
