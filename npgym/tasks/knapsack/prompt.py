"""The Knapsack prompt: items with weights and values, the capacity and the answer format."""

from __future__ import annotations

from npgym.tasks.knapsack.instance import KnapsackInstance


def render(instance: KnapsackInstance) -> str:
    """Plain-ASCII problem statement ending with the ``Answer:`` instruction."""
    n, capacity = instance.n, instance.capacity
    return "\n".join(
        [
            "0/1 Knapsack.",
            "",
            f"There are {n} items, numbered 0 to {n - 1}, each with a weight and a value. The "
            f"knapsack can carry a total weight of at most {capacity}.",
            "",
            "Items (number: weight, value):",
            *(
                f"{item}: weight {weight}, value {value}"
                for item, (weight, value) in enumerate(
                    zip(instance.weights, instance.values, strict=True)
                )
            ),
            "",
            f"Choose items with a total weight of at most {capacity} and the largest possible "
            "total value. Each item may be chosen at most once.",
            "",
            "Answer format: the numbers of the chosen items as a list in square brackets, for "
            "example [0, 3, 4] (this example only shows the format). The empty list [] (no "
            "item) is not a solution.",
            "",
            "Think step by step, then finish your response with the final answer on its own line "
            "in the form: Answer: [i1, i2, ...]",
        ]
    )
