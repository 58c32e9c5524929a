"""MinBisection's inverse problems (the ``inverse`` capability; see :mod:`npgym.inverse`)."""

from __future__ import annotations

from npgym.heuristics.small_exact import min_bisection_optimum
from npgym.inverse import InverseProblem, int64

INVERSE = InverseProblem(
    unit="vertices",
    size_cap=24,
    fields='"n": the number of vertices (at least 2), "edges": a list of [u, v, w] triples, w a '
    "positive integer weight, each pair at most once",
    optimum="the least total weight of the edges cut by a split of the vertices into two halves "
    "whose sizes differ by at most one",
    exact_optimum=lambda instance: int(
        min_bisection_optimum(instance.n, int64(instance.edges).reshape(-1, 3))
    ),
)
