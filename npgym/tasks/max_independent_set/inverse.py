"""MaxIndependentSet's inverse problems (the ``inverse`` capability; see :mod:`npgym.inverse`)."""

from __future__ import annotations

from npgym.inverse import GRAPH_FIELDS, InverseProblem

INVERSE = InverseProblem(
    unit="vertices",
    size_cap=30,
    fields=GRAPH_FIELDS,
    optimum="the size of a largest independent set (no two vertices joined)",
)
