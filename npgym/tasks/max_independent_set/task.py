"""The MaxIndependentSet task: tie the generator, prompt, verifier and reference solvers
together."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from npgym.answer import as_int_array
from npgym.heuristics.cliques import greedy_clique
from npgym.results import Reference, Verdict
from npgym.task import Task
from npgym.tasks.max_clique import prompt
from npgym.tasks.max_clique.task import clique_reference, random_vertex_set
from npgym.tasks.max_independent_set import generator
from npgym.tasks.max_independent_set.instance import MaxIndependentSetInstance
from npgym.tasks.max_independent_set.verifier import (
    OK,
    check_vertex_set,
    check_vertex_set_python,
    reason,
)


class MaxIndependentSetTask(Task[MaxIndependentSetInstance, generator.MaxIndependentSetConfig]):
    """Maximum independent set: find a largest set of vertices no two of which are adjacent.

    Answer: a list of distinct vertex ids in any order, e.g. ``[0, 2, 5]``; the objective is its
    length. The empty list is a (trivial) independent set of size 0: feasible, with ratio 0.
    Generator: a planted independent set plus random edges at the tier's density (see
    :mod:`npgym.tasks.max_independent_set.generator`). Reference: a maximum clique of the
    complement graph, by the MaxClique solvers (greedy + local search, then branch and bound);
    the planted set is not the reference. The witness is sorted.
    """

    name = "MaxIndependentSet"
    category = "graph clustering"
    sense = "max"
    objective_name = "independent set size"
    instance_type = MaxIndependentSetInstance
    tiers: ClassVar[dict[str, generator.MaxIndependentSetConfig]] = generator.TIERS

    def build(
        self, rng: np.random.Generator, config: generator.MaxIndependentSetConfig
    ) -> dict[str, Any]:
        return generator.build(rng, config)

    def prompt(self, instance: MaxIndependentSetInstance) -> str:
        return prompt.render(
            instance,
            "Maximum Independent Set Problem",
            "independent set",
            "no two vertices are joined by an edge",
        )

    def to_solution(self, value: Any) -> np.ndarray:
        return as_int_array(value, "vertex list")

    def check(self, instance: MaxIndependentSetInstance, solution: np.ndarray) -> Verdict:
        code, a, b, size = check_vertex_set(instance.adjacency, solution, False)
        if code != OK:
            return Verdict(False, None, reason(code, a, b, instance.n))
        return Verdict(True, int(size))

    def check_python(self, instance: MaxIndependentSetInstance, solution: np.ndarray) -> Verdict:
        adjacency = instance.adjacency.tolist()
        code, a, b, size = check_vertex_set_python(adjacency, solution.tolist(), False)
        if code != OK:
            return Verdict(False, None, reason(code, a, b, instance.n))
        return Verdict(True, size)

    def random_solution(
        self, instance: MaxIndependentSetInstance, rng: np.random.Generator
    ) -> list[int]:
        return random_vertex_set(instance.n, rng)

    def greedy_solution(self, instance: MaxIndependentSetInstance) -> list[int]:
        return greedy_clique(instance.complement_adjacency).tolist()

    def baseline_solution(self, instance: MaxIndependentSetInstance) -> list[int]:
        """One vertex, ``[0]``: an independent set of size 1 on any graph."""
        return [0]

    def solve(
        self, instance: MaxIndependentSetInstance, *, exact: bool, time_limit: float
    ) -> Reference:
        return clique_reference(instance.complement_adjacency, exact=exact, time_limit=time_limit)
