"""npgym as a ``verifiers`` environment (the classic ``load_environment`` convention).

``vf-eval npgym -a '{"task": "TSP", "tier": "hard"}' -m MODEL -b URL`` finds
:func:`npgym.load_environment` (the module named like the env id) and evaluates with npgym's
reward as the rubric. Two kinds:

- single-turn (``max_attempts=1``, the default): a ``vf.SingleTurnEnv``; the reward is
  ``task.score`` of the answer, and ``format_ok``, ``feasible`` and ``ratio`` are logged as
  metrics (weight 0);
- multi-turn repair (``max_attempts > 1``): a ``vf.MultiTurnEnv`` that answers each attempt with
  the verifier's feedback ("Infeasible: city 7 visited twice") until an optimal answer or the
  last attempt; the reward is the episode reward under ``reward_policy`` (``best`` by default),
  recomputed from the transcript, so it never depends on live state.

Rows come from the training seed stream (never NP-Bench instances) and carry the instance and
its reference in ``info``, so scoring needs nothing else.
"""

from __future__ import annotations

from typing import Any

import verifiers as vf
from datasets import Dataset

from npgym.datasets import ReferenceMode
from npgym.instance import Instance
from npgym.integrations.trl import make_dataset
from npgym.multiturn import RepairConfig, RepairSession, RewardPolicy
from npgym.records import record_instance, record_reference
from npgym.results import Reference, Score
from npgym.reward import DEFAULT_REWARD, RewardConfig
from npgym.task import Task


def _field(message: Any, name: str) -> Any:
    """A message field, whether the message is a dict or a message object."""
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


def _assistant_turns(completion: Any) -> list[str]:
    """The texts of the assistant messages of a completion (or the completion text)."""
    if isinstance(completion, str):
        return [completion]
    return [
        str(_field(message, "content") or "")
        for message in completion or []
        if _field(message, "role") == "assistant"
    ]


def _last_answer(completion: Any) -> str:
    turns = _assistant_turns(completion)
    return turns[-1] if turns else ""


def _problem(info: dict[str, Any]) -> tuple[Task, Instance, Reference]:
    """The task, instance and reference a row's ``info`` carries (verifiers reserves ``task``,
    hence ``npgym_task``)."""
    row = {**info, "task": info["npgym_task"]}
    task, instance = record_instance(row)
    return task, instance, record_reference(row) or task.reference(instance)


def _session(info: dict[str, Any], repair: RepairConfig, weights: RewardConfig) -> RepairSession:
    task, instance, reference = _problem(info)
    return RepairSession(task, instance, reference, repair, weights)


def _score(info: dict[str, Any], text: str, weights: RewardConfig) -> Score:
    task, instance, reference = _problem(info)
    return task.score(instance, text, reference, weights)


def _rubric(repair: RepairConfig, weights: RewardConfig) -> vf.Rubric:
    """npgym's reward as a rubric; the score's parts as zero-weight metrics."""

    def npgym_reward(completion: Any, info: dict[str, Any], **_: Any) -> float:
        session = _session(info, repair, weights)
        for text in _assistant_turns(completion)[: repair.max_attempts]:
            if session.done:
                break
            session.submit(text)
        if not session.scores:
            return weights.format_fail + weights.infeasible
        return session.reward()

    def format_ok(completion: Any, info: dict[str, Any], **_: Any) -> float:
        return float(_score(info, _last_answer(completion), weights).format_ok)

    def feasible(completion: Any, info: dict[str, Any], **_: Any) -> float:
        return float(_score(info, _last_answer(completion), weights).feasible)

    def ratio(completion: Any, info: dict[str, Any], **_: Any) -> float:
        return _score(info, _last_answer(completion), weights).optimality

    return vf.Rubric(funcs=[npgym_reward, format_ok, feasible, ratio], weights=[1.0, 0, 0, 0])


class NPGymRepairEnv(vf.MultiTurnEnv):
    """Multi-turn repair: verifier feedback after each answer, until solved or out of tries."""

    def __init__(self, repair: RepairConfig, weights: RewardConfig, **kwargs: Any) -> None:
        super().__init__(max_turns=repair.max_attempts, **kwargs)
        self.repair = repair
        self.weights = weights

    async def env_response(self, messages: Any, state: Any, **_: Any) -> list[dict[str, str]]:
        """Score the latest answer and reply with the feedback (the last reply ends the episode)."""
        session = _session(state["info"], self.repair, self.weights)
        attempt = None
        for text in _assistant_turns(messages):
            attempt = session.submit(text)
            if session.done:
                break
        feedback = attempt.feedback if attempt is not None else "No answer found."
        reply = [{"role": "user", "content": feedback}]
        if session.done:
            state["final_env_response"] = reply
        return reply


def load_environment(
    task: str = "Knapsack",
    tier: str = "easy",
    n: int = 50,
    seed: int = 0,
    max_attempts: int = 1,
    reward_policy: RewardPolicy = "best",
    reference: ReferenceMode = "exact",
    system_prompt: str | None = None,
) -> vf.Environment:
    """A verifiers environment of ``n`` fresh ``task`` instances at ``tier``.

    ``max_attempts > 1`` gives the multi-turn repair environment.
    """
    rows = make_dataset([task], n=n, mix={tier: 1.0}, seed=seed, reference=reference)
    dataset = Dataset.from_list(
        [
            {
                "prompt": row["prompt"],
                "answer": "",
                "info": {
                    "npgym_task": row["task"],
                    "instance": row["instance"],
                    "reference": row["reference"],
                },
            }
            for row in rows
        ]
    )
    repair = RepairConfig(max_attempts=max_attempts, policy=reward_policy)
    rubric = _rubric(repair, DEFAULT_REWARD)
    if max_attempts == 1:
        return vf.SingleTurnEnv(eval_dataset=dataset, rubric=rubric, system_prompt=system_prompt)
    return NPGymRepairEnv(
        repair, DEFAULT_REWARD, eval_dataset=dataset, rubric=rubric, system_prompt=system_prompt
    )
