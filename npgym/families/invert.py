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
one JSON object of at most :data:`MAX_ANSWER_CHARS` characters, with exactly the canonical
fields, at most :data:`MAX_NUMBERS` integers, each of magnitude at most :data:`MAX_MAGNITUDE`, a
declared ``n`` or ``universe_size`` of at most :data:`MAX_SIZE`, a MeetingScheduling answer at
most :data:`MAX_ROOMS` rooms, :data:`MAX_ATTENDEES` attendees and a slot of at least
:data:`MIN_SLOT` minutes; anything else is a format failure, read in time linear in the
answer's length before any solver runs. Its size must equal the stated one, which is at most
the task's :data:`SIZE_CAP` (witnesses are drawn within it at every difficulty). Within these
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
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, ValidationError

from npgym.answer import AnswerFormatError
from npgym.config import TIER_DIFFICULTY
from npgym.families.base import FamilyConfig, FamilyTask, family_tiers
from npgym.heuristics import small_exact
from npgym.heuristics.hamiltonian_cycle import longest_cycle_dp
from npgym.instance import Instance
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
MAX_ROOMS = 8
"""Most rooms of a MeetingScheduling answer."""
MAX_ATTENDEES = 12
"""Most attendees (availability rows) of a MeetingScheduling answer."""
MIN_SLOT = 30
"""Shortest start grid of a MeetingScheduling answer, in minutes (at most 20 starts a day)."""
SIZE_CAP: dict[str, int] = {
    "TSP": 15,
    "MaxClique": 30,
    "MaxIndependentSet": 30,
    "GraphColoring": 20,
    "HamiltonianCycle": 16,
    "MinBisection": 24,
    "Knapsack": 40,
    "SubsetSum": 30,
    "SetCover": 20,
    "MeetingScheduling": 8,
}
"""Largest stated size per base task: the exact check of any answer of this size settles within
the budget (see the module docstring)."""
_SEARCH_TRIES = 60
_SMALLER_WITNESS = 0.7
_GREEDY_STEP = 0.02
"""Witness difficulty added per failed try of a ``greedy_gap`` search."""
"""Factor applied to the witness difficulty after a draw over the size cap."""
_UNIQUE_ITEMS = 8

SIZE: dict[str, tuple[str, Callable[[Any], int]]] = {
    "TSP": ("cities", lambda i: i.n),
    "MaxClique": ("vertices", lambda i: i.n),
    "MaxIndependentSet": ("vertices", lambda i: i.n),
    "GraphColoring": ("vertices", lambda i: i.n),
    "HamiltonianCycle": ("vertices", lambda i: i.n),
    "MinBisection": ("vertices", lambda i: i.n),
    "Knapsack": ("items", lambda i: i.n),
    "SubsetSum": ("numbers", lambda i: i.n),
    "SetCover": ("subsets", lambda i: len(i.subsets)),
    "MeetingScheduling": ("meetings", lambda i: i.n_meetings),
}
"""What the stated size counts, and how to read it from an instance."""

_GRAPH = (
    '"n": the number of vertices (numbered 0 to n-1), "edges": a list of [u, v] pairs with '
    "u != v, each pair at most once"
)
FIELDS: dict[str, str] = {
    "TSP": '"distances": an n x n symmetric matrix of non-negative integers, 0 on the diagonal',
    "MaxClique": _GRAPH,
    "MaxIndependentSet": _GRAPH,
    "GraphColoring": _GRAPH,
    "HamiltonianCycle": _GRAPH + " (the graph must contain at least one cycle)",
    "MinBisection": '"n": the number of vertices (at least 2), "edges": a list of [u, v, w] '
    "triples, w a positive integer weight, each pair at most once",
    "Knapsack": '"weights": positive integers, "values": non-negative integers (one per item), '
    '"capacity": a non-negative integer',
    "SubsetSum": '"numbers": integers in 1..100000, "target": an integer in 1..100000 that some '
    "subset of the numbers sums to",
    "SetCover": '"universe_size": u >= 1, "subsets": a list of lists of distinct elements in '
    "0..u-1",
    "MeetingScheduling": '"meetings": a list of {"attendees": [attendee numbers], "duration": '
    'minutes}, "availability": for each attendee a sorted list of disjoint, non-touching '
    '[start, end] free intervals in minutes within 480..1080, "rooms": room capacities, '
    '"slot": the start-time grid in minutes (480 must be a multiple of it)',
}
OPTIMUM: dict[str, str] = {
    "TSP": "the length of a shortest closed tour through every city",
    "MaxClique": "the size of a largest clique (vertices that are pairwise joined)",
    "MaxIndependentSet": "the size of a largest independent set (no two vertices joined)",
    "GraphColoring": "the chromatic number (fewest colours with adjacent vertices different)",
    "HamiltonianCycle": "the number of vertices on a longest simple cycle",
    "MinBisection": "the least total weight of the edges cut by a split of the vertices into "
    "two halves whose sizes differ by at most one",
    "Knapsack": "the largest total value of items whose total weight is at most the capacity",
    "SubsetSum": "the largest number of distinct indices whose numbers sum exactly to the target",
    "SetCover": "the fewest subsets whose union is the whole universe",
    "MeetingScheduling": "the largest total attendee count of meetings that can be scheduled "
    "(each in a room with enough capacity, at a start on the slot grid, every attendee free "
    "for the whole meeting, no room or attendee double-booked; the day is 480..1080)",
}
GREEDY: dict[str, str] = {
    "TSP": "nearest neighbour: start at city 0 and always go to the closest unvisited city "
    "(the lowest-numbered one on ties), then return to city 0",
    "Knapsack": "ratio greedy: go through the items by value/weight, highest first (lower "
    "number first on ties), taking each item that still fits; then, if the single most "
    "valuable item that fits on its own (lowest number on ties) is worth more than that "
    "selection, take it alone instead",
    "SetCover": "greedy cover: repeatedly take the subset that covers the most elements not "
    "yet covered (the lowest-numbered one on ties); then go through the taken subsets from the "
    "last taken to the first, dropping each one whose elements are all covered at least twice",
}
PROPERTIES: dict[str, tuple[str, ...]] = {
    name: ("optimum", *(("greedy_gap",) if name in GREEDY else ())) for name in SIZE
}
PROPERTIES["Knapsack"] = ("optimum", "unique", "greedy_gap")


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


def greedy_objective(task: Task, instance: Instance) -> Objective | None:
    """The objective of the task's simple greedy heuristic (the one the prompt describes)."""
    verdict = task.verify(instance, task.greedy_solution(instance))
    return verdict.objective if verdict.feasible else None


def optimal_selections(instance: Any) -> list[tuple[int, ...]]:
    """Every optimal selection of a small Knapsack instance, by enumeration."""
    n = instance.n
    masks = np.arange(1 << n, dtype=np.int64)
    bits = (masks[:, None] >> np.arange(n)) & 1
    weight = bits @ instance.weight_array
    value = np.where(weight <= instance.capacity, bits @ instance.value_array, -1)
    best = value.max()
    return [tuple(np.flatnonzero(bits[m]).tolist()) for m in np.flatnonzero(value == best)]


class InvertTask(FamilyTask[InvertInstance, InvertConfig]):
    """Write an instance of a base task with a stated property (see the module docstring)."""

    sense = "max"
    objective_name = "property holds"
    instance_type = InvertInstance
    tiers: ClassVar[dict[str, InvertConfig]] = family_tiers(InvertConfig)

    def __init__(self, base_name: str) -> None:
        self.base: Task = get_task(base_name)
        if self.base.name not in SIZE:
            raise KeyError(
                f"no inverse problems are defined for task {self.base.name!r} (they exist for "
                f"{', '.join(SIZE)})"
            )
        self.name = f"Invert-{self.base.name}"  # type: ignore[misc]  # one object per family name
        self.category = self.base.category  # type: ignore[misc]  # one object per family name

    # --- generation ---------------------------------------------------------------------------

    def _witness_level(self, config: InvertConfig) -> float:
        if config.part_difficulty is not None:
            return 0.1 + config.part_difficulty / 2
        return 0.1 + TIER_DIFFICULTY[config.part_tier or "medium"] / 2

    def build(self, rng: np.random.Generator, config: InvertConfig) -> dict[str, Any]:
        prop = str(rng.choice(PROPERTIES[self.base.name]))
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
                size = SIZE[self.base.name][1](witness)
                return {"property": prop, "size": size, "k": k, "witness": witness_json}
        raise RuntimeError(f"no {self.base.name} witness for {prop} in {_SEARCH_TRIES} draws")

    def _within_caps(self, witness: Instance) -> bool:
        """Whether an answer like ``witness`` would be within the caps the prompt states."""
        size = SIZE[self.base.name][1](witness)
        return size <= SIZE_CAP[self.base.name] and not _over_caps(_fields(witness))

    def _draw(self, prop: str, seed: int, difficulty: float) -> Instance:
        if prop != "unique":
            return self.base.generate(seed, difficulty=difficulty)
        rng = np.random.default_rng(seed)
        weights = rng.integers(1, 20, size=_UNIQUE_ITEMS)
        values = rng.integers(1, 30, size=_UNIQUE_ITEMS)
        capacity = int(weights.sum() // 2)
        fields = {"weights": weights.tolist(), "values": values.tolist(), "capacity": capacity}
        return self.base.instance_type.model_validate(fields)

    # --- the property -------------------------------------------------------------------------

    def holds(
        self, prop: str, instance: Instance, k: int | None, time_limit: float | None
    ) -> tuple[bool, str, int | None]:
        """Whether ``instance`` has the property (with ``k``; ``None`` reads it off), why not,
        and the ``k`` it has. Uses the exact solver within ``time_limit`` seconds."""
        if prop == "unique":
            optima = optimal_selections(instance)
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
        exact = _SMALL_EXACT.get(self.base.name)
        if exact is not None:
            optimum = exact(instance)
            return True, None if optimum < 0 else optimum
        reference = self.base.solve(instance, exact=True, time_limit=time_limit)
        return reference.proven_optimal, reference.objective

    # --- prompt -------------------------------------------------------------------------------

    def prompt(self, instance: InvertInstance) -> str:
        name = self.base.name
        unit = SIZE[name][0]
        if instance.property == "optimum":
            goal = f"whose optimum is exactly {instance.k}, where the optimum is {OPTIMUM[name]}"
        elif instance.property == "unique":
            goal = (
                f"with exactly one optimal selection, and that selection uses exactly "
                f"{instance.k} items, where an optimal selection is one reaching "
                f"{OPTIMUM[name]}"
            )
        else:
            goal = (
                f"on which this greedy heuristic ends strictly worse than the optimum "
                f"({OPTIMUM[name]}): {GREEDY[name]}"
            )
        example = json.dumps(dict.fromkeys(self.base.instance_type.canonical_fields, "..."))
        return "\n".join(
            [
                f"Inverse {name} problem.",
                "",
                f"Write a {name} instance with exactly {instance.size} {unit} {goal}.",
                "",
                f"Instance fields: {FIELDS[name]}.",
                "",
                f"Limits: at most {MAX_ANSWER_CHARS} characters, at most {MAX_NUMBERS} "
                f"integers in all, every integer between -{MAX_MAGNITUDE} and {MAX_MAGNITUDE}, "
                f"n or universe_size at most {MAX_SIZE}{_EXTRA_LIMITS.get(name, '')}; "
                f"exactly {instance.size} {unit}.",
                "",
                "Answer format: one JSON object with exactly these fields and integer values, "
                f"on one line, for example {example} with the dots replaced.",
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
        over = _over_caps(value)
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
        unit, size_of = SIZE[self.base.name]
        if size_of(written) != instance.size:
            return Verdict(False, None, f"{size_of(written)} {unit}, not {instance.size}")
        holds, reason, _ = self.holds(instance.property, written, instance.k, CHECK_TIME_LIMIT)
        return Verdict(True, int(holds), reason)

    # --- baselines and reference --------------------------------------------------------------

    def random_solution(self, instance: InvertInstance, rng: np.random.Generator) -> Any:
        """A random instance of the base task of the right size (rarely has the property)."""
        difficulty = self._witness_level(InvertConfig.model_validate(instance.config or {}))
        for _ in range(_SEARCH_TRIES):
            drawn = self.base.generate(int(rng.integers(2**63)), difficulty=difficulty)
            if SIZE[self.base.name][1](drawn) == instance.size:
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


def _over_caps(fields: dict[str, Any]) -> str:
    """What a MeetingScheduling answer exceeds among the stated caps ("" when nothing; other
    tasks' caps are checked elsewhere). Reads only list lengths and one integer."""
    if "meetings" not in fields:
        return ""
    rooms, availability, slot = fields.get("rooms"), fields.get("availability"), fields.get("slot")
    if isinstance(rooms, list) and len(rooms) > MAX_ROOMS:
        return f"at most {MAX_ROOMS} rooms"
    if isinstance(availability, list) and len(availability) > MAX_ATTENDEES:
        return f"at most {MAX_ATTENDEES} attendees"
    if isinstance(slot, int) and slot < MIN_SLOT:
        return f"slot must be at least {MIN_SLOT} minutes"
    return ""


_EXTRA_LIMITS = {
    "MeetingScheduling": f", at most {MAX_ROOMS} rooms, at most {MAX_ATTENDEES} attendees, "
    f"slot at least {MIN_SLOT}",
}
"""Caps the prompt states beyond the common ones."""


def _int64(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


_SMALL_EXACT: dict[str, Callable[[Any], int]] = {
    "TSP": lambda i: int(small_exact.tsp_optimum(_int64(i.distances))),
    "MinBisection": lambda i: int(
        small_exact.min_bisection_optimum(i.n, _int64(i.edges).reshape(-1, 3))
    ),
    "Knapsack": lambda i: int(
        small_exact.knapsack_optimum(_int64(i.weights), _int64(i.values), i.capacity)
    ),
    "SubsetSum": lambda i: int(small_exact.subset_sum_optimum(_int64(i.numbers), i.target)),
    "HamiltonianCycle": lambda i: len(longest_cycle_dp(i.adjacency)) or -1,
    "SetCover": lambda i: int(
        small_exact.set_cover_optimum(
            i.universe_size, small_exact.subset_bits(i.universe_size, i.subsets)
        )
    ),
}
"""Bounded-work exact optima (see :mod:`npgym.heuristics.small_exact`), by base task."""


def _fields(instance: Instance) -> dict[str, Any]:
    """The canonical fields of an instance as JSON values (the answer format)."""
    return json.loads(instance.model_dump_json(include=set(instance.canonical_fields)))


def _split_first_number(text: str) -> tuple[str, str, str]:
    start = next(i for i, c in enumerate(text) if c.isdigit())
    end = start
    while end < len(text) and text[end].isdigit():
        end += 1
    return text[:start], text[start:end], text[end:]
