"""The SubsetSum task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from npgym.answer import as_int_array
from npgym.heuristics import subset_sum as solvers
from npgym.results import Reference, Verdict
from npgym.task import Task
from npgym.tasks.subset_sum import generator, prompt
from npgym.tasks.subset_sum.instance import SubsetSumInstance
from npgym.tasks.subset_sum.verifier import (
    OK,
    check_subset,
    check_subset_python,
    reason,
    scan_check_subset,
)


class SubsetSumTask(Task[SubsetSumInstance, generator.SubsetSumConfig]):
    """Subset Sum, maximum-cardinality variant: the most distinct indices summing to the target.

    Answer: ``[i1, i2, ...]``, distinct indices in any order (a repeated index is infeasible, as
    is the empty list: targets are positive). Generation plants a subset whose sum is the target
    (see :mod:`~npgym.tasks.subset_sum.generator`). Reference: smallest-first greedy guided by a
    reachability table (always feasible), then the exact dynamic programme over (sum, count),
    whose witness is the lexicographically smallest optimal index list. The time limit is not
    needed: the programme is O(n * target) and the instance limits bound it.
    """

    name = "SubsetSum"
    category = "subset selection"
    sense = "max"
    objective_name = "number of indices"
    instance_type = SubsetSumInstance
    tiers: ClassVar[dict[str, generator.SubsetSumConfig]] = generator.TIERS
    episode = "npgym.tasks.subset_sum.structured:SubsetSumEpisode"
    drawer = "npgym.tasks.subset_sum.render:draw"
    variant_maker = "npgym.tasks.subset_sum.variants:make_variant"

    def build(self, rng: np.random.Generator, config: generator.SubsetSumConfig) -> dict[str, Any]:
        return generator.build(rng, config)

    def prompt(self, instance: SubsetSumInstance) -> str:
        return prompt.render(instance)

    def to_solution(self, value: Any) -> np.ndarray:
        return as_int_array(value, "list of indices")

    def check(self, instance: SubsetSumInstance, solution: np.ndarray) -> Verdict:
        return self.verdict(instance, check_subset(instance.array, instance.target, solution))

    def check_answer(self, instance: SubsetSumInstance, answer: bytes) -> tuple[int, ...]:
        return scan_check_subset(answer, instance.array, instance.target)

    def verdict(self, instance: SubsetSumInstance, result: tuple[int, ...]) -> Verdict:
        code, a, b, count = result
        if code != OK:
            return Verdict(False, None, reason(code, a, b, instance.n))
        return Verdict(True, int(count))

    def check_python(self, instance: SubsetSumInstance, solution: np.ndarray) -> Verdict:
        result = check_subset_python(list(instance.numbers), instance.target, solution.tolist())
        return self.verdict(instance, result)

    def random_solution(self, instance: SubsetSumInstance, rng: np.random.Generator) -> list[int]:
        return np.flatnonzero(rng.random(len(instance.numbers)) < 0.5).tolist()

    def greedy_solution(self, instance: SubsetSumInstance) -> list[int]:
        return solvers.greedy_subset(instance.array, instance.target).tolist()

    def baseline_solution(self, instance: SubsetSumInstance) -> None:
        """``None``: every answer must hit the target, so no answer takes no thought (the
        ``"strict"`` reward measures from 0)."""
        return None

    def solve(self, instance: SubsetSumInstance, *, exact: bool, time_limit: float) -> Reference:
        if exact:
            subset = solvers.max_cardinality_subset(instance.array, instance.target)
            return Reference(
                objective=len(subset),
                solution=subset.tolist(),
                proven_optimal=True,
                method="exact",
                solver="dynamic programme over (sum, count)",
                bound=len(subset),
                gap=0.0,
            )
        subset = solvers.greedy_subset(instance.array, instance.target)
        bound = solvers.cardinality_bound(instance.array, instance.target)
        return Reference.bounded(
            len(subset),
            subset.tolist(),
            bound,
            "smallest-first greedy with a reachability table",
        )
