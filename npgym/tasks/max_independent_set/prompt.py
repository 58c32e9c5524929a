"""MaxIndependentSet's prompt: MaxClique's statement of a vertex set, with the rule reversed."""

from __future__ import annotations

from npgym.graphs import GraphInstance
from npgym.tasks.max_clique.prompt import render_vertex_set


def render(instance: GraphInstance) -> str:
    """MaxIndependentSet's problem statement."""
    return render_vertex_set(
        instance,
        "Maximum Independent Set Problem",
        "independent set",
        "no two vertices are joined by an edge",
    )
