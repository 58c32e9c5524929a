"""The TSP task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from npgym.heuristics import tsp as solvers
from npgym.results import Reference
from npgym.task import KernelTask
from npgym.tasks.tsp import generator, prompt
from npgym.tasks.tsp.instance import TSPInstance
from npgym.tasks.tsp.verifier import check_tour, check_tour_python, reason, scan_check_tour


class TSPTask(KernelTask[TSPInstance, generator.TSPConfig]):
    """Symmetric TSP: find the shortest closed tour through all cities.

    Answer: ``[c0, c1, ..., c0]``, the closing city required, any start. Reference: a tour (up to
    :data:`~npgym.heuristics.tsp.PUBLISHED_MAX_CITIES` cities the best of multi-start nearest
    neighbour + 2-opt/Or-opt, as NP-Bench was built; above, iterated 2-opt + Or-opt), then branch
    and cut to prove it optimal or improve it; Held-Karp agrees on small instances (tests). The
    proof is npgym's own ``subtour-dual`` certificate (subtour-LP duals, with a branching tree on
    the certified LP where they fall short), which :mod:`npgym.certificates.tsp` checks.
    """

    name = "TSP"
    category = "path planning"
    sense = "min"
    objective_name = "tour length"
    instance_type = TSPInstance
    tiers: ClassVar[dict[str, generator.TSPConfig]] = generator.TIERS
    episode = "npgym.tasks.tsp.structured:TSPEpisode"
    vector = "npgym.tasks.tsp.vector:TSPBatch"
    drawer = "npgym.tasks.tsp.render:draw"
    variant_maker = "npgym.tasks.tsp.variants:make_variant"
    inverse = "npgym.tasks.tsp.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_tour)
    fused_kernel = staticmethod(scan_check_tour)
    reason = staticmethod(reason)
    twin = staticmethod(check_tour_python)
    answer_name = "tour"

    def random_solution(self, instance: TSPInstance, rng: np.random.Generator) -> list[int]:
        tour = rng.permutation(instance.n).tolist()
        return [*tour, tour[0]]

    def greedy_solution(self, instance: TSPInstance) -> list[int]:
        return solvers.canonical_tour(solvers.nearest_neighbour(instance.matrix, 0))

    def baseline_solution(self, instance: TSPInstance) -> list[int]:
        """The identity tour, ``[0, 1, ..., n-1, 0]``."""
        return [*range(instance.n), 0]

    def solve(self, instance: TSPInstance, *, exact: bool, time_limit: float) -> Reference:
        if instance.n <= solvers.PUBLISHED_MAX_CITIES:
            tour, length = solvers.heuristic_tour(instance.matrix, effort=time_limit)
            solver = "nearest-neighbour+2-opt+or-opt"
        else:
            start = solvers.nearest_neighbour(instance.matrix, 0)
            tour, _ = solvers.improved_tour(instance.matrix, start, effort=time_limit)
            length = int(solvers.tour_length(instance.matrix, tour))  # never a solver's word
            solver = solvers.ILS_SOLVER
        if not exact:
            return Reference(
                objective=length,
                solution=solvers.canonical_tour(tour),
                proven_optimal=False,
                method="heuristic",
                solver=solver,
            )
        result = solvers.branch_and_cut(instance.matrix, time_limit, incumbent=tour)
        return Reference.from_result(result, solvers.canonical_tour(result.witness), result.solver)
