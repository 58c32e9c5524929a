"""HamiltonianCycle certificates: an upper bound on the number of vertices of a longest cycle.

The instance is its JSON object: ``n`` (an integer from 1 to :data:`MAX_VERTICES`) and
``edges`` (pairs ``[u, v]`` of distinct vertices in ``0..n-1``). The witness is a closed cycle
``[v0, v1, ..., v0]`` of 3 or more distinct vertices, each step an edge; its objective is its
number of distinct vertices.

The bounds rest on one rule. For a vertex set W and a *separator* S within it, the subgraph
G[W] - S falls into components; a cycle of G[W] that avoids S lies in one of them, and one that
meets S in k vertices falls into k arcs between them, each inside one component. So no cycle of
G[W] has more than ``sep(W, S) = min(|W|, max(c_1, |S| + c_1 + ... + c_|S|))`` vertices, with
``c_1 >= c_2 >= ...`` the component sizes (``c_1`` alone when S is empty; a missing size is 0).
A certificate is one of:

- ``{"kind": "trivial"}``: the bound n (no cycle has more vertices than the graph).
- ``{"kind": "separator", "separator": S}``: the bound ``sep(V, S)``, S a list of distinct
  vertices.
- ``{"kind": "tree", "tree": [node, ...]}``: a decomposition, flattened in pre-order, whose
  root stands for W = all vertices. A node is ``["cut", v]`` (v in W; the cycles of G[W] that
  avoid v lie in one component C of G[W] - v, and those through v, less v, are a path inside
  one: so each lies in some C + v. Its children follow, one for each component C of 2 or more
  vertices, in the order of their smallest vertex, standing for W = C + v; smaller components
  hold no cycle) or ``["separator", S]`` (a leaf, S a list of distinct vertices of W, bounding
  the cycles of G[W] by ``sep(W, S)``). The certificate's bound is the largest leaf bound (0
  when there is none). A cut at every cut vertex leaves the blocks: the block bound.

Cost: at most :data:`TREE_MAX_WORK` steps (nodes times ``n + 2 * edges``; about 3 s) plus the
tree's length.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, Literal

from npgym.certificates import CertificateError, integer, integers

SENSE: Literal["min", "max"] = "max"
TREE_MAX_WORK = 10_000_000
"""Largest ``nodes * (n + 2 * edges)`` of a ``tree`` certificate (or of a separator's one)."""
MAX_VERTICES = 5000
"""Largest ``n`` the checker reads (npgym's graphs have at most this many vertices)."""


def _graph(instance: Mapping[str, Any]) -> list[set[int]]:
    """The instance's neighbour sets, validated."""
    n = integer(instance.get("n"), "n")
    edges = instance.get("edges")
    if not 1 <= n <= MAX_VERTICES or not isinstance(edges, list):
        raise CertificateError(f"n must be 1 to {MAX_VERTICES} and edges a list")
    neighbours: list[set[int]] = [set() for _ in range(n)]
    for edge in edges:  # inline checks: the graph is most of a check's cost
        if type(edge) is not list or len(edge) != 2:
            raise CertificateError(f"edge {edge!r:.40} is not a pair")
        u, v = edge
        if type(u) is not int or type(v) is not int or u == v or not (0 <= u < n and 0 <= v < n):
            raise CertificateError(f"edge {edge!r:.40} is not a pair of distinct vertices")
        neighbours[u].add(v)
        neighbours[v].add(u)
    return neighbours


def check_pair(
    instance: Mapping[str, Any], solution: Any, certificate: Mapping[str, Any]
) -> tuple[int, int]:
    """:func:`objective` and :func:`bound` together, reading the graph once."""
    neighbours = _graph(instance)
    return _objective(neighbours, solution), _bound(neighbours, certificate)


def objective(instance: Mapping[str, Any], solution: Any) -> int:
    """The number of distinct vertices of ``solution``, a closed simple cycle of the graph."""
    return _objective(_graph(instance), solution)


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
    """The upper bound on the longest cycle that ``certificate`` proves."""
    return _bound(_graph(instance), certificate)


def _objective(neighbours: list[set[int]], solution: Any) -> int:
    """:func:`objective` on the parsed graph."""
    cycle = integers(solution, "the solution")
    inner = cycle[:-1]
    if len(cycle) < 4 or cycle[0] != cycle[-1] or len(set(inner)) != len(inner):
        raise CertificateError("the solution must be a closed list of 3+ distinct vertices")
    for u, v in itertools.pairwise(cycle):
        if not 0 <= u < len(neighbours) or v not in neighbours[u]:
            raise CertificateError(f"the solution steps along ({u}, {v}), not an edge")
    return len(inner)


def _bound(neighbours: list[set[int]], certificate: Mapping[str, Any]) -> int:
    """:func:`bound` on the parsed graph."""
    kind = certificate.get("kind")
    if kind == "trivial" and set(certificate) == {"kind"}:
        return len(neighbours)
    if kind == "separator" and set(certificate) == {"kind", "separator"}:
        return _tree_bound(neighbours, [["separator", certificate["separator"]]])
    if kind == "tree" and set(certificate) == {"kind", "tree"}:
        return _tree_bound(neighbours, certificate["tree"])
    raise CertificateError(f"unknown certificate kind {kind!r:.40} or unexpected fields")


def _components(
    neighbours: list[set[int]], inside: list[bool], within: list[int]
) -> list[list[int]]:
    """The components of the subgraph on the vertices of ``within`` with ``inside`` set,
    ordered by their smallest vertex."""
    seen = [False] * len(neighbours)
    found = []
    for start in sorted(within):
        if not inside[start] or seen[start]:
            continue
        seen[start], part = True, [start]
        for u in part:  # grows while it is walked: a breadth-first search
            for v in neighbours[u]:
                if inside[v] and not seen[v]:
                    seen[v] = True
                    part.append(v)
        found.append(part)
    return found


def _tree_bound(neighbours: list[set[int]], tree: Any) -> int:
    """The largest leaf bound of a complete pre-order decomposition tree."""
    n = len(neighbours)
    if not isinstance(tree, list) or not tree:
        raise CertificateError("the tree must be a non-empty list of nodes")
    if len(tree) * (n + sum(map(len, neighbours))) > TREE_MAX_WORK:
        raise CertificateError(f"{len(tree)} nodes: past {TREE_MAX_WORK} steps")
    pending = [list(range(n))]  # the vertex sets W of the nodes still to come, next last
    best = 0
    for position, node in enumerate(tree):
        if not pending:
            raise CertificateError(f"the tree ends before node {position}")
        within = pending.pop()
        inside = [False] * n
        for u in within:
            inside[u] = True
        if not isinstance(node, list) or len(node) != 2 or node[0] not in ("cut", "separator"):
            raise CertificateError(f"node {position} is not a cut or separator node")
        if node[0] == "cut":
            v = integer(node[1], "a cut vertex")
            if not 0 <= v < n or not inside[v]:
                raise CertificateError(f"node {position} cuts at {v}, not a vertex there")
            inside[v] = False
            parts = [[*part, v] for part in _components(neighbours, inside, within)]
            pending += reversed([part for part in parts if len(part) >= 3])
            continue
        separator = integers(node[1], "a separator")
        if len(set(separator)) != len(separator) or not all(
            0 <= u < n and inside[u] for u in separator
        ):
            raise CertificateError(f"leaf {position}: the separator is not a set of W's vertices")
        for u in separator:
            inside[u] = False
        sizes = sorted(map(len, _components(neighbours, inside, within)), reverse=True)
        hubs = len(separator)
        through = hubs + sum(sizes[:hubs]) if hubs else 0
        best = max(best, min(len(within), max([*sizes[:1], through])))
    if pending:
        raise CertificateError("the tree is incomplete")
    return best
