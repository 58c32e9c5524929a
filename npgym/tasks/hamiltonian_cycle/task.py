"""The HamiltonianCycle task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np

from npgym.heuristics import hamiltonian_cycle as solvers
from npgym.results import Reference
from npgym.task import KernelTask
from npgym.tasks.hamiltonian_cycle import generator, prompt
from npgym.tasks.hamiltonian_cycle.instance import HamiltonianCycleInstance
from npgym.tasks.hamiltonian_cycle.verifier import (
    check_cycle,
    check_cycle_python,
    reason,
    scan_check_cycle,
)


class HamiltonianCycleTask(KernelTask[HamiltonianCycleInstance, generator.HamiltonianCycleConfig]):
    """Longest cycle: find a simple cycle through as many vertices as possible (n if Hamiltonian).

    Answer: ``[v0, v1, ..., v0]``, the closing vertex required, any start and direction, at least
    3 distinct vertices. Objective: the number of distinct vertices. Instances are Hamiltonian
    (planted cycle) with probability ``hamiltonian_share`` (0.75 in every tier); the others are
    built so that no Hamiltonian cycle exists (revision 2: a separator with one component too
    many; revision 1: a cut vertex, or an independent set of more than half the vertices), see
    :mod:`~npgym.tasks.hamiltonian_cycle.generator`. The instance records which
    (``hamiltonian``, ``structure``, ``planted_cycle``, ``separator``); the prompt does not.

    Reference: a planted Hamiltonian cycle is optimal by definition (method ``planted``), and so
    is a planted cycle as long as the bound that the recorded ``separator`` gives (checked on the
    graph, :func:`~npgym.heuristics.hamiltonian_cycle.separator_bound`). Otherwise
    rotation-extension finds a long cycle; it is proven optimal when it fills the largest block
    (a cycle never leaves a block), and else a CP-SAT circuit model per block finds
    the longest cycle (one worker: deterministic). Without ``exact`` the planted proofs still come
    first (they cost a check, far less than the search), then only the heuristic runs.

    Every reference carries a certificate (:mod:`npgym.certificates.hamiltonian_cycle`): the
    trivial bound n, the recorded separator, or cuts down to the blocks with a separator per
    block (the recorded one, or the complement of a large independent set). CP-SAT's proof is
    not taken: where these fall short of its optimum the reference is unproven, with the
    certified bound (never on the published tiers or NP-Bench v1 and v2).
    """

    name = "HamiltonianCycle"
    category = "path planning"
    sense = "max"
    objective_name = "cycle length (vertices)"
    instance_type = HamiltonianCycleInstance
    tiers: ClassVar[dict[str, generator.HamiltonianCycleConfig]] = generator.TIERS
    episode = "npgym.tasks.hamiltonian_cycle.structured:HamiltonianCycleEpisode"
    vector = "npgym.tasks.hamiltonian_cycle.vector:HamiltonianCycleBatch"
    drawer = "npgym.tasks.hamiltonian_cycle.render:draw"
    variant_maker = "npgym.tasks.hamiltonian_cycle.variants:make_variant"
    inverse = "npgym.tasks.hamiltonian_cycle.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_cycle)
    fused_kernel = staticmethod(scan_check_cycle)
    reason = staticmethod(reason)
    twin = staticmethod(check_cycle_python)
    answer_name = "cycle"

    def random_solution(
        self, instance: HamiltonianCycleInstance, rng: np.random.Generator
    ) -> list[int]:
        order = rng.permutation(instance.n)[: int(rng.integers(3, instance.n + 1))].tolist()
        return [*order, order[0]]

    def greedy_solution(self, instance: HamiltonianCycleInstance) -> list[int]:
        return solvers.canonical_cycle(solvers.heuristic_cycle(instance.adjacency, effort=1))

    def baseline_solution(self, instance: HamiltonianCycleInstance) -> None:
        """``None``: even a short cycle has to be searched for, so no answer takes no thought (the
        ``"strict"`` reward measures from 0)."""
        return None

    def solve(
        self, instance: HamiltonianCycleInstance, *, exact: bool, time_limit: float
    ) -> Reference:
        planted = instance.planted_cycle
        if planted is not None and len(planted) - 1 == instance.n:
            return Reference(
                objective=instance.n,
                solution=list(planted),
                proven_optimal=True,
                method="planted",
                solver="planted Hamiltonian cycle",
                bound=instance.n,
                gap=0.0,
                certificate={"kind": "trivial"},
            )
        adjacency = instance.adjacency
        if planted is not None and instance.separator is not None:
            length = len(planted) - 1
            separator = np.array(instance.separator, dtype=np.int64)
            if solvers.separator_bound(adjacency, separator) == length:
                return Reference(
                    objective=length,
                    solution=list(planted),
                    proven_optimal=True,
                    method="planted",
                    solver="planted cycle + separator bound",
                    bound=length,
                    gap=0.0,
                    certificate={"kind": "separator", "separator": list(instance.separator)},
                )
        cycle = solvers.heuristic_cycle(adjacency)
        bound = solvers.cycle_bound(adjacency)
        solver = "rotation-extension + block bound"
        if cycle.size < bound and exact:
            result = solvers.exact_cycle(adjacency, time_limit, incumbent=cycle)
            separators = () if instance.separator is None else (np.array(instance.separator),)
            certified, certificate = solvers.certify_cycle(adjacency, result.objective, separators)
            result = replace(result, bound=certified, certificate=certificate)
            return Reference.from_result(
                result, solvers.canonical_cycle(result.witness), solver + " + CP-SAT circuit"
            )
        bound, certificate = solvers.certify_cycle(adjacency, int(cycle.size), search=False)
        return Reference.bounded(
            int(cycle.size),
            solvers.canonical_cycle(cycle),
            bound,
            solver,
            certificate=certificate,
        )
