"""The SubsetSum task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from npgym.heuristics import subset_sum as solvers
from npgym.results import Reference
from npgym.task import KernelTask
from npgym.tasks.subset_sum import generator, prompt
from npgym.tasks.subset_sum.instance import SubsetSumInstance
from npgym.tasks.subset_sum.verifier import (
    check_subset,
    check_subset_python,
    reason,
    scan_check_subset,
)


class SubsetSumTask(KernelTask[SubsetSumInstance, generator.SubsetSumConfig]):
    """Subset Sum, maximum-cardinality variant: the most distinct indices summing to the target.

    Answer: ``[i1, i2, ...]``, distinct indices in any order (a repeated index is infeasible, as
    is the empty list: targets are positive). Generation plants a subset whose sum is the target
    (see :mod:`~npgym.tasks.subset_sum.generator`). Reference: smallest-first greedy guided by a
    reachability table (always feasible), then the exact dynamic programme over (sum, count),
    whose witness is the lexicographically smallest optimal index list. The time limit is not
    needed: the programme is O(n * target) and the instance limits bound it. Certificates
    (:mod:`npgym.certificates.subset_sum`): the checker reruns the programme; the greedy's bound
    (the most smallest numbers within the target) it recomputes.
    """

    name = "SubsetSum"
    category = "subset selection"
    sense = "max"
    objective_name = "number of indices"
    instance_type = SubsetSumInstance
    tiers: ClassVar[dict[str, generator.SubsetSumConfig]] = generator.TIERS
    episode = "npgym.tasks.subset_sum.structured:SubsetSumEpisode"
    vector = "npgym.tasks.subset_sum.vector:SubsetSumBatch"
    drawer = "npgym.tasks.subset_sum.render:draw"
    variant_maker = "npgym.tasks.subset_sum.variants:make_variant"
    inverse = "npgym.tasks.subset_sum.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_subset)
    fused_kernel = staticmethod(scan_check_subset)
    reason = staticmethod(reason)
    twin = staticmethod(check_subset_python)
    answer_name = "list of indices"

    def random_solution(self, instance: SubsetSumInstance, rng: np.random.Generator) -> list[int]:
        return np.flatnonzero(rng.random(len(instance.numbers)) < 0.5).tolist()

    def greedy_solution(self, instance: SubsetSumInstance) -> list[int]:
        return solvers.greedy_subset(instance.number_array, instance.target).tolist()

    def baseline_solution(self, instance: SubsetSumInstance) -> None:
        """``None``: every answer must hit the target, so no answer takes no thought (the
        ``"strict"`` reward measures from 0)."""
        return None

    def solve(self, instance: SubsetSumInstance, *, exact: bool, time_limit: float) -> Reference:
        if exact:
            subset = solvers.max_cardinality_subset(instance.number_array, instance.target)
            return Reference(
                objective=len(subset),
                solution=subset.tolist(),
                proven_optimal=True,
                method="exact",
                solver="dynamic programme over (sum, count)",
                bound=len(subset),
                gap=0.0,
                certificate={"kind": "dp"},  # the checker reruns the programme
            )
        subset = solvers.greedy_subset(instance.number_array, instance.target)
        bound = solvers.cardinality_bound(instance.number_array, instance.target)
        return Reference.bounded(
            len(subset),
            subset.tolist(),
            bound,
            "smallest-first greedy with a reachability table",
            certificate={"kind": "smallest"},
        )
