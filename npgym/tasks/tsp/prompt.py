"""The TSP prompt: cities, the full distance table, the objective and the answer format."""

from __future__ import annotations

from npgym.tasks.tsp.instance import TSPInstance


def render(instance: TSPInstance) -> str:
    """Plain-ASCII problem statement ending with the ``Answer:`` instruction."""
    n = instance.n
    lines = [
        "Traveling Salesman Problem (TSP).",
        "",
        f"There are {n} cities, numbered 0 to {n - 1}.",
    ]
    if instance.coordinates is not None:
        points = ", ".join(f"{i}: ({x}, {y})" for i, (x, y) in enumerate(instance.coordinates))
        lines += [
            "Each city is a point in the plane; the distance between two cities is their "
            "Euclidean distance rounded to the nearest integer.",
            f"Coordinates (x, y): {points}",
        ]
    lines += [
        "The distance between two cities is the same in both directions. Row i of the table "
        f"lists the distances from city i to cities 0, 1, ..., {n - 1}, in that order.",
        "",
        "Distances:",
        *(f"{i}: {' '.join(map(str, row))}" for i, row in enumerate(instance.distances)),
        "",
        "Find a tour of minimum total length that starts at a city, visits every other city "
        "exactly once and returns to the starting city. The length of a tour is the sum of the "
        "distances between consecutive cities, including the return to the start.",
        "",
        f"Answer format: the tour as a list of {n + 1} city numbers in square brackets that "
        "begins and ends with the same city, for example [0, 2, 1, 3, 0] for a problem with "
        "4 cities (this example only shows the format).",
        "",
        "Think step by step, then finish your response with the final answer on its own line "
        "in the form: Answer: [c0, c1, ..., c0]",
    ]
    return "\n".join(lines)
