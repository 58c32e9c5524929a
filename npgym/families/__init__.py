"""Task families built on the ten base tasks: composition, variants, aggregation, inversion.

Family tasks are ordinary :class:`npgym.task.Task` objects reached by name through
:func:`npgym.get_task` (``Compose-...``, ``Aggregate-<Task>``, ``Invert-<Task>``) and registered
as gymnasium ids ``npgym/<name>-<tier>`` (see :data:`FAMILY_ENV_NAMES`).
"""

from __future__ import annotations

import sys
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
"""The built-in tasks that declare the ``inverse`` capability, by name: ``import npgym``
registers the gymnasium ids before any task module is imported (importing them would import
numba, 0.2 s), so the ids of the built-in tasks cannot ask the classes. A test holds this list
to the classes' declarations; everything else about inverse problems is the task's own."""


def declares_inverse(name: str) -> bool:
    """Whether the registered task ``name`` declares ``inverse``, without importing a task
    module: the built-in tasks by :data:`INVERTIBLE_TASKS`, a plug-in by its class once its
    module is imported (``register_task(cls)``, or its first use through an entry point)."""
    if name in INVERTIBLE_TASKS:
        return True
    path = registry.TASKS.get(name, "")
    if path.startswith("npgym.tasks."):
        return False
    module_name, _, attribute = path.partition(":")
    module = sys.modules.get(module_name)
    return getattr(getattr(module, attribute, None), "inverse", None) is not None


def family_env_names() -> list[str]:
    """Every family task name that gets gymnasium ids, in the order ``npgym list`` shows."""
    return [
        *FAMILY_ENV_NAMES,
        *(f"Aggregate-{name}" for name in registry.TASKS),
        *(f"Invert-{name}" for name in registry.TASKS if declares_inverse(name)),
    ]


def is_family_name(name: str) -> bool:
    """Whether ``name`` names a family task (by its prefix, any letter case)."""
    return str(name).lower().startswith(tuple(prefix.lower() for prefix in FAMILY_PREFIXES))


@cache
def family_task(name: str) -> Task:
    """The family task called ``name``; raises ``KeyError`` for an unknown or malformed name,
    and :class:`npgym.capabilities.MissingCapabilityError` for ``Invert-<Task>`` of a task
    without the ``inverse`` capability."""
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
