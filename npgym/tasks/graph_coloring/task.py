"""The graph colouring task: tie the generator, prompt, verifier and reference solvers together."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from npgym.heuristics import graph_coloring as solvers
from npgym.results import Reference
from npgym.task import KernelTask
from npgym.tasks.graph_coloring import generator, prompt
from npgym.tasks.graph_coloring.instance import GraphColoringInstance
from npgym.tasks.graph_coloring.verifier import (
    check_coloring,
    check_coloring_python,
    reason,
    scan_check_coloring,
)

HEURISTIC = "DSatur+Tabucol"
"""The solver name of the heuristic reference (``exact=False``) when no planted proof applies."""


class GraphColoringTask(KernelTask[GraphColoringInstance, generator.GraphColoringConfig]):
    """Graph colouring: colour the vertices so adjacent ones differ, with the fewest colours.

    Answer: ``[c0, c1, ..., c(n-1)]``, the colour of each vertex in vertex order. Colours are
    arbitrary integer labels (negative or huge ones too); the objective is the number of distinct
    labels. Generator: a balanced planted k-colouring plus random edges between its classes (see
    :mod:`~npgym.tasks.graph_coloring.generator`); the planted colouring is only an upper bound.
    Reference: the chromatic number, proven. A maximum clique (MCQ branch and bound) gives the
    lower bound, DSatur + Tabucol (and the planted colouring) the upper bound; when they differ an
    exact DSatur branch and bound, with the clique's colours fixed, closes the gap. Everything is
    deterministic (seeded tabu search, node budgets), and the witness is relabelled by first
    appearance (vertex 0 has colour 0, the next new colour is 1, ...). Brute force and CP-SAT agree
    with it (tests). Above the benchmark tier the instance carries a planted clique certificate
    (``planted_clique``) as large as the planted colouring: once the solver has checked that it is
    a clique, the two prove the chromatic number at once, with no search. Without ``exact`` that
    proof still comes first, and DSatur + Tabucol stop at the clique bound: never more work than
    the exact path (:func:`~npgym.heuristics.graph_coloring.quick_coloring`), and the heuristic
    reference states the clique bound. Every bound carries its certificate
    (:mod:`npgym.certificates.graph_coloring`): the clique, or the exact search's tree.
    """

    name = "GraphColoring"
    category = "graph clustering"
    sense = "min"
    objective_name = "number of colours"
    instance_type = GraphColoringInstance
    tiers: ClassVar[dict[str, generator.GraphColoringConfig]] = generator.TIERS
    episode = "npgym.tasks.graph_coloring.structured:GraphColoringEpisode"
    vector = "npgym.tasks.graph_coloring.vector:GraphColoringBatch"
    drawer = "npgym.tasks.graph_coloring.render:draw"
    variant_maker = "npgym.tasks.graph_coloring.variants:make_variant"
    inverse = "npgym.tasks.graph_coloring.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_coloring)
    fused_kernel = staticmethod(scan_check_coloring)
    reason = staticmethod(reason)
    twin = staticmethod(check_coloring_python)
    answer_name = "colouring"

    def random_solution(
        self, instance: GraphColoringInstance, rng: np.random.Generator
    ) -> list[int]:
        palette = int(rng.integers(1, instance.n + 1))
        return rng.integers(0, palette, size=instance.n).tolist()

    def greedy_solution(self, instance: GraphColoringInstance) -> list[int]:
        colors = solvers.dsatur(*solvers.neighbour_lists(instance.adjacency))
        return solvers.canonical_coloring(colors)

    def baseline_solution(self, instance: GraphColoringInstance) -> list[int]:
        """Every vertex its own colour, ``[0, 1, ..., n-1]``: proper on any graph."""
        return list(range(instance.n))

    def solve(
        self, instance: GraphColoringInstance, *, exact: bool, time_limit: float
    ) -> Reference:
        planted = instance.planted_colouring
        incumbent = None if planted is None else np.array(planted, dtype=np.int64)
        if not exact:
            quick = solvers.quick_coloring(instance.adjacency, incumbent, instance.planted_clique)
            return Reference.from_result(quick, quick.witness.tolist(), quick.solver or HEURISTIC)
        result = solvers.exact_coloring(
            instance.adjacency,
            time_limit,
            incumbent=incumbent,
            certificate=instance.planted_clique,
        )
        solver = result.solver or "max-clique bound + DSatur/Tabucol + DSatur branch and bound"
        return Reference.from_result(result, result.witness.tolist(), solver)
