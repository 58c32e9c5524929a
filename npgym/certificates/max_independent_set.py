"""MaxIndependentSet certificates: an upper bound on the independence number.

The instance is its JSON object: ``n`` (an integer in 1..5000) and ``edges`` (pairs ``[u, v]``
of distinct vertices ``0..n-1``); any other field (the generator's ``planted_cover``) is not
read. The witness is a list of distinct vertices, pairwise non-adjacent; its objective is its
length. An independent set of the graph is a clique of its complement (the same vertices, an
edge where the graph has none), so the certificates are MaxClique's on the complement
(:mod:`npgym.certificates.max_clique`). A certificate is one of:

- ``{"kind": "clique_cover", "cliques": [[v, ...], ...]}``: every vertex is in exactly one
  group and each group is a clique of the graph (a colouring of the complement). An independent
  set takes at most one vertex of each clique, so the bound is the number of groups. The
  generator's planted cover, above the benchmark tier, is such a certificate.
- ``{"kind": "search", "bound": b, "order": [v, ...], "tree": [t, ...]}``: MaxClique's
  branching tree, on the complement. Taking ``v`` keeps the candidates *not* adjacent to ``v``
  in the graph; a leaf's greedy colouring puts in one class vertices pairwise adjacent in the
  graph.

Cost: as MaxClique's, plus building the complement (n integers of n bits).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from npgym.certificates import CertificateError
from npgym.certificates._cliques import (
    clique_size,
    complement,
    graph,
    partition_bound,
    search_bound,
)

SENSE: Literal["min", "max"] = "max"


def objective(instance: Mapping[str, Any], solution: Any) -> int:
    """The size of ``solution``, an independent set of the graph."""
    n, adjacency = graph(instance)
    return clique_size(n, complement(n, adjacency), solution, "an independent set")


def bound(instance: Mapping[str, Any], certificate: Mapping[str, Any]) -> int:
    """The upper bound on the independence number that ``certificate`` proves."""
    n, adjacency = graph(instance)
    kind = certificate.get("kind")
    if kind == "clique_cover" and set(certificate) == {"kind", "cliques"}:
        return partition_bound(n, complement(n, adjacency), certificate["cliques"])
    if kind == "search" and set(certificate) == {"kind", "bound", "order", "tree"}:
        return search_bound(n, complement(n, adjacency), certificate)
    raise CertificateError(f"unknown certificate kind {kind!r:.40} or unexpected fields")
