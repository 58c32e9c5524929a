"""The Knapsack instance: item weights and values, and the capacity."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from npgym.instance import Instance, Int, field_array

MAX_ITEMS = 1000
MAX_WEIGHT = 10**9
MAX_VALUE = 10**9
MAX_CAPACITY = 10**12


class KnapsackInstance(Instance):
    """Item i weighs ``weights[i]`` (1..MAX_WEIGHT) and is worth ``values[i]`` (0..MAX_VALUE);
    the chosen items may weigh at most ``capacity`` (0..MAX_CAPACITY) together."""

    task: Literal["Knapsack"] = "Knapsack"
    weights: tuple[Int, ...]
    values: tuple[Int, ...]
    capacity: Int

    canonical_fields: ClassVar[tuple[str, ...]] = ("weights", "values", "capacity")

    @model_validator(mode="after")
    def _valid_items(self) -> KnapsackInstance:
        count = len(self.weights)
        if not 1 <= count <= MAX_ITEMS:
            raise ValueError(f"a Knapsack instance needs 1 to {MAX_ITEMS} items, got {count}")
        if len(self.values) != count:
            raise ValueError(f"{count} weights but {len(self.values)} values")
        for item, (weight, value) in enumerate(zip(self.weights, self.values, strict=True)):
            if not 1 <= weight <= MAX_WEIGHT:
                raise ValueError(
                    f"item {item} weighs {weight}; weights must lie in 1..{MAX_WEIGHT}"
                )
            if not 0 <= value <= MAX_VALUE:
                raise ValueError(f"item {item} is worth {value}; values must lie in 0..{MAX_VALUE}")
        if not 0 <= self.capacity <= MAX_CAPACITY:
            raise ValueError(f"capacity {self.capacity} must lie in 0..{MAX_CAPACITY}")
        return self

    @property
    def n(self) -> int:
        """How many items there are."""
        return len(self.weights)

    weight_array: ClassVar[field_array] = field_array("weights")
    value_array: ClassVar[field_array] = field_array("values")
