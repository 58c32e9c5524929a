"""The MinBisection prompt: the weighted adjacency lists, the objective and the answer format."""

from __future__ import annotations

from npgym.tasks.min_bisection.instance import MinBisectionInstance


def render(instance: MinBisectionInstance) -> str:
    """Plain-ASCII problem statement ending with the ``Answer:`` instruction."""
    n = instance.n
    small, large = n // 2, n - n // 2
    sizes = (
        f"each part must have exactly {small} vertices"
        if small == large
        else f"one part must have {small} vertices and the other {large}"
    )
    adjacency = [
        f"{vertex}: " + (" ".join(f"{u}:{w}" for u, w in items) if items else "none")
        for vertex, items in enumerate(instance.neighbours())
    ]
    return "\n".join(
        [
            "Minimum Bisection (graph partitioning).",
            "",
            f"An undirected graph has {n} vertices, numbered 0 to {n - 1}, and "
            f"{len(instance.edges)} edges, each with a positive integer weight. Each line below "
            "starts with a vertex, followed by its neighbours written as neighbour:weight (the "
            "weight of the edge between them). Every edge is listed under both of its ends.",
            "",
            "Adjacency:",
            *adjacency,
            "",
            "Split the vertices into two parts, A and B: every vertex must be in exactly one part "
            f"and the sizes of the parts may differ by at most one, so here {sizes}. The cut "
            "weight of a split is the total weight of the edges with one end in A and the other "
            "in B. Find a split with minimum cut weight.",
            "",
            "Answer format: the two parts as a list of two lists of vertex numbers, part A first, "
            "for example [[0, 3], [1, 2]] for a graph with 4 vertices (this example only shows "
            "the format).",
            "",
            "Think step by step, then finish your response with the final answer on its own line "
            "in the form: Answer: [[a1, a2, ...], [b1, b2, ...]]",
        ]
    )
