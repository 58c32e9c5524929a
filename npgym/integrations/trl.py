"""TRL integration: reward functions, datasets and a multi-turn environment for ``GRPOTrainer``.

Rewards (TRL's reward-function signature: ``prompts``, ``completions`` and the dataset's
columns as keyword lists)::

    from npgym.integrations.trl import make_dataset, npgym_reward, reward_parts
    trainer = GRPOTrainer(model, reward_funcs=[npgym_reward], train_dataset=make_dataset(...))
    # train on the "strict" preset (baseline-relative optimality, graded format credit):
    reward_funcs=[make_reward("strict")]
    # log format / feasibility / optimality separately, next to the reward (adds nothing to it):
    reward_funcs=[npgym_reward, *reward_parts()]

The rows need ``task`` and ``instance`` (JSON) columns and, to skip recomputing it, a
``reference`` (JSON) column, as :func:`make_dataset` and ``npgym export --format trl`` write.
:func:`npgym_reward` also logs the batch's feasibility rate, format rate and mean optimality
ratio through TRL's ``log_metric`` when the trainer offers it. ``make_dataset(chat=False)``
writes plain-text prompts for base models without a chat template.

Multi-turn repair: ``GRPOTrainer(..., environment_factory=NPGymEnvironment)`` gives the model a
``submit_solution`` tool that answers with the verifier's feedback; the episode reward is the
best submission's by default (see :class:`npgym.multiturn.RepairConfig`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from npgym.datasets import DEFAULT_TRAINING_MIX, DatasetSpec, ReferenceMode, make_rows
from npgym.instance import Instance
from npgym.multiturn import RepairConfig, RepairSession, as_completion
from npgym.records import load_row, load_solved_row
from npgym.reference_pool import ReferencePool
from npgym.registry import get_task, list_tasks
from npgym.results import Reference, Score
from npgym.reward import RewardSpec, resolve_reward
from npgym.seeding import derive_seed
from npgym.task import Task
from npgym.trainer_rows import TrlRow, reward_parts_of, trl_row
from npgym.trainer_rows import chat as as_chat

RewardFunction = Callable[..., Sequence[float | None]]
LogMetric = Callable[[str, float], None]
"""TRL's ``log_metric`` keyword: logs a scalar (averaged over the step)."""
ENVIRONMENT_INSTRUCTION = "Solve the following optimisation problem."


def _row(
    task: str, instance: str, reference: str | None
) -> tuple[Task, Instance, Reference | None]:
    """A batch row's task, instance and reference (decoded once: see :func:`load_row`)."""
    return load_row({"task": task, "instance": instance, "reference": reference})


def completion_text(completion: Any) -> Any:
    """The text of a completion: plain text, or the messages of a conversational completion.

    Anything else (``None``, a number, a malformed message list) is passed through unchanged,
    and :meth:`Task.score` scores it as a format failure ("completion is not text").
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and all(
        isinstance(message, Mapping) for message in completion
    ):
        return "\n".join(str(message.get("content") or "") for message in completion)
    return completion


def score_completions(
    completions: Sequence[Any],
    task: Sequence[str],
    instance: Sequence[str],
    reference: Sequence[str | None] | None = None,
    reward: RewardSpec = None,
) -> list[Score]:
    """Score a batch of completions against the instances in the batch's columns.

    ``reward`` is a preset name (``"np-engine"``, the default, or ``"strict"``) or a config.
    """
    weights = resolve_reward(reward)
    scores = []
    for index, completion in enumerate(completions):
        reference_json = reference[index] if reference is not None else None
        task_object, instance_object, solved = _row(task[index], instance[index], reference_json)
        text = completion_text(completion)
        scores.append(task_object.score(instance_object, text, solved, weights))
    return scores


def _log(log_metric: LogMetric | None, scores: list[Score]) -> None:
    if log_metric is None or not scores:
        return
    count = len(scores)
    log_metric("npgym/feasible_rate", sum(s.feasible for s in scores) / count)
    log_metric("npgym/format_rate", sum(s.format_ok for s in scores) / count)
    log_metric("npgym/mean_ratio", sum(s.optimality for s in scores) / count)


_PARTS = ("format_reward", "feasibility_reward", "optimality_reward")
"""The reward's three parts; they sum to ``Score.reward``."""


BatchRewards = Callable[[list[Score], Mapping[str, Any], LogMetric | None], Sequence[float | None]]
"""``(scores, other columns, log_metric) -> rewards``: a reward function's work after scoring."""


def batch_reward(name: str, reward: RewardSpec, rewards: BatchRewards) -> RewardFunction:
    """A TRL reward function named ``name`` (TRL logs it under that name): it scores the batch's
    completions against its ``task``, ``instance`` and ``reference`` columns under ``reward``
    (see :func:`score_completions`), then ``rewards`` turns the scores into the rewards, given
    the batch's other columns and TRL's ``log_metric`` (``None`` outside TRL).
    """
    weights = resolve_reward(reward)

    def reward_function(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        task: Sequence[str],
        instance: Sequence[str],
        reference: Sequence[str | None] | None = None,
        log_metric: LogMetric | None = None,
        **columns: Any,
    ) -> Sequence[float | None]:
        scores = score_completions(completions, task, instance, reference, weights)
        return rewards(scores, columns, log_metric)

    reward_function.__name__ = reward_function.__qualname__ = name
    return reward_function


def make_reward(reward: RewardSpec = None) -> RewardFunction:
    """The combined npgym reward (``R_format + R_feasibility``) under a preset or config.

    ``reward`` is ``"np-engine"`` (default), ``"strict"`` or a :class:`RewardConfig`; an
    unknown name raises ``ValueError`` listing the valid ones.
    """

    def rewards(
        scores: list[Score], columns: Mapping[str, Any], log_metric: LogMetric | None
    ) -> list[float]:
        _log(log_metric, scores)
        return [score.reward for score in scores]

    return batch_reward("npgym_reward", reward, rewards)


def reward_parts(reward: RewardSpec = None) -> list[RewardFunction]:
    """Three logging functions for format / feasibility / optimality, used next to the reward.

    Put them beside :func:`npgym_reward` (or ``make_reward(preset)``, with the same preset):
    ``reward_funcs=[npgym_reward, *reward_parts()]``. Each returns ``None`` for every completion,
    which TRL leaves out of the total, so the trained and logged reward is the combined reward
    alone (no double counting); through TRL's ``log_metric`` they log the batch means of the
    parts as ``npgym/format_reward`` (+1 / -1, plus any graded credit), ``npgym/feasibility_reward``
    (0 if feasible, else the infeasibility penalty) and ``npgym/optimality_reward`` (the feasible
    answer's optimality term), which sum to the mean reward, and ``npgym/baseline_rate`` (share
    of feasible answers no better than the task's zero-effort baseline).
    """

    def part(name: str) -> RewardFunction:
        def log_part(
            scores: list[Score], columns: Mapping[str, Any], log_metric: LogMetric | None
        ) -> list[None]:
            if log_metric is not None:
                parts = [reward_parts_of(s)[name] for s in scores]
                log_metric(f"npgym/{name}", sum(parts) / len(parts))
                if name == "format_reward":
                    log_metric(
                        "npgym/baseline_rate",
                        sum(s.no_better_than_baseline for s in scores) / len(scores),
                    )
            return [None] * len(scores)

        return batch_reward(name, reward, log_part)

    return [part(name) for name in _PARTS]


npgym_reward = make_reward()
format_reward, feasibility_reward, optimality_reward = reward_parts()


def training_spec(
    tasks: Sequence[str] | None = None,
    n: int | None = 100,
    *,
    mix: Mapping[str, float] | None = None,
    curriculum: tuple[float, float] | None = None,
    seed: int = 0,
    reference: ReferenceMode = "exact",
) -> DatasetSpec:
    """The :class:`DatasetSpec` of a training dataset (``n=None``: the endless stream)."""
    names = tuple(tasks or list_tasks())
    if curriculum is not None:
        return DatasetSpec(
            split="curriculum",
            tasks=names,
            count=n,
            curriculum=curriculum,
            seed=seed,
            reference=reference,
        )
    return DatasetSpec(
        split="train" if n is not None else "stream",
        tasks=names,
        count=n,
        mix=dict(mix or DEFAULT_TRAINING_MIX),
        seed=seed,
        reference=reference,
    )


def make_dataset(
    tasks: Sequence[str] | None = None,
    n: int = 100,
    *,
    mix: Mapping[str, float] | None = None,
    curriculum: tuple[float, float] | None = None,
    seed: int = 0,
    reference: ReferenceMode = "exact",
    workers: int = 1,
    environment: bool = False,
    chat: bool = True,
) -> Any:
    """A ``datasets.Dataset`` of ``n`` instances per task for GRPO training.

    ``mix`` weighs tiers (default ``{"easy": 5, "medium": 4, "hard": 1}``, the published best
    mix); ``curriculum=(start, end)`` instead ramps the difficulty knob linearly over the rows
    (keep the order with ``GRPOConfig(shuffle_dataset=False)``). Columns: a conversational
    ``prompt`` plus ``task``, ``instance``, ``reference`` and ``id``. Instances are distinct,
    come from the training seed stream and are never NP-Bench's (see :mod:`npgym.datasets`).
    With ``environment`` the prompt is only a short instruction: :class:`NPGymEnvironment`
    appends the problem.
    ``chat=False`` makes ``prompt`` plain text (the problem statement) for base models without
    a chat template; the environment needs chat rows.
    """
    if environment and not chat:
        raise ValueError("environment rows are conversational: chat=False is not supported")
    from datasets import Dataset

    spec = training_spec(tasks, n, mix=mix, curriculum=curriculum, seed=seed, reference=reference)
    rows: list[dict[str, Any]] = [
        dict(trl_row(result.record)) for result in make_rows(spec, workers=workers)
    ]
    if environment:
        rows = [{**row, "prompt": as_chat(ENVIRONMENT_INSTRUCTION)} for row in rows]
    if not chat:
        rows = [{**row, "prompt": plain_prompt(row["prompt"])} for row in rows]
    return Dataset.from_list(rows)


def plain_prompt(prompt: Any) -> str:
    """The text of a prompt for a base model: the messages' contents, or the text itself."""
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(str(message.get("content") or "") for message in prompt)


def make_iterable_dataset(
    tasks: Sequence[str] | None = None,
    *,
    mix: Mapping[str, float] | None = None,
    seed: int = 0,
    reference: ReferenceMode = "exact",
    pool: ReferencePool | None = None,
) -> Any:
    """An endless ``datasets.IterableDataset`` of fresh instances (set ``max_steps`` in TRL).

    Each row is drawn anew: a task in turn, a tier by ``mix``, a seed from the stream; nothing
    is stored, since procedural generation is the point. Every instance is new to the stream
    and none is NP-Bench's. With a ``pool`` (:class:`npgym.reference_pool.ReferencePool`,
    opt-in) references are computed ``pool.prefetch`` rows ahead in its workers; the rows are
    the same.
    """
    from datasets import IterableDataset

    spec = training_spec(tasks, None, mix=mix, seed=seed, reference=reference)

    def rows() -> Iterator[TrlRow]:
        for result in make_rows(spec, pool=pool):
            yield trl_row(result.record)

    return IterableDataset.from_generator(rows)


class VerifierTool:
    """A TRL ``environment_factory`` environment's ``submit_solution`` tool, one description for
    every such environment (TRL shows the model the method's docstring); a subclass checks the
    answer in :meth:`_check`."""

    def submit_solution(self, answer: str) -> str:
        """Check a candidate solution with the verifier.

        Args:
            answer: The solution in the answer format the problem asks for, e.g. "[0, 2, 1, 0]".

        Returns:
            The verifier's feedback: why the answer is infeasible, or its objective value and
            whether a better one is known.
        """
        return self._check(answer)

    def _check(self, answer: str) -> str:
        """The verifier's feedback on ``answer``, the tool's argument as the model gave it."""
        raise NotImplementedError


class NPGymEnvironment(VerifierTool):
    """A TRL ``environment_factory`` environment: verifier feedback as a tool, for repair.

    ``reset(**row)`` takes a dataset row (``task``, ``instance`` and optionally ``reference``
    columns) and returns the problem statement, which TRL appends to the row's user message; a
    row without an instance gets a freshly generated one (``tasks``, ``tier``). The model calls
    ``submit_solution`` to check answers, at most ``repair.max_attempts`` times; ``get_reward``
    returns the episode reward under ``repair.policy`` (``best`` by default: the best
    submission's reward), or a format failure when nothing was submitted. ``reward`` is a
    preset name (``"np-engine"``, ``"strict"``) or a :class:`~npgym.reward.RewardConfig`.
    """

    def __init__(
        self,
        repair: RepairConfig | None = None,
        reward: RewardSpec = None,
        tasks: Sequence[str] | None = None,
        tier: str = "easy",
        seed: int = 0,
    ) -> None:
        self._repair = repair or RepairConfig(max_attempts=3)
        self._weights = resolve_reward(reward)
        self._tasks = list(tasks or list_tasks())
        self._tier = tier
        self._seeds = itertools.count()
        self._seed = seed
        self._session: RepairSession | None = None

    def reset(self, **row: Any) -> str:
        """Start an episode on the row's instance (or a fresh one); return the problem text."""
        if row.get("instance"):
            task, instance, solved = load_solved_row(row)
        else:
            index = next(self._seeds)
            task = get_task(self._tasks[index % len(self._tasks)])
            instance = task.generate(derive_seed("environment", self._seed, index), tier=self._tier)
            solved = task.reference(instance)
        self._session = RepairSession(task, instance, solved, self._repair, self._weights)
        attempts = self._repair.max_attempts
        return (
            f"{task.prompt(instance)}\n\nYou can check up to {attempts} candidate answers with "
            "the submit_solution tool before giving your final answer."
        )

    def _check(self, answer: str) -> str:
        if self._session is None:
            return "No problem is loaded."
        if self._session.done:
            return "No attempts left."
        return self._session.submit(as_completion(answer)).feedback

    def get_reward(self) -> float:
        """The episode reward under the repair policy (format failure if nothing submitted)."""
        if self._session is None:
            return self._weights.format_fail + self._weights.infeasible
        return self._session.reward()
