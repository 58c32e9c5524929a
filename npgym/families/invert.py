"""Inverse problems: write an instance with a stated property (``npgym/Invert-<Task>-<tier>``).

The model answers with the canonical instance fields of the base task as one JSON object, and
npgym checks the property exactly with the base task's own exact solvers. Properties:

- ``optimum`` (every task): exactly ``size`` items (cities, vertices, numbers, subsets,
  meetings) and an optimum of exactly ``k``;
- ``unique`` (Knapsack): exactly ``size`` items, and exactly one optimal selection, which uses
  exactly ``k`` items (checked by enumerating every selection);
- ``greedy_gap`` (TSP, Knapsack, SetCover; "greedy fails on it"): exactly ``size`` items, and
  the simple greedy heuristic described in the prompt, with its tie rule, ends strictly worse
  than the optimum.

Each instance draws one property of its task and its parameters from a witness: a small
instance of the base task (drawn at difficulty 0.1 + half the tier's, so from the easy tier's
sizes at ``easy`` to the medium tier's at ``benchmark``; searched among such draws
for the greedy and unique properties) for which the exact solver proves the property. The
witness is the reference answer, so every reference is proven.

Caps, stated in the prompt, keep checking bounded and every answer settled: an answer must be
one JSON object of at most :data:`MAX_ANSWER_CHARS` characters, nested at most
:data:`npgym.answer.MAX_JSON_DEPTH` deep (counted before decoding, so the verdict never depends
on the caller's stack), with exactly the canonical fields, at most :data:`MAX_NUMBERS`
integers, each of magnitude at most :data:`MAX_MAGNITUDE`, a declared ``n`` or
``universe_size`` of at most :data:`MAX_SIZE`, and the task's own caps
(``InverseProblem.over_caps``: a MeetingScheduling answer has at most 8 rooms, 12 attendees and a
slot of at least 30 minutes); anything else is a format failure, read in time linear in the
answer's length before any solver runs. Its size must equal the stated one, which is at most
the task's ``InverseProblem.size_cap`` (witnesses are drawn within it at every difficulty). What
depends on the base task comes from its ``inverse`` capability (:mod:`npgym.inverse`). Within these
caps the optimum is settled exactly, within 1 CPU second and 100 MB: by a routine whose work is
fixed by the size (:mod:`npgym.heuristics.small_exact`: Held-Karp, every bisection, dynamic
programming, every selection of subsets; the longest-cycle dynamic programme over vertex
subsets) for TSP, MinBisection, Knapsack, SubsetSum, SetCover and HamiltonianCycle, and by the
task's exact solver for the others, whose worst answers within the caps
(searched for by an adversarial test) stay far below the budget.

Reward: format (+1 / -1), then validity: an answer that is not a valid instance of the task
(the base instance validators) or has the wrong size is infeasible; a valid instance scores
``1 + 1`` when the property holds (objective 1) and ``1 + 0`` when it does not (objective 0).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, get_args, get_origin

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from npgym.answer import AnswerFormatError, JSONDepthError, check_json_depth
from npgym.capabilities import capability
from npgym.config import TIER_DIFFICULTY
from npgym.families.base import FamilyConfig, FamilyTask, family_tiers
from npgym.instance import Instance
from npgym.inverse import InverseProblem
from npgym.registry import get_task
from npgym.results import Objective, Reference, Score, Verdict
from npgym.reward import RewardConfig, failed_score
from npgym.task import Task

MAX_ANSWER_CHARS = 20_000
MAX_NUMBERS = 2_000
MAX_MAGNITUDE = 10**6
MAX_SIZE = 100
"""Largest ``n`` or ``universe_size`` an answer may declare."""
SIZE_FIELDS = ("n", "universe_size")
CHECK_TIME_LIMIT = 0.8
"""Work budget, in nominal seconds, of a base task's exact solver on one answer; within the caps
none comes near it (the check must stay under 1 s)."""
_SEARCH_TRIES = 60
_SMALLER_WITNESS = 0.7
"""Factor applied to the witness difficulty after a draw over the size cap."""
_GREEDY_STEP = 0.02
"""Witness difficulty added per failed try of a ``greedy_gap`` search."""


class InvertConfig(FamilyConfig):
    """Only the level of the witness instances (0.1 + half the family tier's difficulty)."""


class InvertInstance(Instance):
    """The property to realise and its parameters: ``size`` and, for some, ``k``."""

    property: str
    size: int = Field(ge=1, le=MAX_NUMBERS, strict=True)
    k: int | None = Field(None, strict=True)
    witness: dict[str, Any]
    """The proven witness (the reference answer); never shown in the prompt."""

    canonical_fields: ClassVar[tuple[str, ...]] = ("property", "size", "k")
    meta_fields: ClassVar[tuple[str, ...]] = ("witness",)


def _walk(value: Any, budget: list[int]) -> None:
    """Reject anything but objects, lists and integers; count the integers against the cap."""
    if isinstance(value, bool) or not isinstance(value, (int, list, dict)):
        raise AnswerFormatError(f"only integers, lists and objects are allowed, got {value!r:.20}")
    if isinstance(value, int):
        if abs(value) > MAX_MAGNITUDE:
            raise AnswerFormatError(f"integer {value} exceeds the cap of {MAX_MAGNITUDE}")
        budget[0] -= 1
        if budget[0] < 0:
            raise AnswerFormatError(f"more than {MAX_NUMBERS} integers")
        return
    for item in value.values() if isinstance(value, dict) else value:
        _walk(item, budget)


_TUPLE_NAMES = {2: "pair", 3: "triple"}


def json_kind(annotation: Any, plural: bool = False) -> str:
    """What a field of this type is in JSON, in words: ``an integer``, ``a list of pairs of
    integers``, ``a list of objects``... (``plural``: ``integers``, ``lists of integers``)."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    args = get_args(annotation)
    if annotation is int:
        return "integers" if plural else "an integer"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        inner = " and ".join(
            f'"{name}" ({json_kind(field.annotation)})'
            for name, field in annotation.model_fields.items()
        )
        return ("objects" if plural else "an object") + f" with the fields {inner}"
    if get_origin(annotation) in (tuple, list) and args:
        if (len(args) == 2 and args[1] is Ellipsis) or get_origin(annotation) is list:
            return ("lists of " if plural else "a list of ") + json_kind(args[0], plural=True)
        if all(json_kind(arg) == "an integer" for arg in args):
            name = _TUPLE_NAMES.get(len(args), f"list of {len(args)}")
            return (f"{name}s of " if plural else f"a {name} of ") + "integers"
    raise TypeError(f"no JSON description for the instance field type {annotation!r}")


def greedy_objective(task: Task, instance: Instance) -> Objective | None:
    """The objective of the task's simple greedy heuristic (the one the prompt describes)."""
    verdict = task.verify(instance, task.greedy_solution(instance))
    return verdict.objective if verdict.feasible else None


class InvertTask(FamilyTask[InvertInstance, InvertConfig]):
    """Write an instance of a base task with a stated property (see the module docstring)."""

    sense = "max"
    objective_name = "property met (1 or 0)"
    instance_type = InvertInstance
    tiers: ClassVar[dict[str, InvertConfig]] = family_tiers(InvertConfig)

    def __init__(self, base_name: str) -> None:
        self.base: Task = get_task(base_name)
        self.problem: InverseProblem = capability(self.base, "inverse")
        self.name = f"Invert-{self.base.name}"  # type: ignore[misc]  # one object per family name
        self.category = self.base.category  # type: ignore[misc]  # one object per family name

    # --- generation ---------------------------------------------------------------------------

    def _witness_level(self, config: InvertConfig) -> float:
        if config.part_difficulty is not None:
            return 0.1 + config.part_difficulty / 2
        return 0.1 + TIER_DIFFICULTY[config.part_tier or "medium"] / 2

    def build(self, rng: np.random.Generator, config: InvertConfig) -> dict[str, Any]:
        prop = str(rng.choice(self.problem.properties))
        level = self._witness_level(config)
        for tries in range(_SEARCH_TRIES):
            # Greedy is optimal on most small instances: each failed try draws a larger one.
            difficulty = min(1.0, level + tries * _GREEDY_STEP) if prop == "greedy_gap" else level
            witness = self._draw(prop, int(rng.integers(2**63)), difficulty)
            while not self._within_caps(witness):  # smaller witnesses until one fits
                if difficulty == 0.0:
                    raise RuntimeError(f"{self.base.name} draws exceed the caps at difficulty 0")
                difficulty = difficulty * _SMALLER_WITNESS if difficulty > 0.01 else 0.0
                witness = self._draw(prop, int(rng.integers(2**63)), difficulty)
            holds, _, k = self.holds(prop, witness, None, time_limit=None)
            if holds:
                witness_json = _fields(witness)
                size = self.problem.size(witness)
                return {"property": prop, "size": size, "k": k, "witness": witness_json}
        raise RuntimeError(f"no {self.base.name} witness for {prop} in {_SEARCH_TRIES} draws")

    def _within_caps(self, witness: Instance) -> bool:
        """Whether an answer like ``witness`` would be within the caps the prompt states."""
        inverse = self.problem
        over_caps = inverse.over_caps is not None and inverse.over_caps(_fields(witness))
        return inverse.size(witness) <= inverse.size_cap and not over_caps

    def _draw(self, prop: str, seed: int, difficulty: float) -> Instance:
        if prop != "unique":
            return self.base.generate(seed, difficulty=difficulty)
        assert self.problem.unique is not None  # "unique" is drawn only where it is declared
        fields = self.problem.unique.draw(np.random.default_rng(seed))
        return self.base.instance_type.model_validate(fields)

    # --- the property -------------------------------------------------------------------------

    def holds(
        self, prop: str, instance: Instance, k: int | None, time_limit: float | None
    ) -> tuple[bool, str, int | None]:
        """Whether ``instance`` has the property (with ``k``; ``None`` reads it off), why not,
        and the ``k`` it has. Uses the exact solver within ``time_limit`` seconds."""
        if prop == "unique" and self.problem.unique is not None:
            optima = self.problem.unique.optimal_selections(instance)
            count = len(optima[0])
            if len(optima) != 1:
                return False, f"{len(optima)} different selections are optimal", count
            if k is not None and count != k:
                return False, f"the optimal selection uses {count} items, not {k}", count
            return True, "", count
        settled, optimum = self.optimum(instance, time_limit or 60.0)
        if not settled:
            return False, "the exact solver could not settle the optimum in time", None
        if prop == "optimum":
            if optimum is None:
                return False, "the instance has no feasible answer", None
            if k is not None and optimum != k:
                return False, f"the optimum is {optimum}, not {k}", int(optimum)
            return True, "", int(optimum)
        greedy = greedy_objective(self.base, instance)
        if greedy is None or optimum is None:
            return False, "the greedy heuristic finds no feasible answer", None
        if self.base.ratio(greedy, optimum) >= 1.0:
            return False, f"the greedy heuristic reaches the optimum {optimum}", None
        return True, "", None

    def optimum(self, instance: Instance, time_limit: float) -> tuple[bool, Objective | None]:
        """Whether the optimum of ``instance`` is settled, and the optimum (``None`` when the
        instance has no feasible answer): by a bounded-work routine where the task has one, else
        by the base task's exact solver within ``time_limit`` nominal seconds."""
        exact = self.problem.exact_optimum
        if exact is not None:
            optimum = exact(instance)
            return True, None if optimum < 0 else optimum
        reference = self.base.solve(instance, exact=True, time_limit=time_limit)
        return reference.proven_optimal, reference.objective

    # --- prompt -------------------------------------------------------------------------------

    def prompt(self, instance: InvertInstance) -> str:
        name, inverse = self.base.name, self.problem
        unit = inverse.unit
        if instance.property == "optimum":
            goal = f"whose optimum is exactly {instance.k}, where the optimum is {inverse.optimum}"
        elif instance.property == "unique":
            goal = (
                f"with exactly one optimal selection, and that selection uses exactly "
                f"{instance.k} items, where an optimal selection is one reaching "
                f"{inverse.optimum}"
            )
        else:
            goal = (
                f"on which this greedy heuristic ends strictly worse than the optimum "
                f"({inverse.optimum}): {inverse.greedy}"
            )
        fields = self.base.instance_type.model_fields
        kinds = ", ".join(
            f'"{name}" ({json_kind(fields[name].annotation)})'
            for name in self.base.instance_type.canonical_fields
        )
        return "\n".join(
            [
                f"Inverse {name} problem.",
                "",
                f"Write a {name} instance with exactly {instance.size} {unit} {goal}.",
                "",
                f"Instance fields: {inverse.fields}.",
                "",
                f"Limits: at most {MAX_ANSWER_CHARS} characters, at most {MAX_NUMBERS} "
                f"integers in all, every integer between -{MAX_MAGNITUDE} and {MAX_MAGNITUDE}, "
                f"n or universe_size at most {MAX_SIZE}{inverse.extra_limits}; "
                f"exactly {instance.size} {unit}.",
                "",
                f"Answer format: one JSON object on one line with exactly these fields: {kinds}.",
                "",
                "Think step by step, then finish your response with the final answer on its own "
                "line in the form: Answer: {...}",
            ]
        )

    # --- answers ------------------------------------------------------------------------------

    def parse_segment(self, segment: str) -> Any:
        window = segment[:MAX_ANSWER_CHARS]
        if not window.startswith("{"):
            raise AnswerFormatError("expected a JSON object starting with '{'")
        try:
            check_json_depth(window, first_value=True)  # the bound decides, not the stack
        except JSONDepthError as error:
            raise AnswerFormatError(str(error)) from None
        try:
            value, _ = json.JSONDecoder().raw_decode(window)
        except (ValueError, RecursionError) as error:
            reason = getattr(error, "msg", type(error).__name__)
            raise AnswerFormatError(
                f"not a JSON object within {MAX_ANSWER_CHARS} characters ({reason})"
            ) from None
        return value

    def to_solution(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise AnswerFormatError("expected a JSON object of instance fields")
        wanted = set(self.base.instance_type.canonical_fields)
        if set(value) != wanted:
            raise AnswerFormatError(f"expected exactly the fields {', '.join(sorted(wanted))}")
        _walk(value, [MAX_NUMBERS])
        for field in SIZE_FIELDS:
            if (field in value and not isinstance(value[field], int)) or value.get(
                field, 0
            ) > MAX_SIZE:
                raise AnswerFormatError(f"{field} must be an integer of at most {MAX_SIZE}")
        over = self.problem.over_caps(value) if self.problem.over_caps is not None else ""
        if over:
            raise AnswerFormatError(over)
        return value

    def format_answer(self, solution: Any) -> str:
        return "Answer: " + json.dumps(solution, separators=(",", ":"))

    def check(self, instance: InvertInstance, solution: dict[str, Any]) -> Verdict:
        """Infeasible when not a valid instance of the stated size; objective 1 when the
        property holds, else 0 with the reason."""
        try:
            written = self.base.instance_type.model_validate(solution)
        except ValidationError as error:
            detail = error.errors()[0]
            return Verdict(False, None, f"not a valid {self.base.name} instance: {detail['msg']}")
        size = self.problem.size(written)
        if size != instance.size:
            return Verdict(False, None, f"{size} {self.problem.unit}, not {instance.size}")
        holds, reason, _ = self.holds(instance.property, written, instance.k, CHECK_TIME_LIMIT)
        return Verdict(True, int(holds), reason)

    # --- baselines and reference --------------------------------------------------------------

    def random_solution(self, instance: InvertInstance, rng: np.random.Generator) -> Any:
        """A random instance of the base task of the right size (rarely has the property)."""
        difficulty = self._witness_level(InvertConfig.model_validate(instance.config or {}))
        for _ in range(_SEARCH_TRIES):
            drawn = self.base.generate(int(rng.integers(2**63)), difficulty=difficulty)
            if self.problem.size(drawn) == instance.size:
                break
        return _fields(drawn)

    def greedy_solution(self, instance: InvertInstance) -> Any:
        """The witness with one change: its first number increased by one (a near miss)."""
        text = json.dumps(instance.witness)
        head, digits, tail = _split_first_number(text)
        return json.loads(f"{head}{int(digits) + 1}{tail}")

    def solve(self, instance: InvertInstance, *, exact: bool, time_limit: float) -> Reference:
        return Reference(
            objective=1,
            solution=instance.witness,
            proven_optimal=True,
            method="exact",
            solver=f"witness with the property proven by the exact {self.base.name} solver",
            bound=1,
            gap=0.0,
        )

    def score_solution(
        self,
        instance: InvertInstance,
        solution: Any,
        reference: Reference | Objective | None,
        weights: RewardConfig,
    ) -> Score:
        verdict = self.check(instance, solution)
        if not verdict.feasible:
            return failed_score(weights, True, None, 1, verdict.reason)
        # A valid instance earns the format term; the property earns the optimality term. The
        # base tasks' "empty answer" rule does not apply: objective 0 means the property fails.
        optimality = float(verdict.objective or 0)
        feasibility_reward = weights.optimality_weight * optimality
        return Score(
            reward=weights.format_ok + feasibility_reward,
            format_ok=True,
            feasible=True,
            objective=verdict.objective,
            reference_objective=1,
            ratio=optimality,
            optimality=optimality,
            reason=verdict.reason,
            format_reward=weights.format_ok,
            feasibility_reward=feasibility_reward,
        )

    def feedback(self, score: Score) -> str:
        if score.format_ok and score.feasible and score.optimality < 1.0:
            return f"Valid instance, but the property does not hold: {score.reason}."
        if score.format_ok and score.feasible:
            return "Valid instance with the property."
        return super().feedback(score)


def _fields(instance: Instance) -> dict[str, Any]:
    """The canonical fields of an instance as JSON values (the answer format)."""
    return json.loads(instance.model_dump_json(include=set(instance.canonical_fields)))


def _split_first_number(text: str) -> tuple[str, str, str]:
    start = next(i for i, c in enumerate(text) if c.isdigit())
    end = start
    while end < len(text) and text[end].isdigit():
        end += 1
    return text[:start], text[start:end], text[end:]
