"""The graph colouring prompt: the graph as adjacency lists, the objective and the answer format."""

from __future__ import annotations

from npgym.graphs import adjacency_lines
from npgym.tasks.graph_coloring.instance import GraphColoringInstance


def render(instance: GraphColoringInstance) -> str:
    """Plain-ASCII problem statement ending with the ``Answer:`` instruction."""
    n = instance.n
    slots = [f"c{i}" for i in range(n)] if n <= 3 else ["c0", "c1", "...", f"c{n - 1}"]
    lines = [
        "Graph Colouring Problem.",
        "",
        f"The graph has {n} vertices, numbered 0 to {n - 1}, and {len(instance.edges)} edges. "
        "Each line below gives a vertex, then the vertices it shares an edge with:",
        *adjacency_lines(instance.neighbours()),
        "",
        "Give every vertex a colour so that the two ends of every edge have different colours, "
        "using as few different colours as possible. Colours are written as integers; any "
        "integers will do, since only which vertices share a colour matters (0, 1, 2, ... is "
        "the natural choice). The score is the number of different colours used.",
        "",
        f"Answer format: a list of {n} integers in square brackets whose i-th entry is the "
        "colour of vertex i, for example [0, 1, 0, 2] for a graph with 4 vertices (this example "
        "only shows the format).",
        "",
        "Think step by step, then finish your response with the final answer on its own line "
        f"in the form: Answer: [{', '.join(slots)}]",
    ]
    return "\n".join(lines)
