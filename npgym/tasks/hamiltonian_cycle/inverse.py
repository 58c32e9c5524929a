"""HamiltonianCycle's inverse problems (the ``inverse`` capability; see :mod:`npgym.inverse`)."""

from __future__ import annotations

from npgym.heuristics.hamiltonian_cycle import longest_cycle_dp
from npgym.inverse import GRAPH_FIELDS, InverseProblem

INVERSE = InverseProblem(
    unit="vertices",
    size_cap=16,
    fields=GRAPH_FIELDS + " (the graph must contain at least one cycle)",
    optimum="the number of vertices on a longest simple cycle",
    exact_optimum=lambda instance: len(longest_cycle_dp(instance.adjacency)) or -1,
)
