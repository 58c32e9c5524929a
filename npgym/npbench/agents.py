"""Built-in baseline agents: completions without a model, for a first NP-Bench run.

- ``random``: a random answer in the task's shape (usually infeasible or poor): the floor.
- ``greedy``: the task's simple constructive heuristic (nearest neighbour, greedy clique...).
- ``heuristic``: the reference heuristic with local search (no optimality proof).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np

from npgym.npbench.evaluate import Completions
from npgym.records import record_instance
from npgym.seeding import derive_seed

Agent = Literal["random", "greedy", "heuristic"]
AGENTS: tuple[str, ...] = ("random", "greedy", "heuristic")


def agent_completions(
    rows: Iterable[Mapping[str, Any]], agent: Agent, samples: int = 1, seed: int = 0
) -> Completions:
    """Completions of ``agent`` for every row (``samples`` per row; deterministic)."""
    texts: dict[str, list[str]] = {}
    for row in rows:
        task, instance = record_instance(row)
        rng = np.random.default_rng(derive_seed("agent", agent, seed, str(row["id"])))
        answers = []
        for _ in range(samples):
            if agent == "heuristic":
                solution = task.reference(instance, exact=False).solution
            elif agent == "greedy":
                solution = task.greedy_solution(instance)
            elif agent == "random":
                solution = task.random_solution(instance, rng)
            else:
                raise ValueError(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")
            answers.append(f"Baseline agent '{agent}'.\n{task.format_answer(solution)}")
        texts[str(row["id"])] = answers
    return Completions(texts)
