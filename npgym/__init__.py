"""npgym: procedurally generated NP-hard optimisation environments with verifiable rewards.

``import npgym`` registers every task and tier with gymnasium as ``npgym/<Task>-<tier>``.
"""

from typing import Any

from npgym.answer import AnswerFormatError
from npgym.config import TIERS
from npgym.instance import Instance
from npgym.registry import env_id, get_task, list_tasks, register_envs, register_task
from npgym.results import Reference, Score, Verdict
from npgym.reward import RewardConfig
from npgym.task import Task
from npgym.version import __version__


def load_environment(**env_args: Any) -> Any:
    """The ``verifiers`` environment entry (``vf-eval npgym -a '{"task": "TSP"}'``); see
    :mod:`npgym.integrations.verifiers` (``pip install "npgym[verifiers]"``)."""
    from npgym.integrations.verifiers import load_environment as load

    return load(**env_args)


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
    "load_environment",
    "register_task",
]

register_envs()
