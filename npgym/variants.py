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

Each task makes its own variants: its ``variant_maker`` capability (see
:mod:`npgym.capabilities`), in ``npgym/tasks/<task>/variants.py``, built from the shared
pieces here (:class:`Variant`, :func:`permutation`, :func:`map_ids`, :func:`rebuild`,
:func:`relabel_graph`); a task without one is refused by :func:`variant`.

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
from npgym.capabilities import capability
from npgym.instance import Instance
from npgym.results import Objective, Score
from npgym.reward import RewardConfig
from npgym.seeding import derive_seed

__all__ = [
    "Mapper",
    "Variant",
    "consistency",
    "expand_variants",
    "map_ids",
    "permutation",
    "rebuild",
    "relabel_graph",
    "variant",
    "verdict_label",
]

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
        from npgym.registry import get_task

        task = get_task(self.original.task)
        try:
            solution = task.to_solution(parse_value(extract_answer(completion)))
        except AnswerFormatError:
            return task.score(self.original, completion, reward=reward)
        return task.score(
            self.original, task.format_answer(self.to_original(solution)), None, reward
        )


def permutation(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(new_of_old, old_of_new)``: old id ``i`` becomes ``new_of_old[i]``."""
    new_of_old = rng.permutation(n).astype(np.int64)
    return new_of_old, np.argsort(new_of_old).astype(np.int64)


def map_ids(ids: Any, table: np.ndarray) -> np.ndarray:
    """Map ids through ``table``; ids outside ``0..len(table)-1`` pass through unchanged."""
    array = np.asarray(ids, dtype=np.int64).copy()
    inside = (array >= 0) & (array < table.size)
    array[inside] = table[array[inside]]
    return array


def rebuild(instance: Instance, **changes: Any) -> Instance:
    """A validated copy of ``instance`` with ``changes`` (a variant is not ``generate(seed)``)."""
    data = instance.model_dump()
    data.update(changes, seed=None)
    return type(instance).model_validate(data)


def relabel_graph(
    instance: Any, rng: np.random.Generator
) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """The relabelled edges of a graph instance (vertices permuted by ``rng``), and the
    ``(new_of_old, old_of_new)`` permutation, for a graph task's variant maker to complete."""
    new_of_old, old_of_new = permutation(rng, instance.n)
    edges = [(int(new_of_old[u]), int(new_of_old[v])) for u, v in instance.edges]
    return {"edges": edges}, new_of_old, old_of_new


def variant(instance: Instance, seed: int) -> Variant:
    """A variant of ``instance`` that keeps its optimum, determined by ``seed``."""
    from npgym.registry import get_task

    maker = capability(get_task(instance.task), "variant_maker")
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
