"""verl integration: a custom reward function and a multi-turn repair tool.

Reward (``reward.custom_reward_function.path=<this file>``, ``name=compute_score``) on data
from ``npgym export --format verl``: each row's ``extra_info`` carries the instance and its
reference, so the score needs nothing else. Every sample returns the same keys: ``score`` (the
npgym reward), its three parts, ``feasible`` and ``ratio`` (clipped optimality).

Multi-turn repair: data exported with ``--multi-turn`` selects verl's ``tool_agent`` loop and
gives each row ``tools_kwargs`` for :class:`NPGymSubmitTool`, declared in a tool config
(``examples/verl/tool_config.yaml``). The model calls ``submit_solution`` to get the
verifier's feedback; the attempts are kept in the rollout's ``extra_fields`` and
:func:`compute_score` scores the episode with the repair policy (best attempt by default),
counting the final answer as one more attempt when the response ends with one.

The tool class lives in :mod:`npgym.integrations.verl_tool` (it subclasses verl's
``BaseTool``); this module does not import verl, so the reward function works without it.
"""

from __future__ import annotations

from typing import Any

from npgym.answer import AnswerFormatError, extract_answer
from npgym.instance import Instance
from npgym.integrations.ray_curriculum import report_score
from npgym.multiturn import RepairConfig, episode_reward
from npgym.records import load_solved_row
from npgym.results import Reference, Score
from npgym.reward import RewardSpec, resolve_reward
from npgym.task import Task
from npgym.trainer_rows import TOOL_NAME, reward_parts_of, tools_kwargs

__all__ = ["ATTEMPTS_FIELD", "REPAIR_FIELD", "TOOL_NAME", "compute_score", "tools_kwargs"]

ATTEMPTS_FIELD = "npgym_attempts"
"""Key of the rollout's ``extra_fields`` (merged into ``extra_info``) holding tool attempts."""
REPAIR_FIELD = "npgym_repair"
"""Key of the rollout's ``extra_fields`` holding the tool's :class:`RepairConfig`."""


def load_row(
    task_name: str, instance_json: str, reference_json: str | None
) -> tuple[Task, Instance, Reference]:
    """The task, instance and reference of a row (computed when the row has none; cached)."""
    return load_solved_row(
        {"task": task_name, "instance": instance_json, "reference": reference_json}
    )


def _task_name(data_source: str, extra_info: dict[str, Any]) -> str:
    """The task of a row: ``extra_info["task"]``, else from ``npgym/<Task>-<tier>``."""
    if extra_info.get("task"):
        return str(extra_info["task"])
    name = data_source.removeprefix("npgym/")
    for tier in ("-easy", "-medium", "-hard", "-benchmark"):
        name = name.removesuffix(tier)
    return name


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    reward: RewardSpec = None,
    **_: Any,
) -> dict[str, float]:
    """verl's reward hook: the npgym reward of a response, with its parts.

    ``extra_info`` must hold the row's ``instance`` (JSON) and ideally its ``reference``
    (JSON); ``ground_truth`` (the reference objective) is used when the reference is absent.
    ``reward`` picks the preset (``"np-engine"`` by default, or ``"strict"``), set in verl with
    ``reward.custom_reward_function.reward_kwargs.reward=strict`` (and ``reward: strict`` in
    the tool config for multi-turn repair, so attempts are scored alike).
    Rows drawn from a curriculum (:mod:`npgym.integrations.verl_curriculum`) also carry a
    ``curriculum_key`` in ``extra_info``: the score is reported under it to the curriculum this
    process is configured with (``NPGYM_CURRICULUM_JOURNAL``), never to a journal or actor that
    the row names (:func:`npgym.integrations.ray_curriculum.report_score`).
    """
    weights = resolve_reward(reward)
    info = extra_info or {}
    if not info.get("instance"):
        raise ValueError(
            "npgym rows carry the instance in extra_info['instance']: export with npgym"
        )
    task, instance, reference = load_row(
        _task_name(data_source, info), info["instance"], info.get("reference")
    )
    target = reference if info.get("reference") or ground_truth is None else ground_truth
    score = task.score(instance, solution_str, target, weights)
    attempts = info.get(ATTEMPTS_FIELD) or []
    if not attempts:
        report_score(info, score)
        return {"score": score.reward, **reward_parts_of(score)}
    rewards = [float(attempt["reward"]) for attempt in attempts]
    if _has_answer(solution_str):
        rewards.append(score.reward)
    best = max((Score(**attempt) for attempt in attempts), key=lambda s: s.reward)
    final = best if best.reward >= score.reward else score
    repair = RepairConfig.model_validate(info.get(REPAIR_FIELD) or {})
    report_score(info, final)
    return {
        "score": episode_reward(rewards, repair.policy, repair.discount),
        **reward_parts_of(final),
    }


def _has_answer(text: str) -> bool:
    try:
        extract_answer(text)
    except AnswerFormatError:
        return False
    return True
