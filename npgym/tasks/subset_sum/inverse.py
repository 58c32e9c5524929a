"""SubsetSum's inverse problems (the ``inverse`` capability; see :mod:`npgym.inverse`)."""

from __future__ import annotations

from npgym.heuristics.small_exact import subset_sum_optimum
from npgym.inverse import InverseProblem, int64

INVERSE = InverseProblem(
    unit="numbers",
    size_cap=30,
    fields='"numbers": integers in 1..100000, "target": an integer in 1..100000 that some '
    "subset of the numbers sums to",
    optimum="the largest number of distinct indices whose numbers sum exactly to the target",
    exact_optimum=lambda instance: int(
        subset_sum_optimum(int64(instance.numbers), instance.target)
    ),
)
