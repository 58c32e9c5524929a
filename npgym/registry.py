"""The task registry and the gymnasium ids ``npgym/<Task>-<tier>``.

Adding a task is one line in :data:`TASKS`: the name and where its class lives. Task modules
are imported on first use, so ``import npgym`` stays cheap. Tasks in other packages join with
:func:`register_task` or an ``npgym.tasks`` entry point.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any, get_args

from npgym.capabilities import MalformedCapabilityError, check_declarations
from npgym.config import TIERS
from npgym.task import Category, Task

TASKS: dict[str, str] = {
    "TSP": "npgym.tasks.tsp:TSPTask",
    "MaxClique": "npgym.tasks.max_clique:MaxCliqueTask",
    "MaxIndependentSet": "npgym.tasks.max_independent_set:MaxIndependentSetTask",
    "GraphColoring": "npgym.tasks.graph_coloring:GraphColoringTask",
    "MeetingScheduling": "npgym.tasks.meeting_scheduling:MeetingSchedulingTask",
    "HamiltonianCycle": "npgym.tasks.hamiltonian_cycle:HamiltonianCycleTask",
    "SubsetSum": "npgym.tasks.subset_sum:SubsetSumTask",
    "SetCover": "npgym.tasks.set_cover:SetCoverTask",
    "Knapsack": "npgym.tasks.knapsack:KnapsackTask",
    "MinBisection": "npgym.tasks.min_bisection:MinBisectionTask",
}
"""Task name -> ``module:Class``, in the order tasks are listed."""

ENV_NAMESPACE = "npgym"
CURRICULUM_ENV_ID = f"{ENV_NAMESPACE}/Curriculum"
"""The adaptive-curriculum env (:class:`npgym.curriculum.CurriculumEnv`) over chosen tasks."""
ENTRY_POINT_GROUP = "npgym.tasks"
"""Entry-point group through which installed packages add tasks."""
ENV_ENTRY_POINT = "npgym.env:make_env"
VECTOR_ENTRY_POINT = "npgym.vector:make_vector_env"
"""``make_vec``'s entry point for the tasks (not the families): the batched structured env of a
task that declares ``vector``, a clear refusal for one that does not; whether a task declares it
is known only once its class is imported, which registration does not do."""
FAMILY_PREFIXES = ("Compose-", "Aggregate-", "Invert-")
"""Name prefixes reserved for the task families (:mod:`npgym.families`): no task takes them."""
MAX_TASK_NAME_CHARS = 64
"""Longest task name a plug-in may register (it becomes part of every env id)."""
TASK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
"""What a plug-in's task name looks like: a letter, then letters, digits and underscores (a
``-`` or ``/`` would make its env ids ``npgym/<name>-<tier>`` ambiguous)."""


@dataclass(frozen=True)
class FamilyHooks:
    """How the registry reaches the task families without importing them: set by
    :mod:`npgym.families` when it is imported (``import npgym`` does), so that families, which
    build on registered tasks, sit above the registry and not beside it."""

    is_family_name: Callable[[str], bool]
    family_task: Callable[[str], Task]
    family_env_names: Callable[[], list[str]]


FAMILIES: FamilyHooks | None = None
"""The families' hooks, once :mod:`npgym.families` is imported."""


def list_tasks() -> list[str]:
    """Names of the registered tasks."""
    return list(TASKS)


def get_task(name: str) -> Task:
    """The task called ``name`` (case-insensitive), e.g. ``get_task("TSP")``; family names
    (``Compose-...``, ``Aggregate-<Task>``, ``Invert-<Task>``) give :mod:`npgym.families` tasks."""
    canonical = {task.lower(): task for task in TASKS}.get(str(name).lower())
    if canonical is None and FAMILIES is not None and FAMILIES.is_family_name(name):
        return FAMILIES.family_task(str(name))
    if canonical is None:
        raise KeyError(f"unknown task {name!r}; registered tasks: {', '.join(TASKS)}")
    return _load(canonical)


@cache
def _load(name: str) -> Task:
    """Import and instantiate a registered task once."""
    module_name, class_name = TASKS[name].split(":")
    task: Task = getattr(importlib.import_module(module_name), class_name)()
    check_category(task)
    if not module_name.startswith("npgym.tasks."):
        register_envs()  # a plug-in's class is in hand now: the ids of what it declares
    return task


def check_category(task: Task) -> None:
    """Refuse a task whose category is not one of :data:`npgym.task.Category`, which would
    otherwise drop out of the per-category report silently."""
    categories = get_args(Category)
    if task.category not in categories:
        raise ValueError(
            f"task {task.name!r} has category {task.category!r}; "
            f"choose one of: {', '.join(categories)}"
        )


def env_id(task: str, tier: str) -> str:
    """The gymnasium id of a task and tier, e.g. ``npgym/TSP-hard``."""
    return f"{ENV_NAMESPACE}/{task}-{tier}"


def register_task(task_class: type[Task[Any, Any]] | str) -> str:
    """Register a task from another package and its gymnasium ids; returns its name.

    ``task_class`` is the class or its import path ``"package.module:Class"``; the task is
    imported on first use by that path, so the class must live at module level. It registers
    under its ``name``. Registering the same class again does nothing; another class under a
    taken name is an error. Packages can instead declare an entry point in the
    ``npgym.tasks`` group (``MaxCut = "my_package.max_cut:MaxCutTask"``): ``import npgym``
    registers those.
    """
    if isinstance(task_class, str):
        path, task_class = task_class, _import(task_class)
        if not (isinstance(task_class, type) and issubclass(task_class, Task)):
            raise TypeError(f"{path} is not an npgym.Task subclass")
    else:
        if not (isinstance(task_class, type) and issubclass(task_class, Task)):
            raise TypeError(f"register_task needs an npgym.Task subclass, got {task_class!r}")
        path = f"{task_class.__module__}:{task_class.__qualname__}"
        if _import(path) is not task_class:
            raise ValueError(f"{task_class.__qualname__} must be a module-level class ({path})")
    declared_name = getattr(task_class, "name", None)
    name = declared_name if isinstance(declared_name, str) else ""
    package = task_class.__module__.partition(".")[0]
    problem = _name_problem(name, path)
    if problem is not None:
        raise ValueError(f"plug-in package {package!r}: {problem}")
    try:
        check_declarations(task_class)
    except MalformedCapabilityError as error:
        raise MalformedCapabilityError(f"plug-in package {package!r}: {error}") from error
    TASKS.setdefault(name, path)
    register_envs()
    return name


def _name_problem(name: str, path: str) -> str | None:
    """Why a plug-in at ``path`` may not register under ``name`` (``None`` when it may): no
    name, a malformed or too long one, a family prefix, or a name another task holds, compared
    without case as :func:`get_task` looks names up. The same path again is no problem."""
    if not name:
        return f"{path} sets no task name (a non-empty string)"
    if len(name) > MAX_TASK_NAME_CHARS:
        return f"task name {name[:MAX_TASK_NAME_CHARS]!r}... is longer than {MAX_TASK_NAME_CHARS}"
    if name.lower().startswith(tuple(prefix.lower() for prefix in FAMILY_PREFIXES)):
        return f"task name {name!r} takes a family prefix ({', '.join(FAMILY_PREFIXES)})"
    if not TASK_NAME.fullmatch(name):
        return f"task name {name!r} must be a letter followed by letters, digits or underscores"
    for taken, taken_path in TASKS.items():
        same_task = taken == name and _import(taken_path) is _import(path)
        if taken.lower() == name.lower() and taken_path != path and not same_task:
            return f"task name {name!r} is taken by {taken_path} (task {taken!r})"
    return None


def _import(path: str) -> Any:
    """The object at ``module:name`` (``None`` when the module lacks it)."""
    module_name, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module_name), attribute, None)


def _register_entry_points() -> None:
    """Add the tasks that installed packages declare in the ``npgym.tasks`` entry-point group
    (names only: each is imported on first use)."""
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if TASKS.get(entry_point.name) == entry_point.value:
            continue
        problem = _name_problem(entry_point.name, entry_point.value)
        if problem is None:
            TASKS[entry_point.name] = entry_point.value
        else:
            package = entry_point.dist.name if entry_point.dist else entry_point.module
            warnings.warn(
                f"npgym.tasks entry point of package {package!r} ignored: {problem}",
                stacklevel=2,
            )


def register_envs() -> None:
    """Register every task x tier, and the family tasks x tier, with gymnasium (idempotent)."""
    import gymnasium

    _register_entry_points()
    families = FAMILIES.family_env_names() if FAMILIES is not None else []
    for task in (*TASKS, *families):
        vector = VECTOR_ENTRY_POINT if task in TASKS else None
        for tier in TIERS:
            identifier = env_id(task, tier)
            if identifier not in gymnasium.registry:
                gymnasium.register(
                    id=identifier,
                    entry_point=ENV_ENTRY_POINT,
                    vector_entry_point=vector,
                    kwargs={"task": task, "tier": tier},
                    disable_env_checker=False,
                )
    if CURRICULUM_ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=CURRICULUM_ENV_ID,
            entry_point="npgym.curriculum:CurriculumEnv",
            nondeterministic=True,  # the stream follows the learner, not reset()'s seed
            disable_env_checker=False,
        )
