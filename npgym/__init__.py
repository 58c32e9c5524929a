"""npgym: procedurally generated NP-hard optimisation environments with verifiable rewards.

``import npgym`` registers every task and tier with gymnasium as ``npgym/<Task>-<tier>``.
"""

from importlib.util import find_spec
from typing import Any

from npgym.answer import AnswerFormatError
from npgym.config import TIERS
from npgym.instance import Instance
from npgym.registry import env_id, get_task, list_tasks, register_envs, register_task
from npgym.results import Reference, Score, Verdict
from npgym.reward import RewardConfig
from npgym.task import Task
from npgym.version import __version__

VERIFIERS_EXPORTS = ("NPGymEnv", "NPGymHarness", "NPGymTaskset")
"""verifiers 0.4's taskset, harness and env (``vf-eval npgym``), imported only when asked for;
listed in ``__all__`` only where verifiers is installed, so ``from npgym import *`` works
without it."""


def __getattr__(name: str) -> Any:
    """The verifiers exports, from :mod:`npgym.integrations.verifiers`
    (``pip install "npgym[verifiers]"``); verifiers finds them through ``__all__``."""
    if name in VERIFIERS_EXPORTS:
        from npgym.integrations import verifiers

        return getattr(verifiers, name)
    raise AttributeError(f"module 'npgym' has no attribute {name!r}")


import npgym.families  # noqa: E402, F401  (connects the task families to the registry)

__all__ = [
    "TIERS",
    "AnswerFormatError",
    "Instance",
    "Reference",
    "RewardConfig",
    "Score",
    "Task",
    "Verdict",
    "__version__",
    "env_id",
    "get_task",
    "list_tasks",
    "register_task",
    *(VERIFIERS_EXPORTS if find_spec("verifiers") is not None else ()),
]

register_envs()
