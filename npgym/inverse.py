"""The ``inverse`` capability: what a task declares so that it has inverse problems.

``npgym/Invert-<Task>`` (:mod:`npgym.families.invert`) asks a model to write an instance of the
task with a stated property, and checks it exactly. Everything that depends on the task (what its
size counts, how large an answer may be, its fields and optimum in words, the greedy heuristic it
can be asked to defeat, a bounded-work exact optimum) is the task's, declared as one
:class:`InverseProblem` in its folder (``npgym/tasks/<name>/inverse.py``) and named on the task
class (``inverse = "npgym.tasks.tsp.inverse:INVERSE"``). A task without it has no inverse
problems and no ``Invert-<Task>`` ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class UniqueSelection:
    """The ``unique`` property (exactly one optimal selection): how to draw a candidate
    instance's fields and how to list every optimal selection of an instance."""

    draw: Callable[[np.random.Generator], dict[str, Any]]
    optimal_selections: Callable[[Any], list[tuple[int, ...]]]


def instance_n(instance: Any) -> int:
    """``instance.n``: what the size of most tasks counts (vertices, items, numbers, cities)."""
    return int(instance.n)


@dataclass(frozen=True, kw_only=True)
class InverseProblem:
    """A task's inverse problems, as data.

    ``unit`` names what the size counts ("cities") and ``size`` reads it off an instance (by
    default its ``n``); an answer states at most ``size_cap`` of them, a size at which
    ``exact_optimum`` (or else the task's exact solver) settles any answer within a second.
    ``fields`` and ``optimum`` say in words what the instance fields are and what the optimum
    is; ``greedy`` describes the greedy heuristic, with its tie rule, that a ``greedy_gap``
    answer must defeat (``None``: no such property). ``extra_limits`` is the text of any
    task-specific caps and ``over_caps`` checks them on an answer's raw JSON fields (the
    exceeded cap in words, or ``""``). ``exact_optimum`` returns the optimum, or -1 when the
    instance has no feasible answer.
    """

    unit: str
    size: Callable[[Any], int] = instance_n
    size_cap: int
    fields: str
    optimum: str
    greedy: str | None = None
    exact_optimum: Callable[[Any], int] | None = None
    unique: UniqueSelection | None = None
    extra_limits: str = ""
    over_caps: Callable[[dict[str, Any]], str] | None = None

    @property
    def properties(self) -> tuple[str, ...]:
        """The properties an instance may ask for, in the order generation draws from."""
        unique = ("unique",) if self.unique is not None else ()
        greedy = ("greedy_gap",) if self.greedy is not None else ()
        return ("optimum", *unique, *greedy)


GRAPH_FIELDS = (
    '"n": the number of vertices (numbered 0 to n-1), "edges": a list of [u, v] pairs with '
    "u != v, each pair at most once"
)
"""The fields of a graph task's instance, in words."""


def int64(values: Any) -> np.ndarray:
    """``values`` as an int64 array, for the bounded-work exact routines."""
    return np.asarray(values, dtype=np.int64)
