"""SetCover's inverse problems (the ``inverse`` capability; see :mod:`npgym.inverse`)."""

from __future__ import annotations

from npgym.heuristics.small_exact import set_cover_optimum, subset_bits
from npgym.inverse import InverseProblem

INVERSE = InverseProblem(
    unit="subsets",
    size=lambda instance: len(instance.subsets),
    size_cap=20,
    fields='"universe_size": u >= 1, "subsets": a list of lists of distinct elements in 0..u-1',
    optimum="the fewest subsets whose union is the whole universe",
    greedy="greedy cover: repeatedly take the subset that covers the most elements not yet "
    "covered (the lowest-numbered one on ties); then go through the taken subsets from the last "
    "taken to the first, dropping each one whose elements are all covered at least twice",
    exact_optimum=lambda instance: int(
        set_cover_optimum(
            instance.universe_size, subset_bits(instance.universe_size, instance.subsets)
        )
    ),
)
