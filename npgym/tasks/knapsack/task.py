"""The Knapsack task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from npgym.heuristics import knapsack as solvers
from npgym.results import Reference
from npgym.task import KernelTask
from npgym.tasks.knapsack import generator, prompt
from npgym.tasks.knapsack.instance import KnapsackInstance
from npgym.tasks.knapsack.verifier import (
    check_selection,
    check_selection_python,
    reason,
    scan_check_selection,
)


class KnapsackTask(KernelTask[KnapsackInstance, generator.KnapsackConfig]):
    """0/1 Knapsack: the most valuable set of items whose total weight fits the capacity.

    Answer: ``[i1, i2, ...]``, distinct item numbers in any order (a repeated item is
    infeasible; ``[]`` is feasible with value 0). Generation follows the published planted
    construction with decoys (see :mod:`~npgym.tasks.knapsack.generator`). Reference: ratio
    greedy, then the exact dynamic programme over capacities (OR-Tools' branch and bound when
    the capacity is too large for its table); the planted set is never taken as the reference.
    Certificates (:mod:`npgym.certificates.knapsack`): the checker reruns the programme; past
    its limits, a recorded branch and bound on Lagrangian bounds or the programme on weights
    scaled down (a relaxation); Dantzig's bound for the greedy.
    """

    name = "Knapsack"
    category = "subset selection"
    sense = "max"
    objective_name = "total value"
    instance_type = KnapsackInstance
    tiers: ClassVar[dict[str, generator.KnapsackConfig]] = generator.TIERS
    episode = "npgym.tasks.knapsack.structured:KnapsackEpisode"
    vector = "npgym.tasks.knapsack.vector:KnapsackBatch"
    drawer = "npgym.tasks.knapsack.render:draw"
    variant_maker = "npgym.tasks.knapsack.variants:make_variant"
    inverse = "npgym.tasks.knapsack.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_selection)
    fused_kernel = staticmethod(scan_check_selection)
    reason = staticmethod(reason)
    twin = staticmethod(check_selection_python)
    answer_name = "list of items"

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
            bound, certificate = solvers.lagrangian_leaf(
                weights.tolist(), values.tolist(), instance.capacity
            )
            return Reference.bounded(
                value, items.tolist(), bound, "ratio greedy", certificate=certificate
            )
        result = solvers.exact_knapsack(
            weights, values, instance.capacity, time_limit, incumbent=items
        )
        return Reference.from_result(result, result.witness.tolist(), result.solver)
