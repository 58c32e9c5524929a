"""Task families built on the ten base tasks: composition, variants, aggregation, inversion.

Family tasks are ordinary :class:`npgym.task.Task` objects reached by name through
:func:`npgym.get_task` (``Compose-...``, ``Aggregate-<Task>``, ``Invert-<Task>``) and registered
as gymnasium ids ``npgym/<name>-<tier>`` (see :data:`FAMILY_ENV_NAMES`).
"""

from __future__ import annotations

from functools import cache

import npgym.registry as registry
from npgym.registry import FAMILY_PREFIXES
from npgym.task import Task

FAMILY_ENV_NAMES: tuple[str, ...] = (
    "Compose-TSP.Knapsack",
    "Compose-Mixed2",
    "Compose-Mixed3",
    "Compose-Chain2",
    "Compose-Chain3",
    "Compose-Chain4",
)
"""Family task names registered as gymnasium ids (with every tier); the Aggregate and Invert
tasks of every base task are added by :func:`family_env_names`."""


INVERTIBLE_TASKS = (
    "TSP",
    "MaxClique",
    "MaxIndependentSet",
    "GraphColoring",
    "HamiltonianCycle",
    "MinBisection",
    "Knapsack",
    "SubsetSum",
    "SetCover",
    "MeetingScheduling",
)
"""The base tasks with inverse problems (their property texts, size fields and caps are in
:mod:`npgym.families.invert`): only these get ``Invert-<Task>`` ids."""


def family_env_names() -> list[str]:
    """Every family task name that gets gymnasium ids, in the order ``npgym list`` shows."""
    return [
        *FAMILY_ENV_NAMES,
        *(f"Aggregate-{name}" for name in registry.TASKS),
        *(f"Invert-{name}" for name in registry.TASKS if name in INVERTIBLE_TASKS),
    ]


def is_family_name(name: str) -> bool:
    """Whether ``name`` names a family task (by its prefix, any letter case)."""
    return str(name).lower().startswith(tuple(prefix.lower() for prefix in FAMILY_PREFIXES))


@cache
def family_task(name: str) -> Task:
    """The family task called ``name``; raises ``KeyError`` for an unknown or malformed name."""
    prefix, _, spec = str(name).partition("-")
    kind = prefix.lower()
    if kind == "compose":
        from npgym.families.compose import compose_task

        return compose_task(spec)
    if kind == "aggregate":
        from npgym.families.aggregate import AggregateTask

        return AggregateTask(spec)
    if kind == "invert":
        from npgym.families.invert import InvertTask

        return InvertTask(spec)
    raise KeyError(f"unknown task family in {name!r}; families: {', '.join(FAMILY_PREFIXES)}")


registry.FAMILIES = registry.FamilyHooks(is_family_name, family_task, family_env_names)
