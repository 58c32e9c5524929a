"""What the MaxClique and MaxIndependentSet checkers share: the graph, cliques and the two proofs
that no clique is larger than a bound (see :mod:`npgym.certificates.max_clique` for the format).

A graph is ``n`` and a list of adjacency bitsets (bit ``u`` of ``adjacency[v]`` set when ``u`` and
``v`` are adjacent), Python integers, so every test of a vertex against a set is one ``&``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from npgym.certificates import CertificateError, integer, integers

MAX_VERTICES = 5000
"""Most vertices of an instance (the tasks' own cap)."""
MAX_STEPS = 30_000_000
"""Most steps a ``search`` certificate may cost the checker (per tree entry its node's
candidates, per first-fit colouring the colours tried for each vertex): about 5 s at n = 150,
measured; at least ``MAX_VERTICES * (MAX_VERTICES + 1)``, so a one-leaf tree always checks."""
LEAF = -1
"""The tree entry of a leaf; an entry >= 0 branches on that vertex."""


def graph(instance: Mapping[str, Any]) -> tuple[int, list[int]]:
    """The instance's ``n`` and adjacency bitsets, validated (``n`` in 1..MAX_VERTICES, each
    edge two distinct vertices in range)."""
    n = integer(instance["n"], "n")
    if not 1 <= n <= MAX_VERTICES:
        raise CertificateError(f"n must be in 1..{MAX_VERTICES}, got {n}")
    edges = instance["edges"]
    if not isinstance(edges, list):
        raise CertificateError("edges must be a list of vertex pairs")
    if not all(type(edge) is list and len(edge) == 2 for edge in edges):
        raise CertificateError("each edge must be a pair [u, v]")
    ends = [vertex for edge in edges for vertex in edge]
    if ends and (
        {type(vertex) for vertex in ends} != {int}
        or not 0 <= min(ends) <= max(ends) < n
        or any(u == v for u, v in edges)
    ):
        raise CertificateError("each edge must join two distinct vertices 0..n-1")
    adjacency = [0] * n
    for u, v in edges:
        adjacency[u] |= 1 << v
        adjacency[v] |= 1 << u
    return n, adjacency


def complement(n: int, adjacency: list[int]) -> list[int]:
    """The complement graph's adjacency bitsets (no self-loops)."""
    every = (1 << n) - 1
    return [every & ~(row | 1 << v) for v, row in enumerate(adjacency)]


def clique_size(n: int, adjacency: list[int], solution: Any, what: str) -> int:
    """The size of ``solution``, a list of distinct vertices pairwise adjacent (a ``what``)."""
    vertices = _vertex_list(n, solution, "the solution")
    members = _mask(vertices)
    for v in vertices:
        if members & ~adjacency[v] & ~(1 << v):
            raise CertificateError(f"the solution is not {what}: vertex {v} misses a member")
    return len(vertices)


def partition_bound(n: int, adjacency: list[int], classes: Any) -> int:
    """The number of ``classes``: vertex lists, each independent, together every vertex once
    (a proper colouring: a clique meets each class at most once)."""
    if not isinstance(classes, list):
        raise CertificateError("the classes must be a list of vertex lists")
    seen = 0
    for index, group in enumerate(classes):
        vertices = _vertex_list(n, group, f"class {index}")
        members = _mask(vertices)
        if not vertices or seen & members:
            raise CertificateError(f"class {index} is empty or repeats a vertex")
        if any(adjacency[v] & members for v in vertices):
            raise CertificateError(f"class {index} holds two adjacent vertices")
        seen |= members
    if seen != (1 << n) - 1:
        raise CertificateError("the classes miss a vertex")
    return len(classes)


def search_bound(n: int, adjacency: list[int], certificate: Mapping[str, Any]) -> int:
    """The ``bound`` of a ``search`` certificate once its tree is checked to close every leaf
    (pre-order walk with an explicit stack of the open branchings)."""
    bound = integer(certificate["bound"], "the bound")
    order = _vertex_list(n, certificate["order"], "the order")
    tree = integers(certificate["tree"], "the tree")
    if not 0 <= bound <= n or len(order) != n:
        raise CertificateError("the bound must be in 0..n and the order list every vertex")
    # the current node: its candidates, their colours and the size of its clique
    candidates, colours, steps = _first_fit(adjacency, order)
    chosen = 0
    pending: list[tuple[list[int], list[int], int]] = []  # nodes whose leave-out child is next
    for position, entry in enumerate(tree):
        steps += len(candidates)
        if steps > MAX_STEPS:
            raise CertificateError(f"the tree costs more than {MAX_STEPS} steps to check")
        if entry == LEAF:
            if chosen + len(set(colours)) > bound:
                raise CertificateError(f"leaf {position} does not close under the bound")
            if not pending:
                if position != len(tree) - 1:
                    raise CertificateError(f"the tree ends at entry {position}, before the list")
                return bound
            candidates, colours, chosen = pending.pop()
            continue
        if entry not in candidates or chosen >= bound:
            raise CertificateError(
                f"entry {position} ({entry}) is not a leaf nor a candidate to branch on "
                "below the bound"
            )
        index = candidates.index(entry)
        row = adjacency[entry]
        taken = [v for v in candidates if row >> v & 1]
        pending.append(
            (
                candidates[:index] + candidates[index + 1 :],
                colours[:index] + colours[index + 1 :],
                chosen,
            )
        )
        candidates, colours, cost = _first_fit(adjacency, taken, by_colour=True)
        chosen, steps = chosen + 1, steps + cost
    raise CertificateError("the tree is incomplete")


def _vertex_list(n: int, value: Any, what: str) -> list[int]:
    """``value`` as a list of distinct vertices of the graph."""
    vertices = integers(value, what)
    if len(set(vertices)) != len(vertices) or not all(0 <= v < n for v in vertices):
        raise CertificateError(f"{what} must list distinct vertices 0..{n - 1}")
    return vertices


def _mask(vertices: list[int]) -> int:
    """The bitset of ``vertices``."""
    mask = 0
    for v in vertices:
        mask |= 1 << v
    return mask


def _first_fit(
    adjacency: list[int], vertices: list[int], by_colour: bool = False
) -> tuple[list[int], list[int], int]:
    """``vertices`` coloured first-fit in their order (each takes the first colour, 1, 2, ...,
    that none of its earlier neighbours has), listed in that order or (``by_colour``) colour by
    colour, each colour in that order; their colours, in the same order; the steps taken."""
    masks: list[int] = []
    classes: list[list[int]] = []
    colours: list[int] = []
    steps = 0
    for v in vertices:
        row, index = adjacency[v], 0
        while index < len(masks) and row & masks[index]:
            index += 1
        if index == len(masks):
            masks.append(0)
            classes.append([])
        masks[index] |= 1 << v
        classes[index].append(v)
        colours.append(index + 1)
        steps += index + 1
    if not by_colour:
        return vertices, colours, steps
    return (
        [v for group in classes for v in group],
        [index + 1 for index, group in enumerate(classes) for _ in group],
        steps,
    )
