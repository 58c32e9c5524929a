"""The task registry and the gymnasium ids ``npgym/<Task>-<tier>``.

Adding a task is one line in :data:`TASKS`: the name and where its class lives. Task modules
are imported on first use, so ``import npgym`` stays cheap.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import get_args

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
ENV_ENTRY_POINT = "npgym.env:NPGymEnv"


def list_tasks() -> list[str]:
    """Names of the registered tasks."""
    return list(TASKS)


def get_task(name: str) -> Task:
    """The task called ``name`` (case-insensitive), e.g. ``get_task("TSP")``."""
    canonical = {task.lower(): task for task in TASKS}.get(str(name).lower())
    if canonical is None:
        raise KeyError(f"unknown task {name!r}; registered tasks: {', '.join(TASKS)}")
    return _load(canonical)


@cache
def _load(name: str) -> Task:
    """Import and instantiate a registered task once."""
    module_name, class_name = TASKS[name].split(":")
    task: Task = getattr(importlib.import_module(module_name), class_name)()
    check_category(task)
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


def register_envs() -> None:
    """Register every task x tier with gymnasium (idempotent)."""
    import gymnasium

    for task in TASKS:
        for tier in TIERS:
            identifier = env_id(task, tier)
            if identifier not in gymnasium.registry:
                gymnasium.register(
                    id=identifier,
                    entry_point=ENV_ENTRY_POINT,
                    kwargs={"task": task, "tier": tier},
                    disable_env_checker=False,
                )
