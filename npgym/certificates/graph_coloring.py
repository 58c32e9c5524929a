"""GraphColoring certificates: a lower bound on the chromatic number.

The instance is its JSON object: ``n`` (an integer in 1..5000) and ``edges`` (pairs ``[u, v]``
of distinct vertices ``0..n-1``; the graph is undirected). The witness is a list of ``n``
integers, the colour of each vertex (any integer labels); it must give the two ends of every
edge different colours, and its objective is the number of distinct labels. A certificate is
one of:

- ``{"kind": "clique", "clique": [v, ...]}``: distinct vertices, pairwise adjacent. They need
  as many colours, so the bound is the clique's length.
- ``{"kind": "search", "bound": k, "clique": [v, ...], "tree": [t, ...]}``: a search tree that
  proves no proper colouring uses only the ``k - 1`` colours ``0..k-2`` (``1 <= k <= n``;
  ``clique`` as above, with at most ``k - 1`` vertices, possibly none). A node of the tree is a
  partial colouring whose colours are exactly ``0..used-1``. The root gives ``clique[i]`` colour
  ``i`` (any colouring can be relabelled so), and ``used`` is the clique's length. The tree is
  flattened in pre-order, one integer per node: the vertex ``v``, uncoloured at that node, that
  it branches on. Its children follow, in increasing order of colour: one for each colour ``c``
  with ``0 <= c <= min(used, k - 2)`` that no neighbour of ``v`` has at the node, giving ``v``
  colour ``c`` (``used`` grows by one when ``c == used``). A vertex may take a new colour only
  as ``used``: the unused colours are interchangeable, so one of them stands for all. A node
  whose vertex has no such colour is a leaf. Every colouring with ``k - 1`` colours that extends
  a node (relabelled on its unused colours) extends one of its children, and no leaf has one, so
  a complete tree proves the chromatic number at least ``k``. The list holds exactly the tree.
  The exact DSatur branch and bound (most saturated vertex first) gives such trees.

Cost: a ``clique`` is quadratic in its length; a ``search`` is refused past :data:`MAX_STEPS`
steps, a node costing one step per colour it may give its vertex (``min(used + 1, k - 1)``),
each step one ``&`` of n-bit integers: at most about 10 s (0.3 to 1.2 microseconds a step, the
walk included, measured at n = 45 to 70 on a busy machine).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from npgym.certificates import CertificateError, integer, integers
from npgym.certificates._cliques import graph

SENSE: Literal["min", "max"] = "min"
MAX_STEPS = 10_000_000
"""Most steps (a colour tried for a branching vertex) that a ``search`` certificate may cost."""


def check_pair(
    instance: Mapping[str, Any], solution: Any, certificate: Mapping[str, Any]
) -> tuple[int, int]:
    """:func:`objective` and :func:`bound` together, reading the graph once."""
    n, adjacency = graph(instance)
    return _objective(n, instance["edges"], solution), _bound(n, adjacency, certificate)


def objective(instance: Mapping[str, Any], solution: Any) -> int:
    """The number of distinct colours of ``solution``, a proper colouring of the graph."""
    n, _ = graph(instance)
    return _objective(n, instance["edges"], solution)


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
    """The lower bound on the chromatic number that ``certificate`` proves."""
    return _bound(*graph(instance), certificate)


def _objective(n: int, edges: list[list[int]], solution: Any) -> int:
    """:func:`objective` on the graph's ``n`` and its ``edges``, already validated."""
    colours = integers(solution, "the colouring")
    if len(colours) != n:
        raise CertificateError(f"the colouring has {len(colours)} entries, expected {n}")
    for u, v in edges:
        if colours[u] == colours[v]:
            raise CertificateError(f"adjacent vertices {u} and {v} share colour {colours[u]}")
    return len(set(colours))


def _bound(n: int, adjacency: list[int], certificate: Mapping[str, Any]) -> int:
    """:func:`bound` on the graph's ``n`` and adjacency bitsets."""
    kind = certificate.get("kind")
    if kind == "clique" and set(certificate) == {"kind", "clique"}:
        return len(_clique(n, adjacency, certificate["clique"]))
    if kind == "search" and set(certificate) == {"kind", "bound", "clique", "tree"}:
        return _search_bound(n, adjacency, certificate)
    raise CertificateError(f"unknown certificate kind {kind!r:.40} or unexpected fields")


def _clique(n: int, adjacency: list[int], value: Any) -> list[int]:
    """``value`` as a list of distinct vertices, pairwise adjacent."""
    vertices = integers(value, "the clique")
    if not all(0 <= v < n for v in vertices) or len(set(vertices)) != len(vertices):
        raise CertificateError(f"the clique must list distinct vertices 0..{n - 1}")
    for index, v in enumerate(vertices):
        if any(not adjacency[v] >> u & 1 for u in vertices[:index]):
            raise CertificateError(f"the clique's vertex {v} misses an earlier one")
    return vertices


def _search_bound(n: int, adjacency: list[int], certificate: Mapping[str, Any]) -> int:
    """The ``bound`` of a ``search`` certificate once its tree is checked to be complete (a
    pre-order walk with an explicit stack of the open nodes)."""
    k = integer(certificate["bound"], "the bound")
    clique = _clique(n, adjacency, certificate["clique"])
    tree = integers(certificate["tree"], "the tree")
    if not 1 <= k <= n or len(clique) > k - 1:
        raise CertificateError("the bound must be in 1..n, above the clique's length")
    classes = [1 << v for v in clique] + [0] * (k - 1 - len(clique))  # the vertices of each colour
    coloured, used, steps = sum(classes), len(clique), 0
    stack: list[tuple[int, list[int], int, int]] = []  # (vertex, colours, child now, used before)
    for position, v in enumerate(tree):
        if not 0 <= v < n or coloured >> v & 1:
            raise CertificateError(f"entry {position} ({v}) is not an uncoloured vertex")
        steps += min(used + 1, k - 1)
        if steps > MAX_STEPS:
            raise CertificateError(f"the tree costs more than {MAX_STEPS} steps to check")
        row = adjacency[v]
        stack.append(
            (v, [c for c in range(min(used + 1, k - 1)) if not classes[c] & row], -1, used)
        )
        while stack:  # on to the next child: of this node, or of the nearest open ancestor
            u, colours, child, used = stack.pop()
            if child >= 0:
                classes[colours[child]] ^= 1 << u
                coloured ^= 1 << u
            if child + 1 < len(colours):
                colour = colours[child + 1]
                classes[colour] |= 1 << u
                coloured |= 1 << u
                stack.append((u, colours, child + 1, used))
                used = max(used, colour + 1)
                break
        else:
            if position != len(tree) - 1:
                raise CertificateError(f"the tree ends at entry {position}, before the list")
            return k
    raise CertificateError("the tree is incomplete")
