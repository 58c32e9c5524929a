"""Aggregation: improve on given candidate answers (``npgym/Aggregate-<Task>-<tier>``).

The prompt holds a base instance plus ``candidates`` (2..8, default 4) candidate answers drawn
from the task's own baselines, deterministic per seed: the greedy heuristic, a random answer,
a near miss (the optimum changed by one or two small edits, still feasible) and an infeasible
near miss (the optimum broken by a small edit), cycling in that order and then shuffled. No
candidate is optimal: one that is gets edited until it is not, or is dropped, so beating the
best candidate is always possible. Design choice: the prompt marks every candidate with the
verifier's verdict, its objective or the reason it is infeasible, so the task is to improve,
not to re-check.

Reward: the base task's reward on the base instance, plus ``bonus`` (default 0.5, included in
``feasibility_reward`` and reported in :attr:`FamilyScore.bonus`) when the answer is feasible
and strictly better than every feasible candidate (any feasible answer, when no candidate is
feasible: SubsetSum's edits rarely keep the sum, and its greedy is often optimal, so its
candidates are often all infeasible). Copying the best candidate earns no bonus.
The reference is the base task's exact reference; instances whose base has no feasible answer
(a SetCover without a cover) are redrawn, since then nothing could beat the candidates.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, model_validator

from npgym.answer import render_value
from npgym.families.base import (
    FamilyConfig,
    FamilyScore,
    FamilyTask,
    base_instance,
    family_tiers,
    instance_dict,
    strip_instruction,
)
from npgym.instance import Instance, derived
from npgym.registry import get_task
from npgym.results import Objective, Reference, Score, Verdict
from npgym.reward import RewardConfig, failed_score, verdict_score
from npgym.task import Task

MAX_CANDIDATES = 8
KINDS = ("greedy", "random", "near miss", "infeasible near miss")
_EDIT_TRIES = 40
_DRAW_TRIES = 20


class AggregateConfig(FamilyConfig):
    """How many candidates the prompt shows and the bonus for beating all of them."""

    candidates: int = Field(4, ge=2, le=MAX_CANDIDATES)
    bonus: float = Field(0.5, ge=0.0, le=10.0)


class AggregateInstance(Instance):
    """A base instance (JSON dict), the candidate answers in prompt order, and the bonus."""

    base: dict[str, Any]
    candidates: tuple[Any, ...] = Field(min_length=1, max_length=MAX_CANDIDATES)
    bonus: float = Field(0.5, ge=0.0, le=10.0)

    canonical_fields: ClassVar[tuple[str, ...]] = ("base", "candidates")

    @model_validator(mode="after")
    def _consistent(self) -> AggregateInstance:
        if self.task != f"Aggregate-{self.base_instance.task}":
            raise ValueError(f"task {self.task!r} does not match a {self.base_instance.task} base")
        return self

    @derived
    def base_instance(self) -> Instance:
        """The base instance, validated (built once)."""
        return base_instance(self.base)


def _leaves(value: Any, path: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """Paths of the integers in a nested list."""
    if isinstance(value, list):
        return [leaf for index, item in enumerate(value) for leaf in _leaves(item, (*path, index))]
    return [path] if isinstance(value, int) else []


def _parent(value: list[Any], path: tuple[int, ...]) -> list[Any]:
    for index in path[:-1]:
        value = value[index]
    return value


def edit(solution: Any, rng: np.random.Generator) -> Any:
    """The solution after one or two small random edits: swap two numbers, copy one number
    over another, delete a number, delete a top-level entry, or append a number (at most the
    largest one present) to a list of numbers."""
    value = copy.deepcopy(solution.tolist() if isinstance(solution, np.ndarray) else solution)
    if not isinstance(value, list) or not value:
        return value
    for _ in range(int(rng.integers(1, 3))):
        leaves = _leaves(value)
        operation = int(rng.integers(5)) if len(leaves) >= 2 else 3
        if operation in (0, 1):
            first, second = (leaves[int(i)] for i in rng.choice(len(leaves), 2, replace=False))
            a, b = _parent(value, first), _parent(value, second)
            if operation == 0:
                a[first[-1]], b[second[-1]] = b[second[-1]], a[first[-1]]
            else:
                a[first[-1]] = b[second[-1]]
        elif operation == 2:
            leaf = leaves[int(rng.integers(len(leaves)))]
            del _parent(value, leaf)[leaf[-1]]
        elif operation == 4:
            target = _parent(value, leaves[int(rng.integers(len(leaves)))])
            largest = max(v for v in target if isinstance(v, int))
            target.append(int(rng.integers(0, max(largest, 0) + 1)))
        elif value:
            del value[int(rng.integers(len(value)))]
    return value


class AggregateTask(FamilyTask[AggregateInstance, AggregateConfig]):
    """Improve on candidate answers to a base instance (see the module docstring)."""

    instance_type = AggregateInstance
    tiers: ClassVar[dict[str, AggregateConfig]] = family_tiers(AggregateConfig)

    def __init__(self, base_name: str) -> None:
        self.base: Task = get_task(base_name)
        self.name = f"Aggregate-{self.base.name}"  # type: ignore[misc]  # one object per family name
        self.category = self.base.category  # type: ignore[misc]  # one object per family name
        self.sense = self.base.sense  # type: ignore[misc]  # one object per family name
        self.objective_name = self.base.objective_name  # type: ignore[misc]  # one object per family name

    # --- generation ---------------------------------------------------------------------------

    def _verdict(self, instance: Instance, candidate: Any) -> Verdict:
        return self.base.verify(instance, candidate)

    def _optimal(self, instance: Instance, candidate: Any, optimum: Objective) -> bool:
        verdict = self._verdict(instance, candidate)
        return verdict.feasible and self.base.ratio(verdict.objective, optimum) >= 1.0  # type: ignore[arg-type]

    def _candidate(
        self, kind: str, instance: Instance, reference: Reference, rng: np.random.Generator
    ) -> Any:
        """One candidate of ``kind``, never optimal; ``None`` when none could be made."""
        optimum = reference.objective
        if kind == "greedy":
            candidate = self.base.greedy_solution(instance)
        elif kind == "random":
            candidate = self.base.random_solution(instance, rng)
        else:
            want_feasible = kind == "near miss"
            for _ in range(_EDIT_TRIES):
                candidate = edit(reference.solution, rng)
                feasible = self._verdict(instance, candidate).feasible
                if feasible == want_feasible and not self._optimal(instance, candidate, optimum):  # type: ignore[arg-type]
                    return candidate
            candidate = self.base.random_solution(instance, rng)
        for _ in range(_EDIT_TRIES):
            if not self._optimal(instance, candidate, optimum):  # type: ignore[arg-type]
                return candidate
            candidate = edit(candidate, rng)
        return None

    def build(self, rng: np.random.Generator, config: AggregateConfig) -> dict[str, Any]:
        level = self.part_level(config)
        for _ in range(_DRAW_TRIES):
            instance = self.base.generate(int(rng.integers(2**63)), **level)
            reference = self.base.reference(instance)
            if reference.objective is not None:
                break
        else:
            raise RuntimeError(f"no {self.base.name} instance with a feasible answer was drawn")
        if not reference.proven_optimal:
            raise RuntimeError(
                f"the {self.base.name} reference is not proven (gap {reference.gap})"
            )
        candidates = []
        for index in range(config.candidates):
            candidate = self._candidate(KINDS[index % len(KINDS)], instance, reference, rng)
            if candidate is not None:
                candidates.append(_plain(candidate))
        order = rng.permutation(len(candidates)).tolist()
        return {
            "base": instance_dict(instance),
            "candidates": [candidates[i] for i in order],
            "bonus": config.bonus,
        }

    # --- prompt -------------------------------------------------------------------------------

    def _best_candidate(self, instance: AggregateInstance) -> Objective | None:
        """The best objective among the feasible candidates (``None`` when none is)."""

        def compute() -> Objective | None:
            objectives = [
                verdict.objective
                for verdict in (
                    self._verdict(instance.base_instance, c) for c in instance.candidates
                )
                if verdict.feasible and verdict.objective is not None
            ]
            if not objectives:
                return None
            return max(objectives) if self.sense == "max" else min(objectives)

        return instance.cached("best_candidate", compute)

    def prompt(self, instance: AggregateInstance) -> str:
        base = instance.base_instance
        lines = [strip_instruction(self.base.prompt(base)), ""]
        lines.append(
            f"Here are {len(instance.candidates)} candidate answers (from simple heuristics, "
            "random guesses and near misses), each with the verifier's verdict:"
        )
        for index, candidate in enumerate(instance.candidates, start=1):
            verdict = self._verdict(base, candidate)
            note = (
                f"feasible, {self.objective_name} {verdict.objective}"
                if verdict.feasible
                else f"infeasible ({verdict.reason})"
            )
            lines.append(f"Candidate {index}: {render_value(candidate)} -- {note}")
        best = self._best_candidate(instance)
        goal = "lower" if self.sense == "min" else "higher"
        target = (
            f"better than the best feasible candidate ({self.objective_name} {best}, so {goal})"
            if best is not None
            else "feasible (no candidate is)"
        )
        lines += [
            "",
            f"Give an answer that is {target}; the best possible answer earns the most. An "
            "answer that beats every candidate earns a bonus; copying a candidate does not.",
            "",
            "Think step by step, then finish your response with the final answer on its own line "
            "in the form: Answer: <your answer in the format above>",
        ]
        return "\n".join(lines)

    # --- answers, baselines, reference --------------------------------------------------------

    def to_solution(self, value: Any) -> Any:
        return self.base.to_solution(value)

    def check(self, instance: AggregateInstance, solution: Any) -> Verdict:
        return self.base.check(instance.base_instance, solution)

    def ratio(self, objective: Objective, reference_objective: Objective | None) -> float:
        return self.base.ratio(objective, reference_objective)

    def random_solution(self, instance: AggregateInstance, rng: np.random.Generator) -> Any:
        return self.base.random_solution(instance.base_instance, rng)

    def greedy_solution(self, instance: AggregateInstance) -> Any:
        """The best feasible candidate (the answer that earns no bonus), else the base greedy."""
        best = self._best_candidate(instance)
        for candidate in instance.candidates:
            verdict = self._verdict(instance.base_instance, candidate)
            if verdict.feasible and verdict.objective == best:
                return candidate
        return self.base.greedy_solution(instance.base_instance)

    def solve(self, instance: AggregateInstance, *, exact: bool, time_limit: float) -> Reference:
        return self.base.reference(instance.base_instance, exact=exact, time_limit=time_limit)

    # --- scoring ------------------------------------------------------------------------------

    def beats_candidates(self, instance: AggregateInstance, objective: Objective | None) -> bool:
        """Whether a feasible answer's objective is strictly better than every candidate's."""
        best = self._best_candidate(instance)
        if best is None:
            return True
        if objective is None:  # a correct Impossible: then no candidate is feasible
            return False
        return objective > best if self.sense == "max" else objective < best

    def score_solution(
        self,
        instance: AggregateInstance,
        solution: Any,
        reference: Reference | Objective | None,
        weights: RewardConfig,
    ) -> Score:
        reference_objective = reference.objective if isinstance(reference, Reference) else reference
        verdict = self.check(instance, solution)
        if not verdict.feasible:
            return failed_score(
                weights, True, verdict.objective, reference_objective, verdict.reason
            )
        score = verdict_score(weights, verdict, reference_objective, None, self.sense, self.ratio)
        bonus = instance.bonus if self.beats_candidates(instance, verdict.objective) else 0.0
        return FamilyScore(
            **score.to_dict()
            | {
                "reward": score.reward + bonus,
                "feasibility_reward": score.feasibility_reward + bonus,
                "bonus": bonus,
            }
        )

    def feedback(self, score: Score) -> str:
        text = super().feedback(score)
        if isinstance(score, FamilyScore) and score.bonus:
            return f"{text} It beats every candidate."
        return text


def _plain(value: Any) -> Any:
    """A candidate as plain JSON-ready lists and ints."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, np.integer):
        return int(value)
    return value
