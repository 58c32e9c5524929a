"""npgym's ``score()`` against NP-ENGINE's own validators, on the same instances and completions.

    NPENGINE_PATH=/path/to/NP-Engine python -m bench.npengine          # the ratio table
    NPENGINE_PATH=/path/to/NP-Engine pytest bench/test_npengine.py     # the 3x goal as a test

NP-ENGINE (github.com/OliverLeeXZ/NP-Engine) ships one pure-Python ``validation(question,
answer)`` per task under ``NP_tasks/<task>/validation.py``. Its repository has no license, so
npgym never copies that code: this module imports it from the checkout that ``NPENGINE_PATH``
names, and everything here skips with a message saying so when the variable is unset.

For each task, one benchmark-tier instance is written in NP-ENGINE's question layout (the
dictionaries its generators produce, keyed by strings), and both sides time the same completion:
reasoning text of a given length, then ``Answer:`` and npgym's reference solution in the text
both parsers accept. The table has one ratio per completion length (:data:`LENGTHS`, from a short
answer to a reasoning model's usual 8-32k characters): NP-ENGINE splits the whole completion on
its marker, so its time grows with the length, while npgym reads the completion from the end.
Each side must accept it with the same objective, or the comparison stops.
MeetingScheduling's answer uses tuples, the only list shape NP-ENGINE's parser reads, and
GraphColoring's colours count from 1 in NP-ENGINE's copy (its validator rejects colour 0).
HamiltonianCycle's neighbour lists hold integers: NP-ENGINE's generator writes string keys there,
with which its validator rejects every cycle, so it would return early and look faster than it is.

The ratio is NP-ENGINE's time divided by npgym's: above 1 means npgym is faster.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import npgym

ENV_VARIABLE = "NPENGINE_PATH"
SENTENCE = "Let me work through the constraints one at a time and check each candidate. "
LENGTHS = (2_000, 8_000, 32_000)
"""Characters of reasoning before the answer, per column of the table."""


def reasoning(length: int) -> str:
    """``length`` characters of reasoning text (whole sentences, cut to length)."""
    return (SENTENCE * (length // len(SENTENCE) + 1))[:length]


VALIDATORS = {
    "TSP": "TSP",
    "MaxClique": "maximum_clique_problem",
    "MaxIndependentSet": "maximum_set",
    "GraphColoring": "GCP_D",
    "MeetingScheduling": "meeting_schedule",
    "HamiltonianCycle": "hamiltonian_cycle",
    "SubsetSum": "subset_sum",
    "SetCover": "set_cover",
    "Knapsack": "knapsack",
    "MinBisection": "minimum_cut",
}
"""npgym task -> the NP-ENGINE folder whose ``validation.py`` checks it."""
OBJECTIVE_OFFSET = {"HamiltonianCycle": 1}
"""NP-ENGINE's objective minus npgym's: its cycle length counts the closing vertex twice."""


def npengine_root() -> Path | None:
    """The NP-ENGINE checkout named by ``NPENGINE_PATH``, or None when the variable is unset."""
    value = os.environ.get(ENV_VARIABLE)
    if not value:
        return None
    root = Path(value).expanduser()
    if not (root / "NP_tasks").is_dir():
        raise FileNotFoundError(f"{ENV_VARIABLE}={value} holds no NP_tasks/ folder")
    return root


SKIP_MESSAGE = (
    f"set {ENV_VARIABLE} to a checkout of github.com/OliverLeeXZ/NP-Engine to compare npgym's "
    "scorer with NP-ENGINE's validators"
)


def load_validator(root: Path, task_name: str) -> Callable[[Any, str], tuple[Any, ...]]:
    """NP-ENGINE's ``validation`` function for an npgym task, imported from the checkout."""
    path = root / "NP_tasks" / VALIDATORS[task_name] / "validation.py"
    spec = importlib.util.spec_from_file_location(f"npengine_{VALIDATORS[task_name]}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.validation


def _neighbour_sets(instance: Any) -> list[list[int]]:
    return instance.neighbours()


def question(task_name: str, instance: Any) -> Any:
    """The instance in NP-ENGINE's question layout for that task."""
    if task_name == "TSP":
        n = instance.n
        return {
            str(i): {str(j): instance.distances[i][j] for j in range(n) if j != i} for i in range(n)
        }
    if task_name in ("MaxClique", "MaxIndependentSet", "HamiltonianCycle"):
        lists = _neighbour_sets(instance)
        if task_name == "HamiltonianCycle":
            return {str(v): list(items) for v, items in enumerate(lists)}
        return {str(v): {str(u): 1 for u in items} for v, items in enumerate(lists)}
    if task_name == "GraphColoring":
        return {str(v): list(items) for v, items in enumerate(_neighbour_sets(instance))}
    if task_name == "MinBisection":
        return {
            str(v): {str(u): w for u, w in items} for v, items in enumerate(instance.neighbours())
        }
    if task_name == "MeetingScheduling":
        return {
            "meetings": {
                str(m): {"attendees": list(meeting.attendees), "duration": meeting.duration}
                for m, meeting in enumerate(instance.meetings)
            },
            "attendee_availability": {
                str(a): [list(interval) for interval in intervals]
                for a, intervals in enumerate(instance.availability)
            },
            "rooms": {str(r): capacity for r, capacity in enumerate(instance.rooms)},
        }
    if task_name == "SubsetSum":
        return {
            "numbers": {str(i): value for i, value in enumerate(instance.numbers)},
            "target": instance.target,
        }
    if task_name == "SetCover":
        return {
            "U": list(range(instance.universe_size)),
            "S": {str(j): list(subset) for j, subset in enumerate(instance.subsets)},
        }
    if task_name == "Knapsack":
        return {
            "capacity": instance.capacity,
            "items": {
                str(i): {"weight": w, "value": v}
                for i, (w, v) in enumerate(zip(instance.weights, instance.values, strict=True))
            },
        }
    raise KeyError(task_name)


def answer_text(task_name: str, task: npgym.Task, solution: Any) -> str:
    """``Answer: ...`` for a solution, in a list shape both parsers read."""
    if task_name == "MeetingScheduling":
        return "Answer: [" + ", ".join(f"({m}, {r}, {s})" for m, r, s in solution) + "]"
    return task.format_answer(solution)


def npengine_answer_text(task_name: str, task: npgym.Task, solution: Any) -> str:
    """The same answer for NP-ENGINE: its colours count from 1, npgym's from 0."""
    if task_name == "GraphColoring":
        return task.format_answer([color + 1 for color in solution])
    return answer_text(task_name, task, solution)


def _per_call_us(function: Callable[[], object], number: int) -> float:
    """Best of five runs of ``number`` calls, in microseconds per call."""
    return min(timeit.repeat(function, number=number, repeat=5)) / number * 1e6


def compare(
    task_name: str, root: Path, length: int = LENGTHS[0], number: int = 300
) -> dict[str, Any]:
    """Time npgym's ``score()`` and NP-ENGINE's validator on one benchmark-tier instance, with
    ``length`` characters of reasoning before the answer."""
    task = npgym.get_task(task_name)
    instance = task.generate(0, tier="benchmark")
    reference = task.reference(instance, exact=False)
    text = reasoning(length)
    completion = text + answer_text(task_name, task, reference.solution)
    their_completion = text + npengine_answer_text(task_name, task, reference.solution)
    data = question(task_name, instance)
    validation = load_validator(root, task_name)
    invalid, objective, message = validation(data, their_completion)
    score = task.score(instance, completion, reference)
    if invalid or not score.feasible:
        raise AssertionError(f"{task_name}: verdicts differ: NP-ENGINE {message!r}, npgym {score}")
    if reference.objective is not None and objective != score.objective + OBJECTIVE_OFFSET.get(
        task_name, 0
    ):
        raise AssertionError(f"{task_name}: objectives differ: {objective} vs {score.objective}")
    theirs = _per_call_us(lambda: validation(data, their_completion), number)
    ours = _per_call_us(lambda: task.score(instance, completion, reference), number)
    return {
        "task": task_name,
        "length": length,
        "npengine_us": theirs,
        "npgym_us": ours,
        "ratio": theirs / ours,
    }


def main() -> None:
    root = npengine_root()
    if root is None:
        print(f"skipped: {SKIP_MESSAGE}")
        sys.exit(0)
    columns = " ".join(
        f"{f'{length // 1000}k: NP-E / npgym us':>24s} {'ratio':>6s}" for length in LENGTHS
    )
    print(f"{'task':18s} {columns}")
    for task_name in npgym.list_tasks():
        cells = []
        for length in LENGTHS:
            row = compare(task_name, root, length)
            cells.append(f"{row['npengine_us']:13.1f} / {row['npgym_us']:8.1f} {row['ratio']:6.1f}")
        print(f"{task_name:18s} {' '.join(cells)}", flush=True)


if __name__ == "__main__":
    main()
