"""The SubsetSum prompt: indexed numbers, the target, the objective and the answer format."""

from __future__ import annotations

from npgym.tasks.subset_sum.instance import SubsetSumInstance


def render(instance: SubsetSumInstance) -> str:
    """Plain-ASCII problem statement ending with the ``Answer:`` instruction."""
    n = instance.n
    return "\n".join(
        [
            "Subset Sum (largest subset).",
            "",
            f"There are {n} numbers, with indices 0 to {n - 1}. Equal numbers at different "
            "indices are different elements.",
            "",
            "Numbers (index: number):",
            *(f"{index}: {number}" for index, number in enumerate(instance.numbers)),
            "",
            f"Target: {instance.target}",
            "",
            f"Choose a set of distinct indices whose numbers sum to exactly {instance.target}, "
            "using as many indices as possible. Each index may be used at most once.",
            "",
            "Answer format: the chosen indices as a list in square brackets, for example "
            "[0, 2, 5] (this example only shows the format).",
            "",
            "Think step by step, then finish your response with the final answer on its own line "
            "in the form: Answer: [i1, i2, ...]",
        ]
    )
