"""MaxClique's inverse problems (the ``inverse`` capability; see :mod:`npgym.inverse`)."""

from __future__ import annotations

from npgym.inverse import GRAPH_FIELDS, InverseProblem

INVERSE = InverseProblem(
    unit="vertices",
    size_cap=30,
    fields=GRAPH_FIELDS,
    optimum="the size of a largest clique (vertices that are pairwise joined)",
)
