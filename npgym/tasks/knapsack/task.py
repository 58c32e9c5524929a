"""The Knapsack task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from npgym.answer import as_int_array
from npgym.heuristics import knapsack as solvers
from npgym.results import Reference, Verdict
from npgym.task import Task
from npgym.tasks.knapsack import generator, prompt
from npgym.tasks.knapsack.instance import KnapsackInstance
from npgym.tasks.knapsack.verifier import (
    OK,
    check_selection,
    check_selection_python,
    reason,
    scan_check_selection,
)


class KnapsackTask(Task[KnapsackInstance, generator.KnapsackConfig]):
    """0/1 Knapsack: the most valuable set of items whose total weight fits the capacity.

    Answer: ``[i1, i2, ...]``, distinct item numbers in any order (a repeated item is
    infeasible; ``[]`` is feasible with value 0). Generation follows the published planted
    construction with decoys (see :mod:`~npgym.tasks.knapsack.generator`). Reference: ratio
    greedy, then the exact dynamic programme over capacities (OR-Tools' branch and bound when
    the capacity is too large for its table); the planted set is never taken as the reference.
    """

    name = "Knapsack"
    category = "subset selection"
    sense = "max"
    objective_name = "total value"
    instance_type = KnapsackInstance
    tiers: ClassVar[dict[str, generator.KnapsackConfig]] = generator.TIERS
    episode = "npgym.tasks.knapsack.structured:KnapsackEpisode"
    drawer = "npgym.tasks.knapsack.render:draw"
    variant_maker = "npgym.tasks.knapsack.variants:make_variant"

    def build(self, rng: np.random.Generator, config: generator.KnapsackConfig) -> dict[str, Any]:
        return generator.build(rng, config)

    def prompt(self, instance: KnapsackInstance) -> str:
        return prompt.render(instance)

    def to_solution(self, value: Any) -> np.ndarray:
        return as_int_array(value, "list of items")

    def check(self, instance: KnapsackInstance, solution: np.ndarray) -> Verdict:
        weights, values = instance.weight_array, instance.value_array
        return self.verdict(instance, check_selection(weights, values, instance.capacity, solution))

    def check_answer(self, instance: KnapsackInstance, answer: bytes) -> tuple[int, ...]:
        weights, values = instance.weight_array, instance.value_array
        return scan_check_selection(answer, weights, values, instance.capacity)

    def verdict(self, instance: KnapsackInstance, result: tuple[int, ...]) -> Verdict:
        code, a, b, total = result
        if code != OK:
            return Verdict(False, None, reason(code, a, b, instance.n))
        return Verdict(True, int(total))

    def check_python(self, instance: KnapsackInstance, solution: np.ndarray) -> Verdict:
        result = check_selection_python(
            list(instance.weights), list(instance.values), instance.capacity, solution.tolist()
        )
        return self.verdict(instance, result)

    def random_solution(self, instance: KnapsackInstance, rng: np.random.Generator) -> list[int]:
        return np.flatnonzero(rng.random(len(instance.weights)) < 0.5).tolist()

    def greedy_solution(self, instance: KnapsackInstance) -> list[int]:
        items = solvers.greedy_knapsack(
            instance.weight_array, instance.value_array, instance.capacity
        )
        return items.tolist()

    def baseline_solution(self, instance: KnapsackInstance) -> list[int] | None:
        """The first item that fits on its own (``None`` if none does): one item, no comparison."""
        fitting = np.flatnonzero(instance.weight_array <= instance.capacity)
        return [int(fitting[0])] if fitting.size else None

    def solve(self, instance: KnapsackInstance, *, exact: bool, time_limit: float) -> Reference:
        weights, values = instance.weight_array, instance.value_array
        items = solvers.greedy_knapsack(weights, values, instance.capacity)
        value = int(values[items].sum())
        if not exact:
            bound = solvers.dantzig_bound(weights, values, instance.capacity)
            return Reference.bounded(value, items.tolist(), bound, "ratio greedy")
        result = solvers.exact_knapsack(
            weights, values, instance.capacity, time_limit, incumbent=items
        )
        return Reference.from_result(result, result.witness.tolist(), result.solver)
