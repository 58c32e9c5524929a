"""The TSP task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from npgym.answer import as_int_array
from npgym.heuristics import tsp as solvers
from npgym.results import Reference, Verdict
from npgym.task import Task
from npgym.tasks.tsp import generator, prompt
from npgym.tasks.tsp.instance import TSPInstance
from npgym.tasks.tsp.verifier import OK, check_tour, check_tour_python, reason, scan_check_tour


class TSPTask(Task[TSPInstance, generator.TSPConfig]):
    """Symmetric TSP: find the shortest closed tour through all cities.

    Answer: ``[c0, c1, ..., c0]``, the closing city required, any start. Reference: the best of
    multi-start nearest neighbour + 2-opt/Or-opt, then branch and cut (HiGHS) to prove it optimal
    or improve it; Held-Karp agrees with both on small instances (tests).
    """

    name = "TSP"
    category = "path planning"
    sense = "min"
    objective_name = "tour length"
    instance_type = TSPInstance
    tiers: ClassVar[dict[str, generator.TSPConfig]] = generator.TIERS
    episode = "npgym.tasks.tsp.structured:TSPEpisode"
    drawer = "npgym.tasks.tsp.render:draw"
    variant_maker = "npgym.tasks.tsp.variants:make_variant"

    def build(self, rng: np.random.Generator, config: generator.TSPConfig) -> dict[str, Any]:
        return generator.build(rng, config)

    def prompt(self, instance: TSPInstance) -> str:
        return prompt.render(instance)

    def to_solution(self, value: Any) -> np.ndarray:
        return as_int_array(value, "tour")

    def check(self, instance: TSPInstance, solution: np.ndarray) -> Verdict:
        return self.verdict(instance, check_tour(instance.matrix, solution))

    def check_answer(self, instance: TSPInstance, answer: bytes) -> tuple[int, ...]:
        return scan_check_tour(answer, instance.matrix)

    def verdict(self, instance: TSPInstance, result: tuple[int, ...]) -> Verdict:
        code, a, b, length = result
        if code != OK:
            return Verdict(False, None, reason(code, a, b, instance.n))
        return Verdict(True, int(length))

    def check_python(self, instance: TSPInstance, solution: np.ndarray) -> Verdict:
        distances = [list(row) for row in instance.distances]
        return self.verdict(instance, check_tour_python(distances, solution.tolist()))

    def random_solution(self, instance: TSPInstance, rng: np.random.Generator) -> list[int]:
        tour = rng.permutation(instance.n).tolist()
        return [*tour, tour[0]]

    def greedy_solution(self, instance: TSPInstance) -> list[int]:
        return solvers.canonical_tour(solvers.nearest_neighbour(instance.matrix, 0))

    def baseline_solution(self, instance: TSPInstance) -> list[int]:
        """The identity tour, ``[0, 1, ..., n-1, 0]``."""
        return [*range(instance.n), 0]

    def solve(self, instance: TSPInstance, *, exact: bool, time_limit: float) -> Reference:
        tour, length = solvers.heuristic_tour(instance.matrix, effort=time_limit)
        if not exact:
            return Reference(
                objective=length,
                solution=solvers.canonical_tour(tour),
                proven_optimal=False,
                method="heuristic",
                solver="nearest-neighbour+2-opt+or-opt",
            )
        result = solvers.branch_and_cut(instance.matrix, time_limit, incumbent=tour)
        return Reference.from_result(result, solvers.canonical_tour(result.witness), result.solver)
