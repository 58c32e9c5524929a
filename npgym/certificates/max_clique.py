"""MaxClique certificates: an upper bound on the clique number.

The instance is its JSON object: ``n`` (an integer in 1..5000) and ``edges`` (pairs ``[u, v]``
of distinct vertices ``0..n-1``; the graph is undirected). The witness is a list of distinct
vertices, pairwise adjacent; its objective is its length. A certificate is one of:

- ``{"kind": "coloring", "classes": [[v, ...], ...]}``: a proper colouring. Every vertex is in
  exactly one class and no two vertices of a class are adjacent. A clique meets each class at
  most once, so the bound is the number of classes.
- ``{"kind": "search", "bound": b, "order": [v, ...], "tree": [t, ...]}``: a branching tree
  that proves no clique has ``b + 1`` vertices (``0 <= b <= n``; ``order`` lists every vertex
  once). A node of the tree is a clique ``C`` (its size ``c``) and an ordered list ``P`` of
  candidates, each adjacent to all of ``C`` and carrying a colour, no two adjacent candidates
  of one colour; it stands for the cliques ``K`` with ``C <= K <= C | P``. *First-fit*
  colouring of a list gives each vertex in turn the smallest colour (1, 2, ...) that none of
  its neighbours earlier in the list has. The root is ``C`` empty and ``P = order``, coloured
  first-fit. The tree is flattened in pre-order, one integer per node:

  - ``v >= 0`` branches on ``v``, which must be in ``P``, with ``c < b``. Its two subtrees
    follow, first the one that takes ``v``: ``C + v``, and as ``P`` the members of ``P``
    adjacent to ``v``, in ``P``'s order, coloured first-fit afresh and then listed colour by
    colour (colour 1's vertices first, each colour in that order); then the one that leaves
    ``v`` out: ``C``, and ``P`` without ``v``, order and colours kept.
  - ``-1`` is a leaf: with ``k`` the number of distinct colours in ``P``, it must hold that
    ``c + k <= b`` (a clique meets each colour at most once).

  Every clique in a node lies in one of its two subtrees, so a tree whose leaves all close
  proves the clique number at most ``b``. ``{"bound": k, "order": ..., "tree": [-1]}`` is the
  first-fit colouring of an order; the branch and bound of Tomita and Seki (MCQ), which always
  branches on the last candidate, gives such trees.

Cost: a ``coloring`` is linear in the graph. A ``search`` is counted in steps: at each entry
of the tree, the candidates there, and in each first-fit colouring, the colours tried for each
vertex (each step an ``&`` or a list operation on n-bit integers); it is refused past
:data:`~npgym.certificates._cliques.MAX_STEPS` (30 million: about 5 s at n = 150, measured,
more at larger n). The first-fit colouring of the order costs at most ``n * n`` steps, so a
one-leaf tree always checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from npgym.certificates import CertificateError
from npgym.certificates._cliques import clique_size, graph, partition_bound, search_bound

SENSE: Literal["min", "max"] = "max"


def objective(instance: Mapping[str, Any], solution: Any) -> int:
    """The size of ``solution``, a clique of the graph."""
    n, adjacency = graph(instance)
    return clique_size(n, adjacency, solution, "a clique")


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
    """The upper bound on the clique number that ``certificate`` proves."""
    n, adjacency = graph(instance)
    kind = certificate.get("kind")
    if kind == "coloring" and set(certificate) == {"kind", "classes"}:
        return partition_bound(n, adjacency, certificate["classes"])
    if kind == "search" and set(certificate) == {"kind", "bound", "order", "tree"}:
        return search_bound(n, adjacency, certificate)
    raise CertificateError(f"unknown certificate kind {kind!r:.40} or unexpected fields")
