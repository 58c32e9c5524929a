"""Composition: several base instances in one prompt, side by side or chained.

Task names (gym ids add ``-<tier>``; gymnasium ids cannot hold ``+``, so parts are joined with
``.``, and ``+`` is accepted as a synonym by :func:`npgym.get_task`):

- ``Compose-TSP.Knapsack``: parallel, the listed tasks in that order (2 to 8 parts, repeats
  allowed);
- ``Compose-Mixed<K>``: parallel, K distinct tasks drawn per instance (K = 2..8);
- ``Compose-Chain<D>``: sequential, D links (D = 2..6, the depth axis of the curriculum): the
  first link is any task, each later one a Knapsack or SubsetSum instance whose capacity or
  target is ``C = a * k + b``, where ``k`` is the certified optimum of the link before;
- ``Compose-Chain-MaxClique.Knapsack``: sequential with the listed tasks (every link after
  the first must be Knapsack or SubsetSum).

A link's parameter is the generated base instance's own value written as ``a * k + b`` with
``a = max(1, value // k)``: the link is exactly that base instance, so its exact reference is
the base task's, and a model that gets ``k`` wrong solves the wrong problem. Every part is
scored on the true instance.

The answer is one list holding each part's answer in order, e.g. ``[[0, 2, 1, 0], [3, 5]]``.
The wrong number of parts, or a part in the wrong shape, is a format failure that names the
part. Reward (config ``mode``): ``mean`` (default), the mean of the parts' own rewards; or
``all``, all or nothing: infeasible unless every part is feasible, and optimal (2) only when
every part is optimal, else 1. The score's ``parts`` hold each part's own score; its
``objective`` is the number of parts solved optimally, out of ``reference_objective`` parts.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from npgym.answer import AnswerFormatError, as_list
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
from npgym.registry import get_task, list_tasks
from npgym.results import Objective, Reference, Score, Verdict
from npgym.reward import RewardConfig, failed_score, verdict_score

MAX_PARTS = 8
MAX_DEPTH = 6
SUCCESSORS: dict[str, str] = {"Knapsack": "capacity", "SubsetSum": "target"}
"""Tasks that can follow a link, and the field the previous optimum sets."""
_SENTINEL = 987_654_321_987
"""Stands for a link's parameter while its prompt is rendered (no instance number has 12
digits), then replaced by the parameter's name."""

Mode = Literal["mean", "all"]


class ComposeConfig(FamilyConfig):
    """How the parts' rewards combine: ``mean`` or ``all`` (all or nothing)."""

    mode: Mode = "mean"


class Link(BaseModel):
    """A chained part's parameter: ``field = scale * k + offset``, k the previous optimum."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str
    scale: int = Field(ge=1, strict=True)
    offset: int = Field(strict=True)


class ComposeInstance(Instance):
    """The parts (base instances as JSON dicts), their links (``None`` for a free part) and the
    reward mode."""

    parts: tuple[dict[str, Any], ...] = Field(min_length=2, max_length=MAX_PARTS)
    links: tuple[Link | None, ...]
    mode: Mode = "mean"

    canonical_fields: ClassVar[tuple[str, ...]] = ("parts", "links", "mode")

    @model_validator(mode="after")
    def _consistent(self) -> ComposeInstance:
        if not self.task.startswith("Compose-"):
            raise ValueError(
                f"a composed instance's task starts with 'Compose-', not {self.task!r}"
            )
        if len(self.links) != len(self.parts):
            raise ValueError(f"{len(self.parts)} parts but {len(self.links)} links")
        for index, (part, link) in enumerate(zip(self.part_instances, self.links, strict=True)):
            if link is None:
                continue
            if index == 0 or SUCCESSORS.get(part.task) != link.field:
                raise ValueError(f"part {index + 1} ({part.task}) cannot be linked by {link.field}")
        return self

    @derived
    def part_instances(self) -> tuple[Instance, ...]:
        """The parts as validated base instances (built once)."""
        return tuple(base_instance(part) for part in self.parts)


def _link_text(link: Link, index: int) -> str:
    sign = "+" if link.offset >= 0 else "-"
    return f"C{index} = {link.scale} * k{index - 1} {sign} {abs(link.offset)}"


class ComposeTask(FamilyTask[ComposeInstance, ComposeConfig]):
    """Several base instances in one prompt (see the module docstring)."""

    category = "composition"
    sense = "max"
    objective_name = "parts solved optimally"
    instance_type = ComposeInstance
    tiers: ClassVar[dict[str, ComposeConfig]] = family_tiers(ComposeConfig)

    def __init__(
        self, name: str, *, chain: bool, tasks: tuple[str, ...] = (), count: int = 0
    ) -> None:
        self.name = name  # type: ignore[misc]  # one object per family name
        self.chain = chain
        self.tasks = tasks
        self.count = count or len(tasks)

    # --- generation ---------------------------------------------------------------------------

    def _draw_tasks(self, rng: np.random.Generator) -> list[str]:
        if self.tasks:
            return list(self.tasks)
        if not self.chain:
            return [str(name) for name in rng.choice(list_tasks(), self.count, replace=False)]
        first = str(rng.choice(list_tasks()))
        return [first, *(str(rng.choice(list(SUCCESSORS))) for _ in range(self.count - 1))]

    def build(self, rng: np.random.Generator, config: ComposeConfig) -> dict[str, Any]:
        level = self.part_level(config)
        parts: list[Instance] = []
        links: list[Link | None] = []
        for index, name in enumerate(self._draw_tasks(rng)):
            part = get_task(name).generate(int(rng.integers(2**63)), **level)
            link = None
            if self.chain and index:
                optimum = _proven_optimum(parts[-1])
                value = getattr(part, SUCCESSORS[name])
                scale = max(1, value // max(optimum, 1))
                link = Link(field=SUCCESSORS[name], scale=scale, offset=value - scale * optimum)
            parts.append(part)
            links.append(link)
        return {
            "parts": [instance_dict(part) for part in parts],
            "links": links,
            "mode": config.mode,
        }

    # --- prompt -------------------------------------------------------------------------------

    def prompt(self, instance: ComposeInstance) -> str:
        parts = instance.part_instances
        count = len(parts)
        hidden_numbers = ", ".join(f"C{i}" for i, link in enumerate(instance.links, 1) if link)
        opening = (
            f"This problem is a chain of {count} parts: each part after the first has a number "
            f"({hidden_numbers}) that is worked out from the optimum of the part before it."
            if hidden_numbers
            else f"This problem has {count} independent parts."
        )
        lines = [f"{opening} Solve every part.", ""]
        for index, (part, link) in enumerate(zip(parts, instance.links, strict=True), start=1):
            task = get_task(part.task)
            lines.append(f"=== Part {index} of {count}: {task.name} ===")
            if link is not None:
                previous = get_task(parts[index - 2].task).objective_name
                lines.append(
                    f"In this part C{index} is not given directly: {_link_text(link, index)}, "
                    f"where k{index - 1} is the optimal {previous} of part {index - 1} "
                    f"(0 if part {index - 1} has no feasible answer). Work it out first."
                )
                hidden = type(part).model_construct(**{**dict(part), link.field: _SENTINEL})
                text = task.prompt(hidden).replace(str(_SENTINEL), f"C{index}")
            else:
                text = task.prompt(part)
            lines += [strip_instruction(text), ""]
        scoring = (
            "Your reward is the mean of the parts' rewards."
            if instance.mode == "mean"
            else "Your answer counts only if every part is feasible, and as optimal only if "
            "every part is optimal."
        )
        lines += [
            "=== Answer ===",
            f"Give one answer per part, in order, inside one list: [answer to part 1, ..., "
            f"answer to part {count}]. Each part's answer has the format that part asks for, "
            "for example [[0, 2, 1, 0], [3, 5]] (this example only shows the format). " + scoring,
            "",
            "Think step by step, then finish your response with the final answer on its own line "
            f"in the form: Answer: [answer 1, ..., answer {count}]",
        ]
        return "\n".join(lines)

    # --- answers ------------------------------------------------------------------------------

    def to_solution(self, value: Any) -> list[Any]:
        items = as_list(value, "list of part answers")
        if len(items) > MAX_PARTS:
            raise AnswerFormatError(f"expected one answer per part, got {len(items)} answers")
        return items

    def shape_parts(self, instance: ComposeInstance, solution: list[Any]) -> list[Any]:
        """Each part's answer in its task's shape; a format error names the part."""
        parts = instance.part_instances
        if len(solution) != len(parts):
            missing = len(solution) < len(parts)
            which = len(solution) + 1 if missing else len(parts) + 1
            raise AnswerFormatError(
                f"expected {len(parts)} part answers, got {len(solution)}: part {which} is "
                + ("missing" if missing else "extra")
            )
        shaped = []
        for index, (part, item) in enumerate(zip(parts, solution, strict=True), start=1):
            try:
                shaped.append(get_task(part.task).to_solution(item))
            except AnswerFormatError as error:
                raise AnswerFormatError(f"part {index} ({part.task}): {error}") from None
        return shaped

    def check(self, instance: ComposeInstance, solution: list[Any]) -> Verdict:
        """Feasible when every part is; the objective counts the parts solved optimally."""
        score = self.score_solution(instance, solution, None, RewardConfig())
        if not score.feasible:
            return Verdict(False, None, score.reason)
        return Verdict(True, score.objective)

    # --- baselines and reference --------------------------------------------------------------

    def random_solution(self, instance: ComposeInstance, rng: np.random.Generator) -> list[Any]:
        return [get_task(p.task).random_solution(p, rng) for p in instance.part_instances]

    def greedy_solution(self, instance: ComposeInstance) -> list[Any]:
        return [get_task(p.task).greedy_solution(p) for p in instance.part_instances]

    def solve(self, instance: ComposeInstance, *, exact: bool, time_limit: float) -> Reference:
        references = [
            get_task(p.task).reference(p, exact=exact, time_limit=time_limit)
            for p in instance.part_instances
        ]
        proven = all(reference.proven_optimal for reference in references)
        count = len(references)
        return Reference(
            objective=count,
            solution=[reference.solution for reference in references],
            proven_optimal=proven,
            method="exact" if proven else "heuristic",
            solver="each part's reference: " + "; ".join(r.solver for r in references),
            bound=count if proven else None,
            gap=0.0 if proven else None,
            certificate={"kind": "parts", "parts": [r.certificate for r in references]},
        )

    # --- scoring ------------------------------------------------------------------------------

    def _part_objectives(
        self, instance: ComposeInstance, reference: Reference | Objective | None
    ) -> list[Objective | None]:
        """Each part's reference objective: from the given reference's witnesses when it has
        them (so ``exact_reference=False`` envs compare against the heuristic), else exact."""
        parts = instance.part_instances
        witnesses = reference.solution if isinstance(reference, Reference) else None
        if isinstance(witnesses, list) and len(witnesses) == len(parts):
            objectives = []
            for part, witness in zip(parts, witnesses, strict=True):
                verdict = get_task(part.task).verify(part, witness)
                objectives.append(verdict.objective if verdict.feasible else None)
            return objectives
        return [get_task(p.task).reference(p).objective for p in parts]

    def score_solution(
        self,
        instance: ComposeInstance,
        solution: Any,
        reference: Reference | Objective | None,
        weights: RewardConfig,
    ) -> Score:
        count = len(instance.part_instances)
        try:
            shaped = self.shape_parts(instance, solution)
        except AnswerFormatError as error:
            return failed_score(weights, False, None, count, str(error))
        scores: list[Score] = []
        objectives = self._part_objectives(instance, reference)
        for part, answer, objective in zip(
            instance.part_instances, shaped, objectives, strict=True
        ):
            task = get_task(part.task)
            verdict = task.check(part, answer)
            if verdict.feasible:
                baseline = task.baseline(part)
                scores.append(
                    verdict_score(weights, verdict, objective, baseline, task.sense, task.ratio)
                )
            else:
                scores.append(
                    failed_score(weights, True, verdict.objective, objective, verdict.reason)
                )
        optimal = sum(score.feasible and score.optimality >= 1.0 for score in scores)
        feasible = all(score.feasible for score in scores)
        reason = "; ".join(
            f"part {index}: {score.reason}"
            for index, score in enumerate(scores, start=1)
            if score.reason
        )
        if instance.mode == "all":
            if not feasible:
                failed = failed_score(weights, True, optimal, count, reason)
                return FamilyScore(**failed.to_dict() | {"parts": tuple(scores)})
            optimality = 1.0 if optimal == count else 0.0
            reward = weights.format_ok + weights.optimality_weight * optimality
            ratio: float | None = min(score.ratio for score in scores)  # type: ignore[type-var]
        else:
            optimality = sum(score.optimality for score in scores) / count
            reward = sum(score.reward for score in scores) / count
            ratio = sum(score.ratio for score in scores) / count if feasible else None  # type: ignore[misc]
        return FamilyScore(
            reward=reward,
            format_ok=True,
            feasible=feasible,
            objective=optimal,
            reference_objective=count,
            ratio=ratio,
            optimality=optimality,
            reason=reason,
            format_reward=weights.format_ok,
            feasibility_reward=reward - weights.format_ok,
            parts=tuple(scores),
        )

    def feedback(self, score: Score) -> str:
        if not isinstance(score, FamilyScore) or not score.parts:
            return super().feedback(score)
        return " | ".join(
            f"Part {index}: " + get_task_feedback(part)
            for index, part in enumerate(score.parts, start=1)
        )


def get_task_feedback(score: Score) -> str:
    """One part's feedback without its task (the task-specific wording is not needed)."""
    if not score.feasible:
        return f"infeasible: {score.reason}"
    return "optimal" if score.optimality >= 1.0 else f"feasible, objective {score.objective}"


def _proven_optimum(instance: Instance) -> int:
    """The certified optimum that parameterises the next link (0 when no answer is feasible)."""
    reference = get_task(instance.task).reference(instance)
    if not reference.proven_optimal:
        raise RuntimeError(
            f"cannot chain on an unproven {instance.task} reference (gap {reference.gap})"
        )
    return int(reference.objective or 0)


_CHAIN = re.compile(r"chain([0-9]+)", re.IGNORECASE)
_MIXED = re.compile(r"mixed([0-9]+)", re.IGNORECASE)


def compose_task(spec: str) -> ComposeTask:
    """The composition task for the part of a name after ``Compose-`` (see module docstring)."""
    if match := _CHAIN.fullmatch(spec):
        depth = int(match.group(1))
        if not 2 <= depth <= MAX_DEPTH:
            raise KeyError(f"chain depth must be 2..{MAX_DEPTH}, got {depth}")
        return ComposeTask(f"Compose-Chain{depth}", chain=True, count=depth)
    if match := _MIXED.fullmatch(spec):
        count = int(match.group(1))
        if not 2 <= count <= len(list_tasks()):
            raise KeyError(f"Mixed needs 2..{len(list_tasks())} parts, got {count}")
        return ComposeTask(f"Compose-Mixed{count}", chain=False, count=count)
    chain = spec.lower().startswith("chain-")
    names = re.split(r"[.+]", spec[len("chain-") :] if chain else spec)
    tasks = tuple(get_task(name).name for name in names)
    if not 2 <= len(tasks) <= MAX_PARTS:
        raise KeyError(f"a composition needs 2..{MAX_PARTS} parts, got {len(tasks)}")
    if chain:
        for name in tasks[1:]:
            if name not in SUCCESSORS:
                raise KeyError(f"{name} cannot follow a link; use one of {', '.join(SUCCESSORS)}")
    joined = ".".join(tasks)
    return ComposeTask(
        f"Compose-Chain-{joined}" if chain else f"Compose-{joined}", chain=chain, tasks=tasks
    )
