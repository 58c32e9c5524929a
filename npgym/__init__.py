"""npgym: procedurally generated NP-hard optimisation environments with verifiable rewards.

``import npgym`` registers every task and tier with gymnasium as ``npgym/<Task>-<tier>``.
"""

from npgym.answer import AnswerFormatError
from npgym.config import TIERS
from npgym.instance import Instance
from npgym.registry import env_id, get_task, list_tasks, register_envs
from npgym.results import Reference, Score, Verdict
from npgym.reward import RewardConfig
from npgym.task import Task
from npgym.version import __version__

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
]

register_envs()
