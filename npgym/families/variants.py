"""Variants that keep the optimum: the same problem, relabelled, reordered and rescaled.

``variant(instance, seed)`` returns a :class:`Variant`: a new instance of the same task whose
optimal solutions are exactly the images of the original's, and the map back. Transformations
per task (each provably keeps the set of optimal solutions, up to the relabelling):

- graphs (MaxClique, MaxIndependentSet, GraphColoring, HamiltonianCycle, MinBisection): the
  vertices are relabelled by a random permutation, so the adjacency lines come in a new order
  (a planted colouring, cycle or clique cover is relabelled with them);
  MinBisection also scales every edge weight by a factor 1..3 (every cut scales by it);
- TSP: cities relabelled; every distance scaled by a factor 1..3 and then a constant 0..20 added
  to every distance between two different cities (every tour has n edges, so every tour length
  becomes ``factor * length + n * constant``); the coordinates of a Euclidean instance are
  dropped when the distances change (they would no longer match) and otherwise with probability
  1/2, which changes the presentation from points plus matrix to the matrix alone (the only
  choice of presentation a task's prompt offers today);
- Knapsack: items relabelled; values scaled by a factor 1..3 (the objective scales by it),
  weights and capacity by another factor 1..3 (feasibility is unchanged);
- SubsetSum: numbers relabelled; numbers and target scaled by a factor 1..3 when the target
  stays within the instance limit (which subsets reach the target is unchanged);
- SetCover: subsets relabelled and elements relabelled;
- MeetingScheduling: meetings, rooms and attendees relabelled.

The variant's objective is ``scale * original + shift`` (:attr:`Variant.scale`,
:attr:`Variant.shift`); :meth:`Variant.to_original` maps a solution of the variant (in the task's
shape) to the original, and :meth:`Variant.score_on_original` scores a completion written for
the variant on the original instance. Ids outside the valid range are passed through unchanged,
so an answer that names a vertex that does not exist is still infeasible on the original.

Also here: :func:`expand_variants` (k deterministic variants per instance, the training-data
multiplier behind ``bench build --variants k``) and :func:`consistency` (the share of instances
whose verdicts agree across their variants, the robustness metric of ``npgym eval``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from npgym.answer import AnswerFormatError, extract_answer, parse_value
from npgym.instance import Instance
from npgym.registry import get_task
from npgym.results import Objective, Score
from npgym.reward import RewardConfig
from npgym.seeding import derive_seed
from npgym.tasks.knapsack.instance import MAX_CAPACITY, MAX_VALUE, MAX_WEIGHT
from npgym.tasks.min_bisection.instance import MAX_WEIGHT as MAX_EDGE_WEIGHT
from npgym.tasks.subset_sum.instance import MAX_VALUE as MAX_SUBSET_VALUE
from npgym.tasks.tsp.instance import MAX_DISTANCE

Mapper = Callable[[Any], Any]


@dataclass(frozen=True)
class Variant:
    """A transformed instance, the original, and how to map answers and objectives back."""

    instance: Instance
    original: Instance
    to_original: Mapper
    """Map a solution of :attr:`instance` (in the task's solution shape) to :attr:`original`."""
    scale: int = 1
    shift: int = 0
    """Every feasible solution's objective on the variant is ``scale * original + shift``."""
    transforms: tuple[str, ...] = ()

    def objective_to_original(self, value: Objective | None) -> Objective | None:
        """The original objective of a solution whose variant objective is ``value``."""
        if value is None:
            return None
        original, remainder = divmod(value - self.shift, self.scale)
        if remainder:
            raise ValueError(f"{value} is not {self.scale} * objective + {self.shift}")
        return original

    def score_on_original(self, completion: str, reward: RewardConfig | None = None) -> Score:
        """Score a completion written for the variant on the original instance (never raises).

        The answer is read in the variant's terms, mapped back and scored by the task's own
        ``score`` on the original; an answer that cannot be read scores as a format failure.
        """
        task = get_task(self.original.task)
        try:
            solution = task.to_solution(parse_value(extract_answer(completion)))
        except AnswerFormatError:
            return task.score(self.original, completion, reward=reward)
        return task.score(
            self.original, task.format_answer(self.to_original(solution)), None, reward
        )


def _permutation(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(new_of_old, old_of_new)``: old id ``i`` becomes ``new_of_old[i]``."""
    new_of_old = rng.permutation(n).astype(np.int64)
    return new_of_old, np.argsort(new_of_old).astype(np.int64)


def _map_ids(ids: Any, table: np.ndarray) -> np.ndarray:
    """Map ids through ``table``; ids outside ``0..len(table)-1`` pass through unchanged."""
    array = np.asarray(ids, dtype=np.int64).copy()
    inside = (array >= 0) & (array < table.size)
    array[inside] = table[array[inside]]
    return array


def _rebuild(instance: Instance, **changes: Any) -> Instance:
    """A validated copy of ``instance`` with ``changes`` (a variant is not ``generate(seed)``)."""
    data = instance.model_dump()
    data.update(changes, seed=None)
    return type(instance).model_validate(data)


def _graph(instance: Any, rng: np.random.Generator) -> Variant:
    new_of_old, old_of_new = _permutation(rng, instance.n)
    changes: dict[str, Any] = {
        "edges": [(int(new_of_old[u]), int(new_of_old[v])) for u, v in instance.edges]
    }
    back: Mapper = lambda solution: _map_ids(solution, old_of_new)  # noqa: E731
    if instance.task == "GraphColoring":
        if instance.planted_colouring is not None:
            planted = np.asarray(instance.planted_colouring)[old_of_new]
            changes["planted_colouring"] = planted.tolist()
        if instance.planted_clique is not None:
            changes["planted_clique"] = sorted(new_of_old[list(instance.planted_clique)].tolist())

        def back(solution: Any) -> Any:  # the colour of each vertex, in vertex order
            colors = np.asarray(solution, dtype=np.int64)
            return colors[new_of_old] if colors.size == instance.n else colors

    elif instance.task == "HamiltonianCycle" and instance.planted_cycle is not None:
        changes["planted_cycle"] = new_of_old[list(instance.planted_cycle)].tolist()
        if instance.separator is not None:  # the certificate of the planted cycle's length
            changes["separator"] = sorted(new_of_old[list(instance.separator)].tolist())
    elif instance.task == "MaxIndependentSet" and instance.planted_cover is not None:
        changes["planted_cover"] = [
            new_of_old[list(group)].tolist() for group in instance.planted_cover
        ]
    return Variant(_rebuild(instance, **changes), instance, back, transforms=("relabel vertices",))


def _min_bisection(instance: Any, rng: np.random.Generator) -> Variant:
    new_of_old, old_of_new = _permutation(rng, instance.n)
    factor = int(rng.integers(1, 4))
    if max((w for *_, w in instance.edges), default=1) * factor > MAX_EDGE_WEIGHT:
        factor = 1
    edges = [(int(new_of_old[u]), int(new_of_old[v]), w * factor) for u, v, w in instance.edges]
    return Variant(
        _rebuild(instance, edges=edges),
        instance,
        lambda solution: tuple(_map_ids(part, old_of_new) for part in solution),
        scale=factor,
        transforms=("relabel vertices", f"scale weights x{factor}"),
    )


def _tsp(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_of_new = _permutation(rng, instance.n)
    matrix = instance.matrix[np.ix_(old_of_new, old_of_new)]
    largest = int(matrix.max())
    factor = int(rng.integers(1, 4))
    constant = int(rng.integers(0, 21))
    if largest * factor + constant > MAX_DISTANCE:
        factor, constant = 1, 0
    scaled = matrix * factor + constant * (1 - np.eye(instance.n, dtype=np.int64))
    coordinates = None
    keep_points = bool(rng.integers(2))  # presentation: points and matrix, or the matrix alone
    if instance.coordinates is not None and factor == 1 and constant == 0 and keep_points:
        coordinates = [instance.coordinates[old] for old in old_of_new.tolist()]
    return Variant(
        _rebuild(instance, distances=scaled.tolist(), coordinates=coordinates),
        instance,
        lambda solution: _map_ids(solution, old_of_new),
        scale=factor,
        shift=instance.n * constant,
        transforms=("relabel cities", f"scale distances x{factor}", f"add {constant} per edge"),
    )


def _knapsack(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_of_new = _permutation(rng, instance.n)
    value_factor, weight_factor = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if max(instance.values) * value_factor > MAX_VALUE:
        value_factor = 1
    if (
        max(instance.weights) * weight_factor > MAX_WEIGHT
        or instance.capacity * weight_factor > MAX_CAPACITY
    ):
        weight_factor = 1
    weights = (instance.weight_array[old_of_new] * weight_factor).tolist()
    values = (instance.value_array[old_of_new] * value_factor).tolist()
    return Variant(
        _rebuild(
            instance, weights=weights, values=values, capacity=instance.capacity * weight_factor
        ),
        instance,
        lambda solution: _map_ids(solution, old_of_new),
        scale=value_factor,
        transforms=(
            "relabel items",
            f"scale values x{value_factor}",
            f"scale weights x{weight_factor}",
        ),
    )


def _subset_sum(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_of_new = _permutation(rng, instance.n)
    factor = int(rng.integers(1, 4))
    if (
        instance.target * factor > MAX_SUBSET_VALUE
        or max(instance.numbers) * factor > MAX_SUBSET_VALUE
    ):
        factor = 1
    return Variant(
        _rebuild(
            instance,
            numbers=(instance.array[old_of_new] * factor).tolist(),
            target=instance.target * factor,
        ),
        instance,
        lambda solution: _map_ids(solution, old_of_new),
        transforms=("relabel numbers", f"scale numbers x{factor}"),
    )


def _set_cover(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_subset_of_new = _permutation(rng, len(instance.subsets))
    new_element_of_old, _ = _permutation(rng, instance.universe_size)
    subsets = [
        new_element_of_old[list(instance.subsets[old])].tolist()
        for old in old_subset_of_new.tolist()
    ]

    def back(solution: Any) -> Any:
        return solution if isinstance(solution, str) else _map_ids(solution, old_subset_of_new)

    return Variant(
        _rebuild(instance, subsets=subsets),
        instance,
        back,
        transforms=("relabel subsets", "relabel elements"),
    )


def _meeting_scheduling(instance: Any, rng: np.random.Generator) -> Variant:
    _, old_meeting_of_new = _permutation(rng, instance.n_meetings)
    _, old_room_of_new = _permutation(rng, instance.n_rooms)
    new_attendee_of_old, old_attendee_of_new = _permutation(rng, instance.n_attendees)
    meetings = [
        {
            "attendees": new_attendee_of_old[list(instance.meetings[old].attendees)].tolist(),
            "duration": instance.meetings[old].duration,
        }
        for old in old_meeting_of_new.tolist()
    ]

    def back(solution: Any) -> Any:
        rows = np.asarray(solution, dtype=np.int64).reshape(-1, 3).copy()
        rows[:, 0] = _map_ids(rows[:, 0], old_meeting_of_new)
        rows[:, 1] = _map_ids(rows[:, 1], old_room_of_new)
        return rows

    return Variant(
        _rebuild(
            instance,
            meetings=meetings,
            availability=[instance.availability[old] for old in old_attendee_of_new.tolist()],
            rooms=[instance.rooms[old] for old in old_room_of_new.tolist()],
        ),
        instance,
        back,
        transforms=("relabel meetings", "relabel rooms", "relabel attendees"),
    )


_MAKERS: dict[str, Callable[[Any, np.random.Generator], Variant]] = {
    "TSP": _tsp,
    "MaxClique": _graph,
    "MaxIndependentSet": _graph,
    "GraphColoring": _graph,
    "HamiltonianCycle": _graph,
    "MinBisection": _min_bisection,
    "SubsetSum": _subset_sum,
    "SetCover": _set_cover,
    "Knapsack": _knapsack,
    "MeetingScheduling": _meeting_scheduling,
}


def variant(instance: Instance, seed: int) -> Variant:
    """A variant of ``instance`` that keeps its optimum, determined by ``seed``."""
    maker = _MAKERS.get(instance.task)
    if maker is None:
        raise ValueError(f"no variants are defined for task {instance.task!r}")
    return maker(instance, np.random.default_rng(derive_seed(seed, instance.fingerprint())))


def expand_variants(instances: Sequence[Instance], k: int, seed: int = 0) -> list[list[Variant]]:
    """``k`` variants of each instance, the same on every run for the same arguments.

    Variant ``j`` of an instance uses the seed ``derive_seed(seed, j)``, so the list for an
    instance does not depend on which other instances are expanded with it.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return [[variant(instance, derive_seed(seed, j)) for j in range(k)] for instance in instances]


def verdict_label(score: Score) -> str:
    """The verdict of a score as one word: ``format_error``, ``infeasible``, ``suboptimal`` or
    ``optimal``. Two answers agree when their labels are equal."""
    if not score.format_ok:
        return "format_error"
    if not score.feasible:
        return "infeasible"
    return "optimal" if score.optimality >= 1.0 else "suboptimal"


def consistency(
    verdicts_by_variant: Sequence[Sequence[Hashable]] | Mapping[Any, Sequence[Hashable]],
) -> float:
    """The share of instances whose verdicts agree across all their variants.

    ``verdicts_by_variant`` holds, per instance, the verdicts of one model on each variant (any
    comparable value, e.g. :func:`verdict_label` of the scores, or a :class:`Score`, which is
    labelled first). An instance with fewer than two verdicts tells nothing and is an error.
    """
    groups = list(
        verdicts_by_variant.values()
        if isinstance(verdicts_by_variant, Mapping)
        else verdicts_by_variant
    )
    if not groups:
        raise ValueError("no instances to measure consistency on")
    agreeing = 0
    for index, group in enumerate(groups):
        labels = [verdict_label(v) if isinstance(v, Score) else v for v in group]
        if len(labels) < 2:
            raise ValueError(f"instance {index} has {len(labels)} verdicts; need at least 2")
        agreeing += all(label == labels[0] for label in labels)
    return agreeing / len(groups)
