"""The MaxClique task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from npgym.heuristics import cliques as solvers
from npgym.results import Reference
from npgym.task import KernelTask
from npgym.tasks.max_clique import generator, prompt
from npgym.tasks.max_clique.instance import MaxCliqueInstance
from npgym.tasks.max_clique.verifier import (
    check_vertex_set,
    check_vertex_set_python,
    reason,
    scan_check_vertex_set,
)

HEURISTIC_SOLVER = "greedy + (1,2)-swap local search; greedy colouring bound"
EXACT_SOLVER = "branch and bound (MCQ, greedy colouring bounds)"


class MaxCliqueTask(KernelTask[MaxCliqueInstance, generator.MaxCliqueConfig]):
    """Maximum clique: find a largest set of pairwise adjacent vertices.

    Answer: a list of distinct vertex ids in any order, e.g. ``[0, 2, 5]``; the objective is its
    length. The empty list is a (trivial) clique of size 0: feasible, with ratio 0. Generator:
    a planted clique whose members' degrees do not stand out, a decoy with a clique one vertex
    smaller, and random edges at the tier's density (see
    :mod:`npgym.tasks.max_clique.generator`). Reference: the best of multi-start greedy + local
    search, then branch and bound proves it optimal or finds the optimum (the planted clique is
    not the reference: random edges can form a larger one). The witness is sorted.
    """

    name = "MaxClique"
    category = "graph clustering"
    sense = "max"
    objective_name = "clique size"
    instance_type = MaxCliqueInstance
    tiers: ClassVar[dict[str, generator.MaxCliqueConfig]] = generator.TIERS
    episode = "npgym.tasks.max_clique.structured:MaxCliqueEpisode"
    vector = "npgym.tasks.max_clique.vector:MaxCliqueBatch"
    drawer = "npgym.tasks.max_clique.render:draw"
    variant_maker = "npgym.tasks.max_clique.variants:make_variant"
    inverse = "npgym.tasks.max_clique.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_vertex_set)
    fused_kernel = staticmethod(scan_check_vertex_set)
    reason = staticmethod(reason)
    twin = staticmethod(check_vertex_set_python)
    answer_name = "vertex list"
    adjacent = True
    """The rule of the kernel and the reason: listed vertices pairwise adjacent."""

    def random_solution(self, instance: MaxCliqueInstance, rng: np.random.Generator) -> list[int]:
        return random_vertex_set(instance.n, rng)

    def greedy_solution(self, instance: MaxCliqueInstance) -> list[int]:
        return solvers.greedy_clique(instance.adjacency).tolist()

    def baseline_solution(self, instance: MaxCliqueInstance) -> list[int]:
        """One vertex, ``[0]``: a clique of size 1 on any graph."""
        return [0]

    def solve(self, instance: MaxCliqueInstance, *, exact: bool, time_limit: float) -> Reference:
        return clique_reference(instance.adjacency, exact=exact, time_limit=time_limit)


def random_vertex_set(n: int, rng: np.random.Generator) -> list[int]:
    """A random non-empty set of distinct vertices (the random baseline of both tasks)."""
    return sorted(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False).tolist())


def clique_reference(adjacency: np.ndarray, *, exact: bool, time_limit: float) -> Reference:
    """Reference maximum clique of ``adjacency`` (MaxIndependentSet passes the complement).

    Without ``exact``: the heuristic clique, proven optimal only when it reaches the greedy
    colouring bound. With it: branch and bound from the heuristic clique, within a node budget of
    ``time_limit`` nominal seconds (deterministic). Either way the bound carries its certificate
    (:mod:`npgym.certificates.max_clique`): the colouring, or the search tree.
    """
    clique = solvers.heuristic_clique(adjacency, effort=time_limit)
    if exact:
        result = solvers.exact_clique(adjacency, time_limit, incumbent=clique)
        return Reference.from_result(result, result.witness.tolist(), EXACT_SOLVER)
    classes = solvers.coloring_classes(adjacency)
    return Reference.bounded(
        int(clique.size),
        clique.tolist(),
        len(classes),
        HEURISTIC_SOLVER,
        certificate={"kind": "coloring", "classes": classes},
    )
