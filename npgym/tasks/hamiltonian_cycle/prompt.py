"""The HamiltonianCycle prompt: adjacency lists, the objective and the answer format."""

from __future__ import annotations

from npgym.graphs import adjacency_lines
from npgym.tasks.hamiltonian_cycle.instance import HamiltonianCycleInstance


def render(instance: HamiltonianCycleInstance) -> str:
    """Plain-ASCII problem statement ending with the ``Answer:`` instruction."""
    n = instance.n
    return "\n".join(
        [
            "Hamiltonian Cycle Problem (find the longest cycle).",
            "",
            f"An undirected graph has {n} vertices, numbered 0 to {n - 1}, and "
            f"{len(instance.edges)} edges. Each line below lists a vertex and its neighbours.",
            "",
            "Adjacency lists:",
            *adjacency_lines(instance.neighbours()),
            "",
            "Find a cycle that visits as many distinct vertices as possible, ideally all of them "
            "(a Hamiltonian cycle). A cycle starts at a vertex, moves along edges to vertices "
            "it has not visited yet, and returns along an edge to the starting vertex; it has at "
            "least 3 distinct vertices. Not every graph has a Hamiltonian cycle: if this one has "
            "none, give the longest cycle you can find. The score is the number of distinct "
            "vertices on the cycle.",
            "",
            "Answer format: the cycle as a list of vertex numbers in square brackets, in the "
            "order visited, that begins and ends with the same vertex (the starting vertex is "
            "written again at the end), for example [0, 2, 1, 3, 0] for a cycle through 4 "
            "vertices (this example only shows the format).",
            "",
            "Think step by step, then finish your response with the final answer on its own line "
            "in the form: Answer: [v0, v1, ..., v0]",
        ]
    )
