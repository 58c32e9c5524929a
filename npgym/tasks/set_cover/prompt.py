"""The SetCover prompt: the universe, the subsets, the objective and the answer format."""

from __future__ import annotations

from npgym.tasks.set_cover.instance import SetCoverInstance


def render(instance: SetCoverInstance) -> str:
    """Plain-ASCII problem statement ending with the ``Answer:`` instruction."""
    size, count = instance.universe_size, len(instance.subsets)
    return "\n".join(
        [
            "Set Cover.",
            "",
            f"The universe is the set of the {size} integers 0 to {size - 1}. There are {count} "
            f"subsets of it, numbered 0 to {count - 1}.",
            "",
            "Subsets (number: elements):",
            *(
                f"{index}: {', '.join(map(str, subset)) if subset else '(empty)'}"
                for index, subset in enumerate(instance.subsets)
            ),
            "",
            "Choose as few subsets as possible such that every element of the universe belongs "
            "to at least one chosen subset. Each subset may be chosen at most once. If no choice "
            "of subsets covers the whole universe, the answer is the word Impossible.",
            "",
            "Answer format: the numbers of the chosen subsets as a list in square brackets, for "
            "example [0, 3, 4] (this example only shows the format), or the single word "
            "Impossible if no cover exists.",
            "",
            "Think step by step, then finish your response with the final answer on its own line "
            "in the form: Answer: [s1, s2, ...] or Answer: Impossible",
        ]
    )
