"""MaxCut as an npgym plug-in task: a complete task in a package of its own.

Split the vertices of a graph into two sides so that as many edges as possible cross between
them. The answer is the list of vertices on one side (``[]`` is feasible and cuts nothing). The
graphs are small, so the exact reference is brute force over every split.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numba
import numpy as np
from pydantic import Field

from npgym import Reference
from npgym.config import GeneratorConfig
from npgym.graphs import GraphInstance, adjacency_lines, random_edges
from npgym.task import KernelTask

MAX_BRUTE_FORCE_VERTICES = 24
"""Largest graph the brute-force reference accepts (2**23 splits)."""

OK, OUT_OF_RANGE, REPEATED = 0, 1, 2
"""Verifier result codes."""


class MaxCutInstance(GraphInstance):
    """A graph with vertices ``0..n-1`` and undirected ``edges`` (validated by npgym)."""

    task: Literal["MaxCut"] = "MaxCut"


class MaxCutConfig(GeneratorConfig):
    """How graphs are drawn: a vertex count in ``n_min..n_max`` and G(n, p) edges."""

    n_min: int = Field(ge=2, le=MAX_BRUTE_FORCE_VERTICES)
    n_max: int = Field(ge=2, le=MAX_BRUTE_FORCE_VERTICES)
    density: float = Field(ge=0.0, le=1.0)


TIERS: dict[str, MaxCutConfig] = {
    "easy": MaxCutConfig(n_min=5, n_max=7, density=0.5),
    "medium": MaxCutConfig(n_min=8, n_max=10, density=0.5),
    "hard": MaxCutConfig(n_min=11, n_max=13, density=0.45),
    "benchmark": MaxCutConfig(n_min=14, n_max=16, density=0.4),
}


@numba.njit(cache=False)
def check_cut(n: int, edge_array: np.ndarray, side: np.ndarray) -> tuple[int, int, int]:
    """``(code, detail, cut)``: the first bad vertex (out of range, or listed twice), else the
    number of edges with exactly one end in ``side``."""
    inside = np.zeros(n, dtype=np.bool_)
    for vertex in side:
        if vertex < 0 or vertex >= n:
            return OUT_OF_RANGE, vertex, 0
        if inside[vertex]:
            return REPEATED, vertex, 0
        inside[vertex] = True
    cut = 0
    for index in range(edge_array.shape[0]):
        if inside[edge_array[index, 0]] != inside[edge_array[index, 1]]:
            cut += 1
    return OK, 0, cut


def check_cut_python(n: int, edges: list[list[int]], side: list[int]) -> tuple[int, int, int]:
    """Pure-Python twin of :func:`check_cut`, on lists."""
    seen: set[int] = set()
    for vertex in side:
        if not 0 <= vertex < n:
            return OUT_OF_RANGE, vertex, 0
        if vertex in seen:
            return REPEATED, vertex, 0
        seen.add(vertex)
    return OK, 0, sum((u in seen) != (v in seen) for u, v in edges)


def reason(code: int, vertex: int, n: int) -> str:
    """Explain a failed check."""
    if code == OUT_OF_RANGE:
        return f"vertex {vertex} does not exist (vertices are 0 to {n - 1})"
    return f"vertex {vertex} listed twice"


@numba.njit(cache=False)
def brute_force_cut(n: int, edges: np.ndarray) -> tuple[int, int]:
    """The best split as ``(mask, cut)``; vertex ``n-1`` stays outside (a split and its mirror
    cut the same edges)."""
    best_mask, best_cut = 0, 0
    for mask in range(1 << (n - 1)):
        cut = 0
        for index in range(edges.shape[0]):
            cut += ((mask >> edges[index, 0]) ^ (mask >> edges[index, 1])) & 1
        if cut > best_cut:
            best_mask, best_cut = mask, cut
    return best_mask, best_cut


def local_search_side(n: int, edges: tuple[tuple[int, int], ...]) -> list[int]:
    """Greedy: move single vertices across while that cuts more edges (at most n passes)."""
    inside = [False] * n
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        neighbours[u].append(v)
        neighbours[v].append(u)
    for _ in range(n):
        improved = False
        for vertex in range(n):
            same = sum(inside[other] == inside[vertex] for other in neighbours[vertex])
            if 2 * same > len(neighbours[vertex]):
                inside[vertex] = not inside[vertex]
                improved = True
        if not improved:
            break
    return [vertex for vertex in range(n) if inside[vertex]]


class MaxCutTask(KernelTask[MaxCutInstance, MaxCutConfig]):
    """MaxCut: the split of the vertices into two sides that cuts the most edges.

    A ``KernelTask``: its verifier is declared as data. ``check_cut``'s parameters before the
    answer (``n``, ``edge_array``) are filled by name from the instance, and so is ``reason``'s
    after the result's details (``n``); ``check``, ``check_python``, the verdicts and the
    answer's shape (a list of ints, called ``answer_name`` in format errors) come from
    ``KernelTask``.
    """

    name = "MaxCut"
    category = "graph partitioning"
    sense = "max"
    objective_name = "cut size"
    instance_type = MaxCutInstance
    tiers: ClassVar[dict[str, MaxCutConfig]] = TIERS
    # Optional capabilities (npgym.capabilities): structured mode and pictures; no variants.
    episode = "npgym_maxcut.structured:MaxCutEpisode"
    drawer = "npgym_maxcut.render:draw"

    kernel = staticmethod(check_cut)
    twin = staticmethod(check_cut_python)
    reason = staticmethod(reason)
    answer_name = "vertex list"

    def build(self, rng: np.random.Generator, config: MaxCutConfig) -> dict[str, Any]:
        n = int(rng.integers(config.n_min, config.n_max + 1))
        return {"n": n, "edges": random_edges(rng, n, config.density)}

    def prompt(self, instance: MaxCutInstance) -> str:
        n, m = instance.n, len(instance.edges)
        return "\n".join(
            [
                "Maximum cut.",
                "",
                f"An undirected graph has {n} vertices, numbered 0 to {n - 1}, and {m} edges. "
                "Each line below lists a vertex followed by its neighbours.",
                "",
                "Adjacency lists:",
                *adjacency_lines(instance.neighbours()),
                "",
                "Split the vertices into two sides so that as many edges as possible join "
                "vertices on different sides.",
                "",
                "Answer format: the vertices of one side as a list of distinct vertex numbers "
                "in square brackets, for example [0, 2, 5] (this example only shows the format).",
                "",
                "Think step by step, then finish your response with the final answer on its own "
                "line in the form: Answer: [v1, v2, ...]",
            ]
        )

    def random_solution(self, instance: MaxCutInstance, rng: np.random.Generator) -> list[int]:
        return np.flatnonzero(rng.random(instance.n) < 0.5).tolist()

    def baseline_solution(self, instance: MaxCutInstance) -> list[int] | None:
        """The zero-effort answer: the first vertex with an edge alone on its side (``None`` for
        a graph without edges, where every cut is empty)."""
        return [min(instance.edges)[0]] if instance.edges else None

    def greedy_solution(self, instance: MaxCutInstance) -> list[int]:
        return local_search_side(instance.n, instance.edges)

    def solve(self, instance: MaxCutInstance, *, exact: bool, time_limit: float) -> Reference:
        if not exact:
            side = local_search_side(instance.n, instance.edges)
            cut = self.check(instance, np.array(side, dtype=np.int64)).objective
            bound = len(instance.edges)
            return Reference(
                objective=cut,
                solution=side,
                proven_optimal=cut == bound,
                method="exact" if cut == bound else "heuristic",
                solver="one-vertex local search",
                bound=bound,
                gap=(bound - cut) / cut if cut else float(bound > 0),
            )
        if instance.n > MAX_BRUTE_FORCE_VERTICES:
            raise ValueError(f"brute force takes at most {MAX_BRUTE_FORCE_VERTICES} vertices")
        mask, cut = brute_force_cut(instance.n, instance.edge_array)
        return Reference(
            objective=int(cut),
            solution=[vertex for vertex in range(instance.n) if (int(mask) >> vertex) & 1],
            proven_optimal=True,
            method="exact",
            solver="brute force over all splits",
            bound=int(cut),
            gap=0.0,
        )
