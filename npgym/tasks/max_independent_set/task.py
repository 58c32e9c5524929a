"""The MaxIndependentSet task: tie the generator, prompt, verifier and reference solvers
together."""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from npgym.heuristics.cliques import greedy_clique, is_clique
from npgym.results import Reference
from npgym.task import KernelTask
from npgym.tasks.max_clique.task import clique_reference, random_vertex_set
from npgym.tasks.max_independent_set import generator, prompt
from npgym.tasks.max_independent_set.instance import MaxIndependentSetInstance
from npgym.tasks.max_independent_set.verifier import (
    check_vertex_set,
    check_vertex_set_python,
    reason,
    scan_check_vertex_set,
)


class MaxIndependentSetTask(
    KernelTask[MaxIndependentSetInstance, generator.MaxIndependentSetConfig]
):
    """Maximum independent set: find a largest set of vertices no two of which are adjacent.

    Answer: a list of distinct vertex ids in any order, e.g. ``[0, 2, 5]``; the objective is its
    length. The empty list is a (trivial) independent set of size 0: feasible, with ratio 0.
    Generator: a planted independent set plus random edges at the tier's density (see
    :mod:`npgym.tasks.max_independent_set.generator`). Reference: a maximum clique of the
    complement graph, by the MaxClique solvers (greedy + local search, then branch and bound);
    the planted set is not the reference. Above the benchmark tier the instance carries a planted
    clique cover; once checked against the graph (:func:`cover_certificate`) it proves the planted
    set maximum (method ``planted``) without a search. The witness is sorted.
    """

    name = "MaxIndependentSet"
    category = "graph clustering"
    sense = "max"
    objective_name = "independent set size"
    instance_type = MaxIndependentSetInstance
    tiers: ClassVar[dict[str, generator.MaxIndependentSetConfig]] = generator.TIERS
    episode = "npgym.tasks.max_independent_set.structured:MaxIndependentSetEpisode"
    vector = "npgym.tasks.max_independent_set.vector:MaxIndependentSetBatch"
    drawer = "npgym.tasks.max_independent_set.render:draw"
    variant_maker = "npgym.tasks.max_independent_set.variants:make_variant"
    inverse = "npgym.tasks.max_independent_set.inverse:INVERSE"

    build = staticmethod(generator.build)
    prompt = staticmethod(prompt.render)
    kernel = staticmethod(check_vertex_set)
    fused_kernel = staticmethod(scan_check_vertex_set)
    reason = staticmethod(reason)
    twin = staticmethod(check_vertex_set_python)
    answer_name = "vertex list"
    adjacent = False
    """The rule of the kernel and the reason: listed vertices pairwise non-adjacent."""

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
        certificate = cover_certificate(instance)
        if certificate is not None and certificate.planted is not None:
            size = len(certificate.planted)
            return Reference(
                objective=size,
                solution=certificate.planted,
                proven_optimal=True,
                method="planted",
                solver=PLANTED_SOLVER,
                bound=size,
                gap=0.0,
                certificate=planted_cover_certificate(instance),
            )
        reference = on_graph(
            clique_reference(instance.complement_adjacency, exact=exact, time_limit=time_limit)
        )
        if certificate is None or reference.proven_optimal:
            return reference
        if reference.bound is not None and reference.bound <= certificate.bound:
            return reference
        return Reference.bounded(
            int(reference.objective or 0),
            reference.solution,
            certificate.bound,
            f"{reference.solver} + planted clique cover bound",
            method="planted",
            certificate=planted_cover_certificate(instance),
        )


PLANTED_SOLVER = "planted clique cover (checked)"


def on_graph(reference: Reference) -> Reference:
    """A reference of the complement graph's clique, its certificate in this task's terms
    (:mod:`npgym.certificates.max_independent_set`): a colouring of the complement is a clique
    cover of the graph; a search tree is the same on the complement."""
    certificate = reference.certificate
    if certificate is None or certificate.get("kind") != "coloring":
        return reference
    cover = {"kind": "clique_cover", "cliques": certificate["classes"]}
    return reference.model_copy(update={"certificate": cover})


def planted_cover_certificate(instance: MaxIndependentSetInstance) -> dict[str, Any]:
    """The instance's planted cover as a ``clique_cover`` certificate (once
    :func:`cover_certificate` has checked it)."""
    assert instance.planted_cover is not None  # the caller checked the cover
    return {"kind": "clique_cover", "cliques": [list(group) for group in instance.planted_cover]}


class CoverCertificate(NamedTuple):
    """What a checked ``planted_cover`` proves: ``bound``, its number of cliques, is at least
    the independence number; ``planted``, the groups' first vertices (sorted), is an independent
    set of that size when they are pairwise non-adjacent, else ``None``."""

    bound: int
    planted: list[int] | None


def cover_certificate(instance: MaxIndependentSetInstance) -> CoverCertificate | None:
    """Check the instance's ``planted_cover`` against its graph; ``None`` when it is absent or
    fails (a group that is empty or not a clique, a vertex out of range, missing or repeated).

    Every group a clique of the graph and every vertex in exactly one group: an independent set
    then holds at most one vertex per group, so the group count bounds the optimum.
    """
    cover = instance.planted_cover
    if cover is None:
        return None
    seen = np.zeros(instance.n, np.bool_)
    adjacency = instance.adjacency
    for group in cover:
        if not group or not is_clique(adjacency, group):
            return None
        members = np.array(group, dtype=np.int64)
        if seen[members].any():
            return None
        seen[members] = True
    if not seen.all():
        return None
    leaders = np.array([group[0] for group in cover], dtype=np.int64)
    independent = not adjacency[np.ix_(leaders, leaders)].any()
    return CoverCertificate(len(cover), sorted(leaders.tolist()) if independent else None)
