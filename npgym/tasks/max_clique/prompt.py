"""Prompts for MaxClique and MaxIndependentSet: the graph as adjacency lists, the rule, the
objective and the answer format."""

from __future__ import annotations

from npgym.graphs import GraphInstance, adjacency_lines


def render_vertex_set(instance: GraphInstance, title: str, noun: str, rule: str) -> str:
    """Plain-ASCII problem statement ending with the ``Answer:`` instruction.

    ``noun`` names the vertex set sought ("clique") and ``rule`` defines it.
    """
    n, m = instance.n, len(instance.edges)
    article = "an" if noun[0] in "aeiou" else "a"
    return "\n".join(
        [
            f"{title}.",
            "",
            f"An undirected graph has {n} vertices, numbered 0 to {n - 1}, and {m} edges. "
            "Each line below lists a vertex followed by its neighbours (the vertices joined "
            "to it by an edge).",
            "",
            "Adjacency lists:",
            *adjacency_lines(instance.neighbours()),
            "",
            f"{article.capitalize()} {noun} is a set of vertices in which {rule}. Find {article} "
            f"{noun} with as many vertices as possible.",
            "",
            f"Answer format: the {noun} as a list of distinct vertex numbers in square "
            "brackets, in any order, for example [0, 2, 5] (this example only shows the "
            "format). The empty list [] is not a solution.",
            "",
            "Think step by step, then finish your response with the final answer on its own "
            "line in the form: Answer: [v1, v2, ...]",
        ]
    )


def render(instance: GraphInstance) -> str:
    """MaxClique's problem statement."""
    return render_vertex_set(
        instance, "Maximum Clique Problem", "clique", "every two vertices are joined by an edge"
    )
