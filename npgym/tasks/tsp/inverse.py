"""TSP's inverse problems (the ``inverse`` capability; see :mod:`npgym.inverse`)."""

from __future__ import annotations

from npgym.heuristics.small_exact import tsp_optimum
from npgym.inverse import InverseProblem, int64

INVERSE = InverseProblem(
    unit="cities",
    size_cap=15,
    fields='"distances": an n x n symmetric matrix of non-negative integers, 0 on the diagonal',
    optimum="the length of a shortest closed tour through every city",
    greedy="nearest neighbour: start at city 0 and always go to the closest unvisited city "
    "(the lowest-numbered one on ties), then return to city 0",
    exact_optimum=lambda instance: int(tsp_optimum(int64(instance.distances))),
)
