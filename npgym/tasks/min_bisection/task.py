"""The MinBisection task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from npgym.answer import AnswerFormatError, IntRows, as_int_array, as_list
from npgym.heuristics import min_bisection as solvers
from npgym.heuristics.result import SolverResult
from npgym.results import Reference
from npgym.task import KernelTask
from npgym.tasks.min_bisection import generator, prompt
from npgym.tasks.min_bisection.instance import MinBisectionInstance
from npgym.tasks.min_bisection.verifier import (
    check_bisection,
    check_bisection_python,
    reason,
    scan_check_bisection,
)


class MinBisectionTask(KernelTask[MinBisectionInstance, generator.MinBisectionConfig]):
    """Minimum bisection: split a weighted graph into two halves with the least cut weight.

    Answer: ``[[part A], [part B]]``; every vertex in exactly one part, sizes differing by at
    most one (for odd ``n``, by exactly one; either part may be the larger). Edge weights are
    integers 1..10 in generated instances (any positive integer up to 10^6 is accepted).
    Generator: two hidden communities with traitors and double agents at the harder tiers (see
    :mod:`npgym.tasks.min_bisection.generator`). Reference: multi-start Kernighan-Lin, then an
    exact branch and bound with a capacity-aware bound; where that leaves a gap, METIS's
    bisection (repaired to an exact balance, refined by Kernighan-Lin) replaces the cut when
    smaller. The proof is the SDP + triangle dual bound's certificate
    (:mod:`npgym.certificates.min_bisection`), checked in integer arithmetic. Work is limited
    by node and eigendecomposition counts derived from ``time_limit``
    (``solvers.node_budget``, ``solvers.triangle_work``), not by the clock, so the proof status
    is the same on every machine; every published tier is proven in well under a second. The
    witness lists the part holding vertex 0 first, both parts sorted.
    """

    name = "MinBisection"
    category = "graph partitioning"
    sense = "min"
    objective_name = "cut weight"
    instance_type = MinBisectionInstance
    tiers: ClassVar[dict[str, generator.MinBisectionConfig]] = generator.TIERS
    episode = "npgym.tasks.min_bisection.structured:MinBisectionEpisode"
    vector = "npgym.tasks.min_bisection.vector:MinBisectionBatch"
    drawer = "npgym.tasks.min_bisection.render:draw"
    variant_maker = "npgym.tasks.min_bisection.variants:make_variant"
    inverse = "npgym.tasks.min_bisection.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_bisection)
    fused_kernel = staticmethod(scan_check_bisection)
    reason = staticmethod(reason)
    twin = staticmethod(check_bisection_python)
    answer_name = "answer [[part A], [part B]]"
    solution_part_count = 2

    def to_solution(self, value: Any) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(value, IntRows) and len(value) == 2:  # the parser's list of two lists
            return value.row(0), value.row(1)
        items = as_list(value, self.answer_name)
        if len(items) != 2:
            raise AnswerFormatError(
                f"expected two parts [[part A], [part B]], got a list of {len(items)} items"
            )
        return as_int_array(items[0], "part A"), as_int_array(items[1], "part B")

    def solution_parts(
        self, solution: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        return solution

    def random_solution(
        self, instance: MinBisectionInstance, rng: np.random.Generator
    ) -> list[list[int]]:
        side = np.zeros(instance.n, np.int64)
        side[rng.permutation(instance.n)[: instance.n // 2]] = 1
        return solvers.parts(side)

    def greedy_solution(self, instance: MinBisectionInstance) -> list[list[int]]:
        side = solvers.greedy_growth(instance.weights, 0, (instance.n + 1) // 2)
        return solvers.parts(side)

    def baseline_solution(self, instance: MinBisectionInstance) -> list[list[int]]:
        """The first balanced split: ``[[0, ..., h-1], [h, ..., n-1]]`` with ``h = ceil(n/2)``."""
        half = (instance.n + 1) // 2
        return [list(range(half)), list(range(half, instance.n))]

    def solve(self, instance: MinBisectionInstance, *, exact: bool, time_limit: float) -> Reference:
        """Multi-start Kernighan-Lin, then (exact) the branch and bound for the witness and the
        triangle bound's certificate for the proof. METIS's refined bisection
        replaces the cut only where it is strictly smaller and nothing is proven yet, so a
        reference the branch and bound proves is the one it always was; the heuristic reference
        asks METIS from :data:`~npgym.heuristics.min_bisection.METIS_MIN_VERTICES` vertices on.
        From :data:`~npgym.heuristics.min_bisection.BOUND_FIRST_VERTICES` vertices on (past every
        published tier) the exact reference is the METIS and Kernighan-Lin cut, proven or bounded
        by the triangle bound (:mod:`npgym.heuristics.bisection_bound`)."""
        if exact and instance.n >= solvers.BOUND_FIRST_VERTICES:
            certified, source = solvers.certified_bisection(instance.weights, time_limit)
            return Reference.from_result(certified, solvers.parts(certified.witness), source)
        side, cut = solvers.heuristic_bisection(instance.weights)
        if not exact:
            source = solvers.KERNIGHAN_LIN
            if instance.n >= solvers.METIS_MIN_VERTICES:
                side, cut, source = solvers.with_metis(instance.weights, side, cut, source)
            return Reference(
                objective=cut,
                solution=solvers.parts(side),
                proven_optimal=False,
                method="heuristic",
                solver=source,
            )
        result = solvers.branch_and_bound(
            instance.weights, side, solvers.node_budget(instance.n, time_limit), time_limit
        )
        search = "branch-and-bound (capacity-aware placement bound)"
        if result.proven_optimal:
            return Reference.from_result(result, solvers.parts(result.witness), search)
        side, cut, source = solvers.with_metis(
            instance.weights, result.witness, result.objective, search
        )
        if source == solvers.METIS_REFINED:
            source += f"; bound: {search}"
        improved = SolverResult(
            side,
            cut,
            min(result.bound, cut),
            result.work,
            result.stopped,
            certificate=result.certificate,
        )
        return Reference.from_result(improved, solvers.parts(side), source)
